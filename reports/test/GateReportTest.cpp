// The A/B renderers on a result built by hand: the Markdown verdict line and tables, JUnit's
// failure / skipped / error mapping, the JSON fields, and the HTML gate page opened in headless
// Chromium (its charts hold both arms' samples and every model's ratio).
#include "dynqual/reports/GateReport.h"
#include "dynqual/reports/Report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace dynqual;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

diff::AbResult sample() {
  diff::AbResult r;
  diff::ModelCheck ok, bad;
  ok.model = "fast";
  ok.passed = true;
  ok.baseArtifactBytes = 100;
  ok.headArtifactBytes = 120;
  bad.model = "broken";
  bad.passed = false;
  bad.detail = "test_data_set_0: head vs reference: rel-L2 1e-2 > 1e-05";
  r.checks = {ok, bad};
  diff::MetricComparison slow;
  slow.model = "fast";
  slow.metric = "latency_ms";
  slow.unit = "ms";
  slow.rounds = 12;
  slow.ratio = 1.10;
  slow.ciLow = 1.07;
  slow.ciHigh = 1.13;
  slow.p = 0.0005;
  slow.pAdjusted = 0.001;
  slow.alphaUsed = 0.0041667; // 0.05 over 6 looks, Holm's first of 2: 0.05 / 6 / 2
  slow.verdict = diff::Verdict::Regression;
  diff::MetricComparison open = slow;
  open.model = "other";
  open.ratio = 1.01;
  open.ciLow = 0.97;
  open.ciHigh = 1.05;
  open.verdict = diff::Verdict::Inconclusive;
  r.comparisons = {slow, open};
  r.counterChanges = {{"fast", "kernel_launches", 10, 12}};
  for (int round = 0; round < 12; ++round)
    for (const char* arm : {"base", "head"})
      for (const char* model : {"fast", "other"})
        r.samples.push_back({model, arm, round, 0, 0, std::string(arm) == "head" ? 1.1 : 1.0, 1});
  r.rounds = 12;
  r.looksDone = 1;
  return r;
}

reports::GateContext context() {
  reports::GateContext c;
  c.command = "ab";
  c.baseLabel = "dq:production@sim";
  c.headLabel = "dq:custom@sim";
  return c;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST(GateMarkdown, VerdictLineTablesAndMarker) {
  std::string md = reports::renderGateMarkdown(sample(), context());
  EXPECT_EQ(md.rfind(reports::kGateStickyMarker, 0), 0u);
  EXPECT_NE(md.find("**dynqual ab: FAIL:"), std::string::npos) << md;
  EXPECT_NE(md.find("regression: fast latency\\_ms +10.0%"), std::string::npos) << md;
  EXPECT_NE(md.find("accuracy failure: broken"), std::string::npos) << md;
  EXPECT_NE(md.find("| fast | kernel\\_launches | 10 | 12 | +2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| fast | .dqp + .dqp.bin | 120 | 100 | +20 |"), std::string::npos) << md;
}

TEST(GateMarkdown, ShowsTheLevelEachPIsComparedWith) {
  // A comparison is significant when its raw p is below its own level (its share of alpha after
  // the look split and Holm), not below the suite's alpha 0.05: the row shows that level.
  std::string md = reports::renderGateMarkdown(sample(), context());
  EXPECT_NE(md.find("| 0.0005 | 0.0042 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("p (Holm)"), std::string::npos) << md;
}

TEST(GateJunit, RegressionFailsInconclusiveSkipsInfrastructureErrors) {
  diff::AbResult r = sample();
  r.infraErrors.push_back("head ort:cpu: onnxruntime-node is not installed");
  std::string xml = reports::renderGateJunit(r, context());
  EXPECT_NE(xml.find("tests=\"5\" failures=\"2\" errors=\"1\" skipped=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure message=\"regression: ratio 1.1000"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<skipped message=\"inconclusive"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<error message=\"head ort:cpu"), std::string::npos) << xml;
}

TEST(GateJson, CarriesVerdictsSamplesAndExitCode) {
  json j = reports::renderGateJson(sample(), context());
  EXPECT_EQ(j["format"], "dynqual-ab");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["comparisons"].size(), 2u);
  EXPECT_EQ(j["comparisons"][0]["verdict"], "regression");
  EXPECT_EQ(j["samples"].size(), 48u);
  EXPECT_EQ(j["counter_changes"][0]["head"], 12);
}

TEST(GateHtml, ChartsHoldBothArmsAndEveryRatio) {
  std::string chartJs = reports::defaultChartJsPath();
  if (!fs::exists(chartJs))
    GTEST_SKIP() << chartJs << " missing (libjs-chart.js)";
  std::string html = reports::renderGateHtml(sample(), context(), chartJs);
  EXPECT_NE(html.find("gate-comparison-0"), std::string::npos);
  EXPECT_EQ(html.find("@@"), std::string::npos) << "unfilled placeholder";
  const char* chromium = fs::exists("/usr/bin/chromium") ? "/usr/bin/chromium" : nullptr;
  if (!chromium)
    GTEST_SKIP() << "no /usr/bin/chromium (scripts/setup installs it)";
  fs::path work = fs::temp_directory_path() / ("gate-html-" + std::to_string(getpid()));
  fs::create_directories(work);
  std::ofstream(work / "gate.html") << html;
  std::string cmd = std::string("timeout 120 ") + chromium +
                    " --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir='" +
                    (work / "profile").string() + "' --dump-dom 'file://" + (work / "gate.html").string() + "' >'" +
                    (work / "dom.html").string() + "' 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::string dom = slurp(work / "dom.html");
  auto a = dom.find("<pre id=\"chart-state\">"), b = dom.find("</pre>", a);
  ASSERT_NE(a, std::string::npos);
  std::string text = dom.substr(a + 22, b - a - 22);
  for (auto [from, to] : {std::pair{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}})
    for (size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + 1))
      text.replace(p, std::string(from).size(), to);
  json state = json::parse(text);
  // Per comparison a samples chart and a per-round ratio chart, then the summary of every ratio.
  ASSERT_EQ(state["charts"].size(), 5u);
  const json& samples = state["charts"][0];
  EXPECT_EQ(samples["id"], "samples-fast-latency_ms");
  ASSERT_EQ(samples["datasets"].size(), 4u); // base and head samples, base and head round values
  EXPECT_EQ(samples["datasets"][0]["data"].size(), 12u);
  EXPECT_EQ(samples["datasets"][3]["data"].size(), 12u);
  // One sample per position at position 0: x = round + (0 + 0.5) / 4.
  EXPECT_DOUBLE_EQ(samples["datasets"][1]["data"][3]["x"].get<double>(), 3.125);
  EXPECT_DOUBLE_EQ(samples["datasets"][1]["data"][3]["y"].get<double>(), 1.1);
  const json& rounds = state["charts"][1];
  EXPECT_EQ(rounds["id"], "rounds-fast-latency_ms");
  ASSERT_EQ(rounds["datasets"][0]["data"].size(), 12u); // head / base = 1.1 / 1.0 in every round
  EXPECT_DOUBLE_EQ(rounds["datasets"][0]["data"][5]["y"].get<double>(), 1.1);
  EXPECT_DOUBLE_EQ(rounds["datasets"][1]["data"][0]["y"].get<double>(), 0.98); // 1 - margin 0.02
  EXPECT_EQ(state["charts"][4]["id"], "ratios");
  EXPECT_DOUBLE_EQ(state["charts"][4]["datasets"][1]["data"][0].get<double>(), 1.10);
  EXPECT_TRUE(state["resources"].empty()) << "the page fetched something";
  fs::remove_all(work);
}

// An untimed identical model: its own verdict, a pass in every format, no samples, no chart.
TEST(GateReports, IdenticalIsAPassingVerdictOfItsOwnInEveryFormat) {
  diff::AbResult r;
  diff::ModelCheck ok;
  ok.model = "same";
  ok.passed = true;
  ok.baseProgramSha256 = ok.headProgramSha256 = std::string(64, 'a');
  r.checks = {ok};
  diff::MetricComparison c;
  c.model = "same";
  c.metric = "cpu_time_ms";
  c.unit = "ms";
  c.rounds = 0;
  c.baseMedian = c.headMedian = std::nan("");
  c.verdict = diff::Verdict::Identical;
  r.comparisons = {c};
  r.runtimeSha256["dynqual-exec"] = {std::string(64, 'b'), std::string(64, 'b')};
  reports::GateContext ctx = context();
  ctx.notes = {"head HEAD (0123456789ab): built in 12.0 s, ccache 299/300 compiles hit (99.7 %)"};
  EXPECT_EQ(diff::exitCodeFor(r), diff::kPass);
  EXPECT_NE(diff::verdictLine(r).find("PASS: 1 models, 1 comparisons"), std::string::npos) << diff::verdictLine(r);
  EXPECT_NE(diff::verdictLine(r).find("1 identical"), std::string::npos) << diff::verdictLine(r);

  std::string md = reports::renderGateMarkdown(r, ctx);
  EXPECT_NE(md.find("| same | cpu\\_time\\_ms | - | - | none | - | - | - | - | 0 | - | - | identical |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| dynqual-exec | bbbbbbbbbbbb | bbbbbbbbbbbb | yes |"), std::string::npos) << md;
  EXPECT_NE(md.find("| same program | aaaaaaaaaaaa | aaaaaaaaaaaa | yes |"), std::string::npos) << md;
  EXPECT_NE(md.find("ccache 299/300 compiles hit (99.7 %)"), std::string::npos) << md;

  std::string ju = reports::renderGateJunit(r, ctx);
  EXPECT_NE(ju.find("tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"0\""), std::string::npos) << ju;
  EXPECT_NE(ju.find("<system-out>identical:"), std::string::npos) << ju;

  json js = reports::renderGateJson(r, ctx);
  EXPECT_EQ(js["comparisons"][0]["verdict"], "identical");
  EXPECT_TRUE(js["comparisons"][0]["base_median"].is_null());
  EXPECT_EQ(js["runtime_sha256"]["dynqual-exec"]["head"], std::string(64, 'b'));
  EXPECT_EQ(js["accuracy"][0]["head_program_sha256"], std::string(64, 'a'));
  EXPECT_EQ(js["builds"][0], ctx.notes[0]);

  std::string chartJs = reports::defaultChartJsPath();
  if (!fs::exists(chartJs))
    GTEST_SKIP() << chartJs << " missing (libjs-chart.js)";
  std::string html = reports::renderGateHtml(r, ctx, chartJs);
  EXPECT_NE(html.find("identical (same runtime and program bytes)"), std::string::npos);
  EXPECT_EQ(html.find("samples-same"), std::string::npos); // nothing was timed: no sample chart
}
