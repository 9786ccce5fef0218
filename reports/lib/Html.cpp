#include "HtmlPage.h"
#include "Tables.h"

#include "dynqual/stats/ChangePoints.h"
#include "dynqual/stats/Descriptive.h"
#include "dynqual/store/Store.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace dynqual::reports {

namespace detail {
extern const char* const kReportTemplate;
}

using namespace detail;
using nlohmann::json;
using store::CaseRecord;
using store::RunRecord;

namespace {

/// The chart sections of the run report, filled by the template's script.
constexpr const char* kReportSections =
    "<p>A chart holds at most 12 series; a metric with more is drawn as several charts side by side, each "
    "naming its models, so every model is in one of them.</p>\n"
    "<section id=\"history\"><h3>History of each metric over commits, per machine</h3></section>\n"
    "<section id=\"distribution\"><h3>Sample distributions</h3></section>\n"
    "<section id=\"counters\"><h3>Device counters over time</h3></section>";

constexpr size_t kMaxSeries = 12; // more lines than this are unreadable in one chart

/// One series of a chart before packing: the model it belongs to, and the series itself (plus
/// its change-point marker series, which is drawn with it and not counted).
struct ModelSeries {
  std::string model;
  json series;
  json marker; ///< null when none
};

/// Small multiples: the series packed into charts of at most kMaxSeries series each, a model's
/// series kept together in one chart where they fit (a model with more than kMaxSeries series
/// gets charts of its own). Every series lands in exactly one chart; none is dropped. Returns
/// each chart's series and the models it holds, in order.
std::vector<std::pair<json, std::vector<std::string>>> packByModel(const std::vector<ModelSeries>& all) {
  std::vector<std::pair<std::string, std::vector<const ModelSeries*>>> groups;
  for (const auto& s : all) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == s.model; });
    if (it == groups.end())
      it = groups.insert(groups.end(), {s.model, {}});
    it->second.push_back(&s);
  }
  std::vector<std::pair<json, std::vector<std::string>>> charts;
  size_t inChart = kMaxSeries; // forces a first chart
  auto add = [&](const ModelSeries& s) {
    charts.back().first.push_back(s.series);
    if (!s.marker.is_null())
      charts.back().first.push_back(s.marker);
    ++inChart;
  };
  for (const auto& [model, members] : groups) {
    if (inChart + members.size() > kMaxSeries) {
      charts.push_back({json::array(), {}});
      inChart = 0;
    }
    charts.back().second.push_back(model);
    for (const ModelSeries* s : members) {
      if (inChart == kMaxSeries) { // a model larger than one chart continues in the next
        charts.push_back({json::array(), {model}});
        inChart = 0;
      }
      add(*s);
    }
  }
  return charts;
}

/// Pushes one chart per pack of `all` (packByModel): the id and title of a single chart as
/// given; several get "#K" on the id and ", chart K of N: models ..." on the title.
void pushCharts(json& charts, const std::vector<ModelSeries>& all, json base) {
  auto packs = packByModel(all);
  for (size_t k = 0; k < packs.size(); ++k) {
    json c = base;
    c["series"] = packs[k].first;
    c["models"] = packs[k].second;
    if (packs.size() > 1) {
      std::string names;
      for (const auto& m : packs[k].second)
        names += (names.empty() ? "" : ", ") + m;
      c["id"] = base["id"].get<std::string>() + "#" + std::to_string(k + 1);
      c["title"] =
          base["title"].get<std::string>() + fmt::format(", chart {} of {}: {} {}", k + 1, packs.size(),
                                                         packs[k].second.size() == 1 ? "model" : "models", names);
    }
    charts.push_back(c);
  }
}

std::string withChange(const Pair& p, int precision, bool hasBase) {
  if (!hasBase)
    return fixed(p.head, precision);
  return fixed(p.base, precision) + " → " + fixed(p.head, precision) + " (" + changePercent(p) + ")";
}

json value(double v) {
  return std::isnan(v) || std::isinf(v) ? json(nullptr) : json(v);
}

std::string runLabel(const RunRecord& r) {
  std::string rev = r.build ? r.build->revision.substr(0, 8) + (r.build->dirty ? "+" : "") : "?";
  return rev + " #" + std::to_string(r.id);
}

/// A marker series for the change points of one history series (stats::detectChangePoints at
/// its defaults, over the runs that have a value; docs/metrics/change-points.md): null except at
/// the first run after each change. Null when there is none.
json changePointMarkers(const std::string& label, const std::vector<double>& vals) {
  std::vector<double> x;
  std::vector<size_t> at;
  bool positive = true;
  for (size_t i = 0; i < vals.size(); ++i)
    if (!std::isnan(vals[i])) {
      x.push_back(vals[i]);
      at.push_back(i);
      positive = positive && vals[i] > 0;
    }
  stats::ChangePointOptions o;
  o.logScale = positive;
  if (static_cast<int>(x.size()) < 2 * o.minSegment ||
      std::any_of(x.begin(), x.end(), [](double v) { return !std::isfinite(v); }))
    return nullptr;
  std::vector<stats::ChangePoint> cps = stats::detectChangePoints(x, o);
  if (cps.empty())
    return nullptr;
  json pts = json::array();
  for (size_t i = 0; i < vals.size(); ++i)
    pts.push_back(nullptr);
  std::string what;
  for (const auto& c : cps) {
    pts[at[static_cast<size_t>(c.index)]] = value(vals[at[static_cast<size_t>(c.index)]]);
    what += fmt::format("{}{:+.1f}%", what.empty() ? "" : ", ", c.change * 100);
  }
  return {{"label", label + ": change points " + what}, {"points", pts}, {"marker", true}};
}

/// Line charts over `runs`: per name, one series per (case, machine), packed by model into charts
/// of at most kMaxSeries series (pushCharts); the value of a run is `pick(case)` (NaN when
/// absent). In the "history" section each series with change points gets a marker series after it.
void historyCharts(json& charts, const std::vector<RunRecord>& runs, const std::string& section,
                   const std::string& idPrefix, const std::string& titlePrefix, const std::vector<std::string>& names,
                   const std::function<double(const CaseRecord&, const std::string&)>& pick,
                   const std::function<std::string(const std::string&)>& yTitle) {
  json labels = json::array();
  for (const auto& r : runs)
    labels.push_back(runLabel(r));
  for (const auto& name : names) {
    // Keyed by (model, label), so a model's series sit together.
    std::map<std::pair<std::string, std::string>, std::vector<double>> series;
    for (size_t i = 0; i < runs.size(); ++i)
      for (const auto& c : runs[i].cases) {
        double v = pick(c, name);
        if (std::isnan(v))
          continue;
        std::string key = caseLabel(c) + " @ " + runs[i].machine.fingerprint.substr(0, 8);
        auto& s = series[{c.model.name, key}];
        if (s.empty())
          s.assign(runs.size(), std::nan(""));
        s[i] = v;
      }
    if (series.empty())
      continue;
    std::vector<ModelSeries> all;
    for (const auto& [key, vals] : series) {
      json pts = json::array();
      for (double v : vals)
        pts.push_back(value(v));
      all.push_back({key.first,
                     {{"label", key.second}, {"points", pts}},
                     section == "history" ? changePointMarkers(key.second, vals) : json(nullptr)});
    }
    pushCharts(charts, all,
               {{"id", idPrefix + name},
                {"section", section},
                {"kind", "line"},
                {"title", titlePrefix + name},
                {"x", "commit #run"},
                {"y", yTitle(name)},
                {"labels", labels}});
  }
}

json chartData(const ReportInput& in) {
  std::vector<RunRecord> runs = in.history;
  if (runs.empty() || runs.back().key != in.head.key)
    runs.push_back(in.head);
  std::vector<std::string> metrics, counters;
  std::map<std::string, std::string> units;
  for (const auto& r : runs)
    for (const auto& c : r.cases) {
      for (const auto& s : c.samples)
        if (units.emplace(s.metric, s.unit).second)
          metrics.push_back(s.metric);
      for (const auto& [k, v] : c.counters)
        if (std::find(counters.begin(), counters.end(), k) == counters.end())
          counters.push_back(k);
    }
  json charts = json::array();
  historyCharts(
      charts, runs, "history", "history:", "", metrics,
      [](const CaseRecord& c, const std::string& m) {
        for (const auto& s : c.samples)
          if (s.metric == m)
            return s.values.empty() ? std::nan("") : stats::median(s.values);
        return std::nan("");
      },
      [&](const std::string& m) { return "median " + m + " (" + units[m] + ")"; });
  // Distributions: every metric of the head run with more than one sample.
  for (const auto& m : metrics) {
    std::vector<ModelSeries> all;
    for (const auto& c : in.head.cases)
      for (const auto& s : c.samples)
        if (s.metric == m && s.values.size() > 1) {
          json pts = json::array();
          for (size_t rep = 0; rep < s.values.size(); ++rep)
            pts.push_back({{"x", rep}, {"y", value(s.values[rep])}});
          all.push_back({c.model.name, {{"label", caseLabel(c)}, {"points", pts}}, nullptr});
        }
    if (!all.empty())
      pushCharts(charts, all,
                 {{"id", "distribution:" + m},
                  {"section", "distribution"},
                  {"kind", "scatter"},
                  {"title", m + " samples, run " + std::to_string(in.head.id)},
                  {"x", "repetition"},
                  {"y", m + " (" + units[m] + ")"},
                  {"labels", json::array()}});
  }
  historyCharts(
      charts, runs, "counters", "counter:", "", counters,
      [](const CaseRecord& c, const std::string& k) {
        auto it = c.counters.find(k);
        return it == c.counters.end() ? std::nan("") : static_cast<double>(it->second);
      },
      [](const std::string& k) { return k; });
  return {{"charts", charts}};
}

} // namespace

std::string defaultChartJsPath() {
  return DYNQUAL_CHARTJS_PATH;
}

std::string renderHtml(const ReportInput& in, const std::string& chartJsPath) {
  std::string chartJs = inlineScript(chartJsPath);
  Tables t = buildTables(in);
  std::ostringstream body;
  body << "<h1>" << escapeHtml(t.title) << "</h1>\n";
  if (!t.warning.empty())
    body << "<p class=\"warning\">" << escapeHtml(t.warning) << "</p>\n";
  if (!t.baseNote.empty())
    body << "<p>" << escapeHtml(t.baseNote) << "</p>\n";
  body << "<p class=\"" << (t.failures || t.unfinished ? "warning" : "result") << "\"><b>" << escapeHtml(resultLine(t))
       << "</b></p>\n";

  body << "<h2>L2 Accuracy Results (EP vs CPU)</h2>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& a : t.accuracy)
    rows.push_back({a.label, std::isnan(a.l2) ? "-" : fmt::format("{:.3e}", a.l2),
                    std::isnan(a.relL2) ? "-" : fmt::format("{:.3e}", a.relL2),
                    std::isnan(a.cosine) ? "-" : fmt::format("{:.6f}", a.cosine),
                    a.measured ? std::to_string(a.elements) : "-", a.measured ? std::to_string(a.nanInf) : "-",
                    verdictText(a)});
  table(body, {"Model", "Combined L2", "Relative L2", "Cosine", "Total Elems", "Skipped NaN/Inf", "Verdict"}, rows);
  body << "<p>" << escapeHtml(t.threshold) << "</p>\n";

  body << "<h2>Performance Results</h2>\n";
  std::vector<std::string> cols = {"Model"};
  for (const auto& c : perfColumns())
    cols.push_back(c.header);
  rows.clear();
  for (const auto& p : t.performance) {
    std::vector<std::string> r = {p.label};
    for (size_t i = 0; i < p.cells.size(); ++i)
      r.push_back(withChange(p.cells[i], perfColumns()[i].precision, t.hasBase));
    rows.push_back(r);
  }
  table(body, cols, rows);

  body << "<h2>Device counters</h2>\n";
  cols = {"Model"};
  for (const auto& c : counterColumns())
    cols.push_back(c.header);
  rows.clear();
  for (const auto& c : t.counters) {
    std::vector<std::string> r = {c.label};
    for (const auto& p : c.cells) {
      std::string s = p.head ? fmt::format("{}", static_cast<int64_t>(*p.head)) : "-";
      if (t.hasBase && p.head)
        s += p.base ? fmt::format(" ({:+})", static_cast<int64_t>(*p.head - *p.base)) : " (new)";
      r.push_back(s);
    }
    rows.push_back(r);
  }
  table(body, cols, rows);

  if (!t.generation.empty()) {
    body << "<h2>Generation Results</h2>\n";
    cols = {"Model"};
    for (const auto& [h, k] : genParams())
      cols.push_back(h);
    for (const auto& c : genColumns())
      cols.push_back(c.header);
    rows.clear();
    for (const auto& g : t.generation) {
      std::vector<std::string> r = {g.label};
      r.insert(r.end(), g.params.begin(), g.params.end());
      for (size_t i = 0; i < g.cells.size(); ++i)
        r.push_back(fixed(g.cells[i], genColumns()[i].precision));
      rows.push_back(r);
    }
    table(body, cols, rows);
  }

  body << "<h2>Binary sizes</h2>\n";
  rows.clear();
  for (const auto& s : t.sizes)
    rows.push_back({s.file, fixed(s.thisMB, 3), fixed(s.baseMB, 3),
                    s.thisMB && s.baseMB ? fmt::format("{:+.3f}", *s.thisMB - *s.baseMB) : "-"});
  table(body, {"File", "This (MB)", "Base (MB)", "Delta (MB)"}, rows);

  std::ostringstream footer;
  footer << "<footer>\n";
  for (const auto& [k, v] : t.footer)
    footer << "<p><b>" << escapeHtml(k) << ":</b> " << escapeHtml(v) << "</p>\n";
  footer << "</footer>";

  return fill(kReportTemplate, {{"TITLE", escapeHtml(t.title)},
                                {"BODY", body.str()},
                                {"SECTIONS", kReportSections},
                                {"FOOTER", footer.str()},
                                {"DATA", scriptSafe(chartData(in))},
                                {"CHARTJS", chartJs}});
}

} // namespace dynqual::reports
