// The gate page: the tables of the Markdown report, then per comparison both arms' samples in
// the order they were taken (ABBA visible) with each arm's round value, and the per-round
// head/base ratio against the no-change band, with the final interval and the looks.
#include "GateText.h"
#include "HtmlPage.h"

#include "dynqual/diff/Analysis.h"
#include "dynqual/reports/GateReport.h"
#include "dynqual/reports/Report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace dynqual::reports {

namespace detail {
extern const char* const kReportTemplate;
}

using namespace detail;
using nlohmann::json;

namespace {

const char* kBaseColour = "#1f77b4";
const char* kHeadColour = "#d62728";
const char* kBandColour = "#7f7f7f";
const char* kEstimateColour = "#2ca02c";
const char* kLookColour = "#ff7f0e";

json num(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json point(double x, double y) {
  return {{"x", x}, {"y", num(y)}};
}

json series(const std::string& label, json points, const char* colour, bool line, double radius, json dash = nullptr,
            const char* style = nullptr) {
  json s = {{"label", label}, {"points", std::move(points)}, {"colour", colour}, {"line", line}, {"radius", radius}};
  if (!dash.is_null())
    s["dash"] = dash;
  if (style)
    s["style"] = style;
  return s;
}

bool isCompileMetric(const diff::MetricComparison& c) {
  return c.metric == "compile_ms" || c.metric == "compile_cpu_ms";
}

/// Both arms' samples of one comparison in the order they were taken: x = round + the sample's
/// place in that round's sequence (process interleaving: each ABBA position's samples in a row;
/// sample interleaving: the four positions repeated), so the ABBA order shows as which colour
/// comes first. The round values (what the statistics use) are lines at the middle of each round.
json samplesChart(const diff::AbResult& r, const GateContext& ctx, const diff::MetricComparison& c,
                  const std::vector<diff::Sample>& samples, const std::string& id, const std::string& section) {
  int reps = 1, positions = 4;
  for (const auto& s : samples)
    if (s.model == c.model) {
      reps = std::max(reps, s.rep + 1);
      positions = std::max(positions, s.position + 1);
    }
  const bool repMajor = ctx.measure.interleave == diff::Interleave::Sample;
  json base = json::array(), head = json::array();
  for (const auto& s : samples) {
    if (s.model != c.model)
      continue;
    int slot = repMajor ? s.rep * positions + s.position : s.position * reps + s.rep;
    double x = s.round + (slot + 0.5) / (positions * reps);
    (s.arm == "head" ? head : base).push_back(point(x, s.valueMs));
  }
  json baseRound = json::array(), headRound = json::array();
  for (const auto& [round, bh] : diff::roundValues(samples, c.model, r.roundValue)) {
    baseRound.push_back(point(round + 0.5, bh.first));
    headRound.push_back(point(round + 0.5, bh.second));
  }
  std::string value = r.roundValue == diff::RoundValue::Min ? "fastest sample" : "mean of the fastest half";
  return {{"id", id},
          {"section", section},
          {"kind", "scatter"},
          {"title", fmt::format("{} {}: every sample in the order taken (ABBA: base first in even rounds, head "
                                "first in odd); lines: each arm's round value ({})",
                                c.model, c.metric, value)},
          {"labels", json::array()},
          {"x", "round (+ place in the round's sequence)"},
          {"y", c.unit.empty() ? "ms" : c.unit},
          {"series", json::array({series("base samples", base, kBaseColour, false, 2),
                                  series("head samples", head, kHeadColour, false, 2),
                                  series("base round value", baseRound, kBaseColour, true, 0),
                                  series("head round value", headRound, kHeadColour, true, 0)})}};
}

/// The per-round ratio head/base of the round values over the rounds, the no-change band
/// [1 - margin, 1 + margin], the final Hodges-Lehmann ratio with its interval, the rounds of the
/// looks analysed and the look that closed the comparison.
json ratioChart(const diff::AbResult& r, const GateContext& ctx, const diff::MetricComparison& c,
                const std::vector<diff::Sample>& samples, const std::string& id, const std::string& section) {
  json perRound = json::array();
  double lo = 1 - ctx.policy.margin, hi = 1 + ctx.policy.margin;
  int last = 0;
  for (const auto& [round, bh] : diff::roundValues(samples, c.model, r.roundValue)) {
    double ratio = bh.second / bh.first;
    perRound.push_back(point(round, ratio));
    if (std::isfinite(ratio)) {
      lo = std::min(lo, ratio);
      hi = std::max(hi, ratio);
    }
    last = std::max(last, round);
  }
  int end = std::max(last, 1);
  auto flat = [&](double y) { return json::array({point(0, y), point(end, y)}); };
  json out =
      json::array({series("head / base per round", perRound, kHeadColour, false, 3),
                   series("1 - margin", flat(1 - ctx.policy.margin), kBandColour, true, 0, json::array({6, 4})),
                   series("1 + margin", flat(1 + ctx.policy.margin), kBandColour, true, 0, json::array({6, 4}))});
  if (std::isfinite(c.ratio))
    out.push_back(series(fmt::format("final ratio {}", gatePercent(c.ratio)), flat(c.ratio), kEstimateColour, true, 0));
  if (std::isfinite(c.ciLow) && std::isfinite(c.ciHigh) && c.ciLow > 0) {
    out.push_back(series(fmt::format("interval [{}, {}]", gatePercent(c.ciLow), gatePercent(c.ciHigh)),
                         json::array({point(0, c.ciLow), point(end, c.ciLow), point(end, c.ciHigh), point(0, c.ciHigh),
                                      point(0, c.ciLow)}),
                         kEstimateColour, true, 0, json::array({2, 3})));
    lo = std::min(lo, c.ciLow);
    hi = std::max(hi, c.ciHigh);
  }
  // Rounds are 0-based on the x axis: the look at N rounds falls after round N - 1.
  json looks = json::array();
  for (int look : ctx.policy.looks)
    if (look - 1 <= end)
      looks.push_back(point(look - 0.5, lo));
  out.push_back(series("looks", looks, kLookColour, false, 6, nullptr, "triangle"));
  if (c.decidedAtRounds > 0)
    out.push_back(series(
        fmt::format("closed at the look at {} rounds: {}", c.decidedAtRounds, stats::verdictName(c.verdict)),
        json::array({point(c.decidedAtRounds - 0.5, lo), point(c.decidedAtRounds - 0.5, hi)}), kLookColour, true, 0));
  return {{"id", id},
          {"section", section},
          {"kind", "scatter"},
          {"title", fmt::format("{} {}: head / base per round, the no-change band and the final interval ({})", c.model,
                                c.metric,
                                c.decidedAtRounds > 0 ? fmt::format("closed at {} rounds", c.decidedAtRounds)
                                                      : std::string("open after the last look"))},
          {"labels", json::array()},
          {"x", "round"},
          {"y", "head / base"},
          {"series", out}};
}

/// Every model's final ratio with its interval against the no-change band, one point per comparison.
json summaryChart(const diff::AbResult& r, const GateContext& ctx) {
  json labels = json::array(), low = json::array(), mid = json::array(), high = json::array(), lo = json::array(),
       hi = json::array();
  for (const auto& c : r.comparisons) {
    if (c.verdict == diff::Verdict::Identical) // nothing was timed
      continue;
    labels.push_back(c.model + " " + c.metric);
    low.push_back(num(c.ciLow));
    mid.push_back(num(c.ratio));
    high.push_back(num(c.ciHigh));
    lo.push_back(1 - ctx.policy.margin);
    hi.push_back(1 + ctx.policy.margin);
  }
  return {{"id", "ratios"},
          {"section", "gate-ratios"},
          {"kind", "line"},
          {"title", "head / base with its interval; between the dashed lines is no change"},
          {"labels", labels},
          {"x", "comparison"},
          {"y", "ratio"},
          {"series", json::array({series("interval low", low, kEstimateColour, false, 4, nullptr, "triangle"),
                                  series("ratio (Hodges-Lehmann)", mid, kHeadColour, false, 5),
                                  series("interval high", high, kEstimateColour, false, 4, nullptr, "triangle"),
                                  series("1 - margin", lo, kBandColour, true, 0, json::array({6, 4})),
                                  series("1 + margin", hi, kBandColour, true, 0, json::array({6, 4}))})}};
}

std::string bytesCell(uint64_t v) {
  return v ? std::to_string(v) : "-";
}

std::string deltaCell(uint64_t base, uint64_t head) {
  return base && head ? fmt::format("{:+d}", static_cast<int64_t>(head) - static_cast<int64_t>(base)) : "-";
}

} // namespace

std::string renderGateHtml(const diff::AbResult& r, const GateContext& ctx, const std::string& chartJsPath) {
  std::string chartJs = inlineScript(chartJsPath);
  std::ostringstream body;
  std::string title = "dynqual " + ctx.command + ": " + ctx.baseLabel + " vs " + ctx.headLabel;
  body << "<h1>" << escapeHtml(title) << "</h1>\n";
  int code = diff::exitCodeFor(r);
  body << "<p class=\"" << (code == diff::kPass ? "result" : "warning") << "\" id=\"verdict\"><b>"
       << escapeHtml(diff::verdictLine(r)) << "</b><br>" << escapeHtml(exitCodeMeaning(code)) << ".</p>\n";
  if (ctx.runId)
    body << "<p>Run " << ctx.runId << ": base <code>" << escapeHtml(ctx.baseLabel) << "</code>, head <code>"
         << escapeHtml(ctx.headLabel) << "</code>.</p>\n";

  body << "<h2>Timing</h2>\n";
  const std::vector<std::string> header = {
      "Model",  "Metric",    "Base",           "Head",   "Change", "Interval", "p", "Level (p < level: significant)",
      "Rounds", "Closed at", "Outlier rounds", "Verdict"};
  // The deciding comparisons, then the side metric's in a table of their own.
  std::vector<std::vector<std::string>> rows, side;
  for (const auto& c : r.comparisons) {
    auto& to = c.deciding ? rows : side;
    if (c.verdict == diff::Verdict::Identical)
      to.push_back({c.model, c.metric, "-", "-", "none", "-", "-", "-", "0", "-", "-",
                    "identical (same runtime and program bytes)"});
    else
      to.push_back({c.model, c.metric, fmt::format("{:.4g} {}", c.baseMedian, c.unit),
                    fmt::format("{:.4g} {}", c.headMedian, c.unit), gatePercent(c.ratio),
                    fmt::format("[{}, {}]", gatePercent(c.ciLow), gatePercent(c.ciHigh)), fmt::format("{:.2g}", c.p),
                    fmt::format("{:.2g}", c.alphaUsed), std::to_string(c.rounds), closedAt(c),
                    std::to_string(c.outlierRounds.size()), verdictCell(c, ctx.policy.margin)});
  }
  if (rows.empty())
    body << "<p>No model was timed.</p>\n";
  else
    table(body, header, rows);
  body << "<p>Change = Hodges-Lehmann estimate of head/base over the per-round ratios; the interval is at the "
          "comparison's level (the alpha p was compared with at the look that decided it). Looks at rounds "
       << escapeHtml(joinedInts(ctx.policy.looks)) << "; " << r.looksDone << " analysed. "
       << escapeHtml(decisionMetricSentence(r)) << "</p>\n";
  if (!side.empty()) {
    body << "<h2>Beside, not deciding</h2>\n<p>The side metric's comparisons, reported only: never in the exit code "
            "or the verdict line's counts.</p>\n";
    table(body, header, side);
  }

  body << "<h2>Accuracy</h2>\n";
  rows.clear();
  for (const auto& c : r.checks)
    rows.push_back({c.model, std::to_string(c.cases.size()), c.bitExact ? "bit-exact" : "rel-L2", worstRelL2(c, false),
                    worstRelL2(c, true), headVsBase(c), c.passed ? "pass" : "FAIL: " + c.detail});
  table(body, {"Model", "Cases", "Mode", "Base vs reference", "Head vs reference", "Head vs base", "Verdict"}, rows);

  body << "<h2>Deterministic counters that changed</h2>\n";
  rows.clear();
  for (const auto& c : r.counterChanges)
    rows.push_back(
        {c.model, c.name, std::to_string(c.base), std::to_string(c.head), fmt::format("{:+d}", c.head - c.base)});
  if (rows.empty())
    body << "<p>None: every device counter and artifact size is equal, or an arm reports none.</p>\n";
  else
    table(body, {"Model", "Counter", "Base", "Head", "Delta"}, rows);

  body << "<h2>Sizes (bytes)</h2>\n";
  rows.clear();
  for (const auto& c : r.checks)
    if (c.baseArtifactBytes || c.headArtifactBytes)
      rows.push_back({c.model + " (.dqp + .dqp.bin)", bytesCell(c.headArtifactBytes), bytesCell(c.baseArtifactBytes),
                      deltaCell(c.baseArtifactBytes, c.headArtifactBytes)});
  for (const auto& [bin, bytes] : r.binaryBytes)
    rows.push_back({bin, bytesCell(bytes.second), bytesCell(bytes.first), deltaCell(bytes.first, bytes.second)});
  if (rows.empty())
    body << "<p>No artifact sizes (runner arms).</p>\n";
  else
    table(body, {"Artifact", "This", "Base", "Delta"}, rows);

  body << "<h2>Environment</h2>\n<p>"
       << escapeHtml(fmt::format("{}; load {:.2f} -> {:.2f}; affinity {}; governor {}", r.envStart.machine,
                                 r.envStart.loadAverage1, r.envEnd.loadAverage1,
                                 r.envStart.affinity.empty() ? "?" : r.envStart.affinity,
                                 r.envStart.governor.empty() ? "unreadable" : r.envStart.governor))
       << "</p>\n";
  if (!r.envStart.gpuClocks.empty())
    body << "<p>GPU: " << escapeHtml(r.envStart.gpuClocks) << "</p>\n";
  for (const auto& e : r.infraErrors)
    body << "<p class=\"warning\">infrastructure error: " << escapeHtml(e) << "</p>\n";
  for (const auto& n : ctx.notes)
    body << "<p>" << escapeHtml(n) << "</p>\n";
  for (const auto& w : r.envWarnings)
    body << "<p class=\"warning\">warning: " << escapeHtml(w) << "</p>\n";
  for (const auto& w : r.warnings)
    body << "<p class=\"warning\">note: " << escapeHtml(w) << "</p>\n";
  for (const auto& [model, us] : r.slowdownUs)
    body << "<p>" << escapeHtml(fmt::format("injected slowdown: {} head +{:.1f} us per run", model, us)) << "</p>\n";
  if (r.budgetExhausted)
    body << "<p>The time budget ended before the next look.</p>\n";

  body << "<h2>Policy</h2>\n<p>"
       << escapeHtml(fmt::format(
              "alpha {:.3g} over the suite (Holm across the comparisons of a look, Bonferroni over the looks), margin "
              "{:.3g}%, looks at rounds {}, {} bootstrap resamples, seed {}, round value {}. {} rounds, {} looks, "
              "{:.0f} s; samples per ABBA position {}, min sample {} ms, budget {} s, {} clock, {} interleaving.",
              ctx.policy.alpha, ctx.policy.margin * 100, joinedInts(ctx.policy.looks), ctx.policy.bootstrapResamples,
              ctx.policy.seed, diff::roundValueName(ctx.policy.roundValue), r.rounds, r.looksDone, r.wallSeconds,
              ctx.measure.samplesPerPosition, ctx.measure.minSampleMs, ctx.measure.budgetSeconds,
              exec::timingClockName(r.clock), diff::interleaveName(ctx.measure.interleave)))
       << "</p>\n";
  body << "<h2 id=\"how-decided\">How this gate decided</h2>\n";
  for (const auto& p : decisionFooter(r, ctx))
    body << "<p>" << escapeHtml(p) << "</p>\n";

  json charts = json::array();
  std::ostringstream sections;
  for (size_t i = 0; i < r.comparisons.size(); ++i) {
    const auto& c = r.comparisons[i];
    if (c.verdict == diff::Verdict::Identical) // nothing was timed
      continue;
    const auto& samples = isCompileMetric(c) ? r.compileSamples : c.deciding ? r.samples : r.sideSamples;
    std::string section = "gate-comparison-" + std::to_string(i);
    sections << "<section id=\"" << section << "\"><h3>"
             << escapeHtml(c.model + " " + c.metric + ": " + stats::verdictName(c.verdict)) << "</h3></section>\n";
    charts.push_back(samplesChart(r, ctx, c, samples, "samples-" + c.model + "-" + c.metric, section));
    charts.push_back(ratioChart(r, ctx, c, samples, "rounds-" + c.model + "-" + c.metric, section));
  }
  sections << "<section id=\"gate-ratios\"><h3>Every comparison's ratio and interval</h3></section>";
  charts.push_back(summaryChart(r, ctx));
  std::string footer = fmt::format("<footer><p>{} rounds, {} looks, alpha {}, margin {}%.{}</p></footer>", r.rounds,
                                   r.looksDone, ctx.policy.alpha, ctx.policy.margin * 100,
                                   ctx.runId ? fmt::format(" Stored as run {}.", ctx.runId) : std::string());
  return fill(kReportTemplate, {{"TITLE", escapeHtml(title)},
                                {"BODY", body.str()},
                                {"SECTIONS", sections.str()},
                                {"FOOTER", footer},
                                {"DATA", scriptSafe(json{{"charts", charts}})},
                                {"CHARTJS", chartJs}});
}

} // namespace dynqual::reports
