// The gate page: per model the two arms' samples side by side over the rounds, and each model's
// ratio with its interval against the no-change band.
#include "HtmlPage.h"

#include "dynqual/reports/GateReport.h"
#include "dynqual/reports/Report.h"

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <sstream>

namespace dynqual::reports {

namespace detail {
extern const char* const kReportTemplate;
}

using namespace detail;
using nlohmann::json;

namespace {

json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json charts(const diff::AbResult& r, const GateContext& ctx) {
  json out = json::array();
  std::vector<std::string> models;
  for (const auto& c : r.comparisons)
    if (c.verdict != diff::Verdict::Identical)  // nothing was timed
      models.push_back(c.model);
  for (const auto& model : models) {
    int rounds = 0;
    for (const auto& s : r.samples)
      if (s.model == model)
        rounds = std::max(rounds, s.round + 1);
    json labels = json::array();
    for (int i = 0; i < rounds; ++i)
      labels.push_back(i);
    json series = json::array();
    for (const char* arm : {"base", "head"}) {
      json points = json::array();
      for (const auto& s : r.samples)
        if (s.model == model && s.arm == arm)
          points.push_back({{"x", s.round + (std::string(arm) == "head" ? 0.3 : 0.0)}, {"y", num(s.valueMs)}});
      series.push_back({{"label", std::string(arm) + " samples"}, {"points", points}});
    }
    out.push_back({{"id", "samples-" + model}, {"section", "gate-samples"}, {"kind", "scatter"},
                   {"title", model + ": latency samples by round"}, {"labels", labels}, {"x", "round"},
                   {"y", "ms per run"}, {"series", series}});
  }
  json low = json::array(), mid = json::array(), high = json::array(), lo = json::array(), hi = json::array();
  for (const auto& c : r.comparisons) {
    if (c.verdict == diff::Verdict::Identical)
      continue;
    low.push_back(num(c.ciLow));
    mid.push_back(num(c.ratio));
    high.push_back(num(c.ciHigh));
    lo.push_back(1 - ctx.policy.margin);
    hi.push_back(1 + ctx.policy.margin);
  }
  out.push_back({{"id", "ratios"}, {"section", "gate-ratios"}, {"kind", "line"},
                 {"title", "head / base with its interval; the band is no change"}, {"labels", models},
                 {"x", "model"}, {"y", "ratio"},
                 {"series", json::array({{{"label", "interval low"}, {"points", low}},
                                         {{"label", "ratio (Hodges-Lehmann)"}, {"points", mid}},
                                         {{"label", "interval high"}, {"points", high}},
                                         {{"label", "1 - margin"}, {"points", lo}},
                                         {{"label", "1 + margin"}, {"points", hi}}})}});
  return {{"charts", out}};
}

} // namespace

std::string renderGateHtml(const diff::AbResult& r, const GateContext& ctx, const std::string& chartJsPath) {
  std::string chartJs = inlineScript(chartJsPath);
  std::ostringstream body;
  std::string title = "dynqual " + ctx.command + ": " + ctx.baseLabel + " vs " + ctx.headLabel;
  body << "<h1>" << escapeHtml(title) << "</h1>\n";
  int code = diff::exitCodeFor(r);
  body << "<p class=\"" << (code == diff::kPass ? "result" : "warning") << "\"><b>" << escapeHtml(diff::verdictLine(r))
       << "</b></p>\n";
  body << "<h2>Timing</h2>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : r.comparisons)
    if (c.verdict == diff::Verdict::Identical)
      rows.push_back({c.model, "-", "-", "none", "-", "-", "-", "0", "0", "identical (same runtime and program bytes)"});
    else
      rows.push_back({c.model, fmt::format("{:.4g}", c.baseMedian), fmt::format("{:.4g}", c.headMedian),
                    fmt::format("{:+.2f}%", (c.ratio - 1) * 100),
                    fmt::format("[{:.4f}, {:.4f}]", c.ciLow, c.ciHigh), fmt::format("{:.2g}", c.p),
                    fmt::format("{:.2g}", c.pAdjusted), std::to_string(c.rounds),
                    std::to_string(c.outlierRounds.size()), stats::verdictName(c.verdict)});
  table(body, {"Model", "Base (ms)", "Head (ms)", "Change", "Ratio CI", "p", "p (Holm)", "Rounds", "Outlier rounds",
               "Verdict"},
        rows);
  body << "<h2>Accuracy</h2>\n";
  rows.clear();
  for (const auto& c : r.checks)
    rows.push_back({c.model, std::to_string(c.cases.size()), c.bitExact ? "bit-exact" : "rel-L2",
                    c.passed ? "pass" : "FAIL: " + c.detail});
  table(body, {"Model", "Cases", "Mode", "Verdict"}, rows);
  body << "<h2>Deterministic counters that changed</h2>\n";
  rows.clear();
  for (const auto& c : r.counterChanges)
    rows.push_back({c.model, c.name, std::to_string(c.base), std::to_string(c.head),
                    fmt::format("{:+d}", c.head - c.base)});
  if (rows.empty())
    body << "<p>None: every device counter and artifact size is equal, or an arm reports none.</p>\n";
  else
    table(body, {"Model", "Counter", "Base", "Head", "Delta"}, rows);
  for (const auto& n : ctx.notes)
    body << "<p>" << escapeHtml(n) << "</p>\n";
  for (const auto& w : r.envWarnings)
    body << "<p class=\"warning\">" << escapeHtml(w) << "</p>\n";
  std::string sections = "<section id=\"gate-samples\"><h3>Samples of both arms by round</h3></section>\n"
                         "<section id=\"gate-ratios\"><h3>Ratios and intervals</h3></section>";
  std::string footer = fmt::format("<footer><p>{} rounds, {} looks, alpha {}, margin {}%.</p></footer>", r.rounds,
                                   r.looksDone, ctx.policy.alpha, ctx.policy.margin * 100);
  return fill(kReportTemplate, {{"TITLE", escapeHtml(title)},
                                {"BODY", body.str()},
                                {"SECTIONS", sections},
                                {"FOOTER", footer},
                                {"DATA", scriptSafe(charts(r, ctx))},
                                {"CHARTJS", chartJs}});
}

} // namespace dynqual::reports
