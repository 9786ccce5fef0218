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

namespace {

// The gate of issue 29's fused-elementwise cap: decided on the modelled device time after one
// round, kv_decoder +5.00 % exact, tiny_bert +1.40 % exact, two models identical, and the
// measured cpu_time_ms of the two timed models beside it (kv_decoder -1.71 %, head faster).
diff::AbResult modelledGate() {
  diff::AbResult r;
  r.metric = diff::DecisionMetric::ModelledDeviceTime;
  r.clock = exec::TimingClock::ThreadCpu;
  for (const char* m : {"kv_decoder", "tiny_bert", "shape_ops", "decoder_tiny"}) {
    diff::ModelCheck c;
    c.model = m;
    c.passed = true;
    r.checks.push_back(c);
  }
  auto exact = [](const char* model, double base, double ratio, diff::Verdict v) {
    diff::MetricComparison c;
    c.model = model;
    c.metric = diff::kModelledDeviceMetric;
    c.unit = "ms";
    c.rounds = c.decidedAtRounds = 1;
    c.baseMedian = base;
    c.headMedian = base * ratio;
    c.ratio = c.ciLow = c.ciHigh = c.eqLow = c.eqHigh = ratio;
    c.p = c.pAdjusted = 0;
    c.exact = true;
    c.verdict = v;
    return c;
  };
  auto identical = [](const char* model) {
    diff::MetricComparison c;
    c.model = model;
    c.metric = diff::kModelledDeviceMetric;
    c.verdict = diff::Verdict::Identical;
    return c;
  };
  auto side = [](const char* model, double ratio) {
    diff::MetricComparison c;
    c.model = model;
    c.metric = "cpu_time_ms";
    c.unit = "ms";
    c.rounds = 1;
    c.baseMedian = 1;
    c.headMedian = ratio;
    c.ratio = ratio;
    c.ciLow = 0.9;
    c.ciHigh = 1.1;
    c.p = 1;
    c.deciding = false;
    c.verdict = diff::Verdict::Inconclusive;
    return c;
  };
  // 1.050 is beyond the margin 1.02, 1.014 within it (stats::classify; ratio - 1 = +1.40 %).
  r.comparisons = {exact("kv_decoder", 0.7974, 1.050, diff::Verdict::Regression),
                   exact("tiny_bert", 0.7158, 1.014, diff::Verdict::NoChange),
                   identical("shape_ops"),
                   identical("decoder_tiny"),
                   side("kv_decoder", 1 - 0.0171),
                   side("tiny_bert", 1.003)};
  r.rounds = 1;
  r.looksDone = 1;
  return r;
}

reports::GateContext modelledContext() {
  reports::GateContext c = context();
  c.command = "gate";
  c.policy.looks = {1, 12, 16, 24}; // resolveDecisionMetric puts the exact look 1 first
  c.policy.margin = 0.02;
  c.measure.metric = diff::DecisionMetric::ModelledDeviceTime;
  c.runId = 7;
  c.dbPath = "/work/gate-out/dynqual.db";
  return c;
}

std::string section(const std::string& md, const std::string& heading) {
  auto a = md.find(heading);
  if (a == std::string::npos)
    return "";
  auto b = md.find("\n### ", a + heading.size());
  return md.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

long tableRows(const std::string& text) {
  long rows = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    rows += line.rfind("| ", 0) == 0 ? 1 : 0;
  return rows > 0 ? rows - 1 : 0; // the header row; the |---| line does not start with "| "
}

} // namespace

// Before: the footer was the fixed ci/gate-stats.md, quoting the thread-CPU test's rates ("looks
// 12...128") under a gate that decided on modelled_device_ms in one round; tiny_bert's exact +1.40 %
// read "no-change (exact)"; the headline counted 4 comparisons above a table of 6 rows.
TEST(GateMarkdown, AGateDecidedOnTheModelledTimeSaysSoInItsFooter) {
  std::string md = reports::renderGateMarkdown(modelledGate(), modelledContext());
  std::string footer = section(md, "### How this gate decided");
  ASSERT_FALSE(footer.empty()) << md;
  EXPECT_NE(footer.find("Decided on modelled\\_device\\_ms"), std::string::npos) << footer;
  EXPECT_NE(footer.find("an exact metric"), std::string::npos) << footer;
  EXPECT_NE(footer.find("docs/metrics/modelled-device-time.md"), std::string::npos) << footer;
  // Its policy: both timed comparisons exact, over the first look (1 round), against the margin.
  EXPECT_NE(footer.find("2 of 2 timed comparisons had one value per arm in every sample of the first look's 1 "
                        "round and were decided by the exact ratio head/base against the ±2 % margin"),
            std::string::npos)
      << footer;
  EXPECT_NE(footer.find("This run took 1 round (1 look"), std::string::npos) << footer;
  EXPECT_EQ(footer.find("Wilcoxon"), std::string::npos) << "the measured test did not decide: " << footer;
  EXPECT_EQ(md.find("looks 12"), std::string::npos) << md;

  // The measured CPU time beside it, and why it is not what decided.
  std::string side = section(md, "### Beside, not deciding: cpu\\_time\\_ms");
  ASSERT_FALSE(side.empty()) << md;
  EXPECT_EQ(tableRows(side), 2) << side;
  EXPECT_NE(side.find("| kv\\_decoder | cpu\\_time\\_ms |"), std::string::npos) << side;
  EXPECT_NE(side.find("The measured cpu\\_time\\_ms is not what decided, and the two can disagree"), std::string::npos)
      << side;

  // The headline's count is the Timing table's rows: 2 exact + 2 identical.
  EXPECT_NE(md.find("4 comparisons (1 no change, 0 improvement, 1 regression, 0 inconclusive)"), std::string::npos)
      << md;
  EXPECT_EQ(tableRows(section(md, "### Timing")), 4) << md;

  // An exact change under the margin is a real change: its size, and that it is within the margin.
  EXPECT_NE(md.find("| +1.40 % (exact, within the ±2 % margin) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| regression (exact, beyond the ±2 % margin) |"), std::string::npos) << md;
  EXPECT_EQ(md.find("no-change (exact)"), std::string::npos) << md;
  // Which database it went to.
  EXPECT_NE(md.find("Stored as run 7 in `/work/gate-out/dynqual.db`."), std::string::npos) << md;

  // The HTML page says the same, and keeps the side metric out of the Timing table.
  std::string chartJs = reports::defaultChartJsPath();
  if (!fs::exists(chartJs))
    GTEST_SKIP() << chartJs << " missing (libjs-chart.js)";
  std::string html = reports::renderGateHtml(modelledGate(), modelledContext(), chartJs);
  auto how = html.find("How this gate decided</h2>");
  ASSERT_NE(how, std::string::npos);
  EXPECT_NE(
      html.find("Decided on modelled_device_ms, the sim&#39;s modelled device time per run: an exact metric", how),
      std::string::npos)
      << html.substr(how, 800);
  EXPECT_NE(html.find("<h2>Beside, not deciding</h2>"), std::string::npos);
  EXPECT_NE(html.find("+1.40 % (exact, within the ±2 % margin)"), std::string::npos);
}

// A measured decision describes the statistics its policy used, from the policy: another margin,
// other looks and a second round value show up as given.
TEST(GateMarkdown, AMeasuredDecisionDescribesTheTestItsPolicyUsed) {
  diff::AbResult r = sample();
  r.clock = exec::TimingClock::ThreadCpu;
  r.checks[1].passed = true;
  for (auto& c : r.comparisons)
    c.metric = "cpu_time_ms";
  reports::GateContext ctx = context();
  ctx.policy.looks = {12, 24};
  ctx.policy.margin = 0.05;
  ctx.policy.alpha = 0.01;
  ctx.policy.tailValue = diff::RoundValue::Mean;
  ctx.measure.samplesPerPosition = 3;
  ctx.measure.budgetSeconds = 300;
  std::string footer = section(reports::renderGateMarkdown(r, ctx), "### How this gate decided");
  ASSERT_FALSE(footer.empty());
  EXPECT_NE(footer.find("Decided on cpu\\_time\\_ms, the measured thread-cpu time per run"), std::string::npos)
      << footer;
  EXPECT_NE(footer.find("3 samples per position; an arm's round value is its fastest sample (min); a second "
                        "comparison per model uses the mean of its samples (mean), and an improvement needs both"),
            std::string::npos)
      << footer;
  EXPECT_NE(footer.find("Wilcoxon signed-rank test"), std::string::npos) << footer;
  EXPECT_NE(footer.find("looks after rounds 12, 24; alpha 0.01 over the suite"), std::string::npos) << footer;
  EXPECT_NE(footer.find("Holm over the 2 tested comparisons of a look"), std::string::npos) << footer;
  EXPECT_NE(footer.find("beyond the ±5 % margin"), std::string::npos) << footer;
  EXPECT_NE(footer.find("the 300 s budget"), std::string::npos) << footer;
  EXPECT_NE(footer.find("This run took 12 rounds (1 look"), std::string::npos) << footer;
  EXPECT_EQ(footer.find("modelled-device-time.md"), std::string::npos) << footer;
}
