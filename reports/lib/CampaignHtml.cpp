// The campaign report as one self-contained HTML page (CampaignReport.h): the Markdown's sections
// as tables plus Chart.js charts, drawn by the same script pattern as the run report.
#include "CampaignTables.h"
#include "HtmlPage.h"
#include "dynqual/reports/CampaignReport.h"
#include "dynqual/reports/Report.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

namespace dynqual::reports {

using nlohmann::json;

namespace {

const char* kTemplate = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>@@TITLE@@</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #1d1d1f; background: #ffffff; max-width: 1300px; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #c8c8d0; padding: 0.25em 0.6em; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #eef0f6; }
.result-fail { background: #f8d7da; padding: 0.5em; font-weight: bold; }
.result-pass { background: #d1e7dd; padding: 0.5em; font-weight: bold; }
.warning { background: #fff3cd; padding: 0.5em; }
.bucket { border: 1px solid #c8c8d0; border-left: 6px solid #888; padding: 0.4em 0.8em; margin: 0.6em 0; }
.bucket.new { border-left-color: #d62728; }
.bucket.known { border-left-color: #ff7f0e; }
.bucket.fixed { border-left-color: #2ca02c; }
.status { font-weight: bold; text-transform: uppercase; font-size: 0.85em; }
pre { background: #f5f5f7; padding: 0.5em; overflow-x: auto; }
code { background: #f5f5f7; padding: 0 0.2em; }
.chart { display: inline-block; margin: 0 1em 1em 0; vertical-align: top; }
.chart h4 { margin: 0.2em 0; }
footer { border-top: 1px solid #c8c8d0; margin-top: 2em; font-size: 0.9em; }
#chart-state { display: none; }
</style>
</head>
<body>
@@BODY@@
<pre id="chart-state"></pre>
<script type="application/json" id="report-data">@@DATA@@</script>
<script>@@CHARTJS@@</script>
<script>
(function () {
  var palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var made = [];
  data.charts.forEach(function (c) {
    var box = document.createElement('div');
    box.className = 'chart';
    var title = document.createElement('h4');
    title.textContent = c.title;
    box.appendChild(title);
    var canvas = document.createElement('canvas');
    canvas.width = 600;
    canvas.height = 260;
    box.appendChild(canvas);
    document.getElementById(c.section).appendChild(box);
    var datasets = c.series.map(function (s, i) {
      var colour = palette[i % palette.length];
      return { label: s.label, data: s.points, borderColor: colour, backgroundColor: colour,
               yAxisID: s.axis || 'y' };
    });
    var scales = { x: { title: { display: true, text: c.x } }, y: { title: { display: true, text: c.y }, beginAtZero: true } };
    if (c.y2) scales.y2 = { position: 'right', title: { display: true, text: c.y2 }, beginAtZero: true,
                            grid: { drawOnChartArea: false } };
    var chart = new Chart(canvas, { type: c.kind, data: { labels: c.labels, datasets: datasets },
                                    options: { animation: false, responsive: false, scales: scales } });
    made.push({ id: c.id, chart: chart });
  });
  document.getElementById('chart-state').textContent = JSON.stringify({
    charts: made.map(function (m) {
      return { id: m.id, labels: m.chart.data.labels,
               datasets: m.chart.data.datasets.map(function (d) { return { label: d.label, data: d.data }; }) };
    }),
    resources: performance.getEntriesByType('resource').map(function (e) { return e.name; })
  });
})();
</script>
</body>
</html>
)html";

std::string h(const std::string& s) {
  return escapeHtml(s);
}

} // namespace

std::string renderCampaignHtml(const CampaignReportInput& in, const std::string& chartJsPath) {
  auto n = detail::campaignNumbers(in);
  std::ostringstream b;
  b << "<h1>Fuzz campaign, night " << h(in.night) << "</h1>\n";
  b << "<p class=\"" << (detail::campaignFailed(n, in.qualify) ? "result-fail" : "result-pass") << "\">"
    << h(detail::resultLine(n, in.qualify)) << "</p>\n";
  if (n.unfinished > 0)
    b << "<p class=\"warning\">" << n.unfinished << " of " << n.shards
      << " shard(s) unfinished (killed or still running): their committed cases are counted; rerun them with "
         "<code>--resume</code>.</p>\n";
  b << "<h2 id=\"qualify\">Qualify</h2>\n<p" << (in.qualify && in.qualify->failing() ? " class=\"result-fail\"" : "")
    << ">" << h(detail::qualifySummary(in.qualify)) << "</p>\n";
  if (in.qualify && !in.qualify->failures.empty()) {
    b << "<table><tr><th>Model</th><th>Status</th><th>Failure</th></tr>\n";
    for (const auto& f : in.qualify->failures)
      b << "<tr><td>" << h(f.model) << "</td><td>" << h(f.status) << "</td><td>" << h(f.error) << "</td></tr>\n";
    b << "</table>\n<p>The rows of every model: <code>dynqual report " << in.qualify->runId << " --db DB</code>.</p>\n";
  }
  b << "<h2>Buckets</h2>\n";
  if (in.buckets.empty())
    b << "<p>No bucket: no finding in the store.</p>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& x : in.buckets)
    rows.push_back({x.bucket.substr(0, 12), x.status, x.symptom, x.origin, x.pass, std::to_string(x.hitsTonight),
                    std::to_string(x.hits), std::to_string(x.signatures), std::to_string(x.nodes)});
  if (!rows.empty()) {
    b << "<table><tr>";
    for (const char* c :
         {"Bucket", "Status", "Symptom", "Origin op", "Pass", "Hits tonight", "Hits", "Signatures", "Smallest (nodes)"})
      b << "<th>" << c << "</th>";
    b << "</tr>\n";
    for (const auto& r : rows) {
      b << "<tr>";
      for (size_t i = 0; i < r.size(); ++i)
        b << detail::cell(r[i], i >= 5);
      b << "</tr>\n";
    }
    b << "</table>\n";
  }
  for (const auto& x : in.buckets) {
    b << "<div class=\"bucket " << h(x.status) << "\"><span class=\"status\">" << h(x.status) << "</span> <code>"
      << h(x.bucket.substr(0, 12)) << "</code> " << h(x.symptom) << " in <b>" << h(x.origin) << "</b> (" << h(x.pass)
      << ")\n<ul>\n";
    b << "<li>Message: <code>" << h(x.message) << "</code></li>\n";
    b << "<li>Reproduce: <code>" << h(x.reproducer) << "</code></li>\n";
    b << "<li>First seen " << h(x.firstSeen) << " (night " << h(x.firstNight) << ", commit "
      << h(x.firstRevision.substr(0, 12)) << "), last seen " << h(x.lastSeen) << "; smallest: seed " << x.seed << ", "
      << x.nodes << " nodes on " << h(x.binding.empty() ? "-" : x.binding) << "</li>\n";
    b << "<li>Keep it: <code>dynqual corpus add --bucket " << h(x.bucket.substr(0, 12)) << " --db DB</code>"
      << (x.corpusCase.empty() ? "" : " (corpus case " + h(x.corpusCase) + ")") << "</li>\n</ul>\n";
    if (!x.graph.empty() && x.status != "fixed")
      b << "<pre>" << h(x.graph) << "</pre>\n";
    b << "</div>\n";
  }
  b << "<h2>Campaign</h2>\n";
  detail::table(b,
                {"Shards", "Unfinished", "Cases", "Valid", "Valid rate", "Cases/s per shard", "Shard wall (s)",
                 "Findings", "Median nodes", "p10", "p90", "Max"},
                {{std::to_string(n.shards), std::to_string(n.unfinished), std::to_string(n.cases),
                  std::to_string(n.valid), fmt::format("{:.2f} %", n.cases ? 100.0 * n.valid / n.cases : 0.0),
                  fmt::format("{:.2f}", n.wallSeconds > 0 ? n.cases / n.wallSeconds : 0.0),
                  fmt::format("{:.1f}", n.wallSeconds), std::to_string(n.findings), std::to_string(n.median),
                  std::to_string(n.p10), std::to_string(n.p90), std::to_string(n.maxNodes)}});
  std::vector<std::vector<std::string>> shardRows;
  for (const auto& s : in.shards)
    shardRows.push_back({s.campaign, std::to_string(s.cases), std::to_string(s.valid), std::to_string(s.findings),
                         fmt::format("{:.1f}", s.wallSeconds), s.endedAt.empty() ? "unfinished" : s.endedAt});
  detail::table(b, {"Shard", "Cases", "Valid", "Findings", "Wall (s)", "Finished"}, shardRows);
  b << "<div id=\"charts-campaign\"></div>\n";
  std::vector<std::pair<std::string, int64_t>> ops(n.ops.begin(), n.ops.end());
  std::sort(ops.begin(), ops.end(),
            [](auto& a, auto& c) { return a.second != c.second ? a.second > c.second : a.first < c.first; });
  b << "<h3>Op-kind coverage (nodes in valid cases)</h3>\n";
  std::vector<std::vector<std::string>> opRows;
  for (const auto& [op, k] : ops)
    opRows.push_back({op, std::to_string(k)});
  detail::table(b, {"Op", "Nodes"}, opRows);
  b << "<h3>Feature coverage (valid cases that exercised each feature, of " << n.featureValid << ")</h3>\n";
  std::vector<std::vector<std::string>> featureRows;
  for (const auto& [key, k] : n.features) {
    auto bar = key.find('|');
    featureRows.push_back({key.substr(0, bar), bar == std::string::npos ? "" : key.substr(bar + 1), std::to_string(k),
                           fmt::format("{:.1f}", n.featureValid ? 100.0 * k / n.featureValid : 0.0)});
  }
  detail::table(b, {"Op", "Feature", "Valid cases", "% of valid"}, featureRows);
  b << "<h2>History</h2>\n<div id=\"charts-history\"></div>\n";
  b << "<footer>dynqual " << h(in.dynqualVersion) << ", commit "
    << h(in.shards.empty() ? "unknown" : in.shards.back().revision.substr(0, 12)) << "</footer>\n";

  json charts = json::array();
  json labels = json::array(), cases = json::array(), hit = json::array(), fresh = json::array();
  for (const auto& x : in.history) {
    labels.push_back(x.night);
    cases.push_back(x.cases);
    hit.push_back(x.buckets);
    fresh.push_back(x.newBuckets);
  }
  charts.push_back({{"id", "history"},
                    {"section", "charts-history"},
                    {"title", "Cases and buckets per night"},
                    {"kind", "line"},
                    {"x", "night"},
                    {"y", "cases"},
                    {"y2", "buckets"},
                    {"labels", labels},
                    {"series", json::array({{{"label", "cases"}, {"points", cases}},
                                            {{"label", "buckets hit"}, {"points", hit}, {"axis", "y2"}},
                                            {{"label", "new buckets"}, {"points", fresh}, {"axis", "y2"}}})}});
  json sl = json::array(), sc = json::array();
  for (const auto& [bin, k] : detail::sizeHistogram(in.sizes)) {
    sl.push_back(bin);
    sc.push_back(k);
  }
  charts.push_back({{"id", "sizes"},
                    {"section", "charts-campaign"},
                    {"title", "Graph size (valid cases)"},
                    {"kind", "bar"},
                    {"x", "nodes"},
                    {"y", "cases"},
                    {"labels", sl},
                    {"series", json::array({{{"label", "cases"}, {"points", sc}}})}});
  json pl = json::array(), pv = json::array();
  for (const char* k : detail::kPhases) {
    pl.push_back(k);
    pv.push_back(n.ms.count(k) ? n.ms.at(k) : 0.0);
  }
  charts.push_back({{"id", "time"},
                    {"section", "charts-campaign"},
                    {"title", "Time split (ms summed over cases)"},
                    {"kind", "bar"},
                    {"x", "phase"},
                    {"y", "ms"},
                    {"labels", pl},
                    {"series", json::array({{{"label", "ms"}, {"points", pv}}})}});
  return detail::fill(kTemplate, {{"TITLE", h("dynqual fuzz campaign " + in.night)},
                                  {"BODY", b.str()},
                                  {"DATA", detail::scriptSafe(json{{"charts", charts}})},
                                  {"CHARTJS", detail::inlineScript(chartJsPath)}});
}

} // namespace dynqual::reports
