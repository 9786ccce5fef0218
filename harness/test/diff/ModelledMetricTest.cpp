// The deterministic decision metric (modelled_device_ms): exact decisions of constant series
// outside the tested family, the fallback to the tests when a series is not constant, the side
// metric that never decides, the modelled form of an injected shift, and the store round trip.
#include "dynqual/diff/AbStore.h"
#include "dynqual/diff/Analysis.h"
#include "dynqual/diff/Engine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace dynqual::diff;
namespace fs = std::filesystem;

namespace {

/// `rounds` ABBA rounds of one model, 2 positions x 2 samples per arm and round, every base
/// sample `base` and every head sample `head` (a deterministic metric).
std::vector<Sample> constant(const std::string& model, int rounds, double base, double head) {
  std::vector<Sample> s;
  const char* order[2][4] = {{"base", "head", "head", "base"}, {"head", "base", "base", "head"}};
  for (int r = 0; r < rounds; ++r)
    for (int p = 0; p < 4; ++p)
      for (int k = 0; k < 2; ++k) {
        std::string arm = order[r % 2][p];
        s.push_back({model, arm, r, p, k, arm == "head" ? head : base, 1});
      }
  return s;
}

Policy modelledPolicy() {
  Policy p;
  p.looks = {1, 12, 16};
  p.bootstrapResamples = 200;
  return p;
}

} // namespace

TEST(ModelledMetric, AnAaComparisonIsExactlyNoChangeAfterOneRound) {
  // Base and head both 2.5 ms in every run: ratio exactly 1, zero-width interval, p 1.
  AnalysisOutcome a = analyze(constant("m", 1, 2.5, 2.5), {"m"}, modelledPolicy(), kModelledDeviceMetric);
  ASSERT_EQ(a.comparisons.size(), 1u);
  const MetricComparison& c = a.comparisons[0];
  EXPECT_EQ(c.verdict, Verdict::NoChange);
  EXPECT_TRUE(c.exact);
  EXPECT_EQ(c.ratio, 1.0);
  EXPECT_EQ(c.ciLow, 1.0);
  EXPECT_EQ(c.ciHigh, 1.0);
  EXPECT_EQ(c.p, 1.0);
  EXPECT_EQ(c.decidedAtRounds, 1);
  EXPECT_EQ(a.looksDone, 1);
  EXPECT_TRUE(a.allClosed);
}

TEST(ModelledMetric, TheExactRatioAgainstTheMarginDecides) {
  // Head/base: 2.75/2.5 = 1.10 (> 1.02: regression), 2.5/2.75 = 0.909 (< 1/1.02: improvement),
  // 2.525/2.5 = 1.01 (inside [1/1.02, 1.02]: no change).
  auto s = constant("slow", 1, 2.5, 2.75);
  auto f = constant("fast", 1, 2.75, 2.5);
  auto n = constant("near", 1, 2.5, 2.525);
  s.insert(s.end(), f.begin(), f.end());
  s.insert(s.end(), n.begin(), n.end());
  AnalysisOutcome a = analyze(s, {"slow", "fast", "near"}, modelledPolicy(), kModelledDeviceMetric);
  ASSERT_EQ(a.comparisons.size(), 3u);
  EXPECT_EQ(a.comparisons[0].verdict, Verdict::Regression);
  EXPECT_NEAR(a.comparisons[0].ratio, 1.10, 1e-12);
  EXPECT_EQ(a.comparisons[0].p, 0.0);
  EXPECT_EQ(a.comparisons[1].verdict, Verdict::Improvement);
  EXPECT_EQ(a.comparisons[2].verdict, Verdict::NoChange);
  EXPECT_NEAR(a.comparisons[2].ratio, 1.01, 1e-12);
  for (const auto& c : a.comparisons)
    EXPECT_TRUE(c.exact && c.decidedAtRounds == 1) << c.model;
}

TEST(ModelledMetric, ConstantDifferencesNeverReachTheSignedRankTest) {
  // +3 % in every run after one round: the modelled metric is decided exactly (p 0 by definition,
  // no level, not a test result); the same numbers as a measured metric decide nothing yet.
  Policy p = modelledPolicy();
  AnalysisOutcome exact = analyze(constant("m", 1, 1.0, 1.03), {"m"}, p, kModelledDeviceMetric);
  ASSERT_EQ(exact.comparisons.size(), 1u);
  EXPECT_TRUE(exact.comparisons[0].exact);
  EXPECT_EQ(exact.comparisons[0].verdict, Verdict::Regression);
  EXPECT_EQ(exact.comparisons[0].alphaUsed, 0.0); // no level: not a member of the tested family
  AnalysisOutcome tested = analyze(constant("m", 1, 1.0, 1.03), {"m"}, p, "latency_ms");
  ASSERT_EQ(tested.comparisons.size(), 1u);
  EXPECT_FALSE(tested.comparisons[0].exact);
  EXPECT_EQ(tested.comparisons[0].verdict, Verdict::Inconclusive); // one round decides nothing
}

TEST(ModelledMetric, ExactSeriesLeaveTheHolmFamilyOfTheOthers) {
  // A noisy measured compile series beside two exact modelled ones: its level must be the look's
  // whole share (a family of one), as if the exact ones did not exist.
  auto s = constant("a", 12, 2.5, 2.5);
  auto t = constant("b", 12, 2.5, 2.75);
  s.insert(s.end(), t.begin(), t.end());
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> u(-0.01, 0.01);
  std::vector<Sample> compile;
  for (int r = 0; r < 12; ++r)
    for (int pos = 0; pos < 2; ++pos)
      compile.push_back({"a", (r + pos) % 2 ? "head" : "base", r, pos, 0, 100 * (1 + u(gen)), 1});
  Policy p = modelledPolicy();
  p.looks = {12};
  AnalysisOutcome a = analyze(s, {"a", "b"}, p, kModelledDeviceMetric, compile, "compile_ms");
  ASSERT_EQ(a.comparisons.size(), 3u);
  EXPECT_TRUE(a.comparisons[0].exact);
  EXPECT_TRUE(a.comparisons[1].exact);
  EXPECT_EQ(a.comparisons[1].verdict, Verdict::Regression);
  EXPECT_FALSE(a.comparisons[2].exact);
  EXPECT_EQ(a.comparisons[2].metric, "compile_ms");
  EXPECT_DOUBLE_EQ(a.comparisons[2].alphaUsed, 0.05); // one look, a family of one
}

TEST(ModelledMetric, ASeriesThatIsNotConstantGoesThroughTheTests) {
  // One base sample of round 0 differs (2.8 instead of 2.5): not constant, so the first look
  // (1 round) decides nothing and the tests decide at 12 rounds (the round minimum is still 2.5,
  // every round's ratio 1.1).
  auto s = constant("m", 12, 2.5, 2.75);
  ASSERT_EQ(s[1].arm, "base");
  s[1].valueMs = 2.8;
  AnalysisOutcome a = analyze(s, {"m"}, modelledPolicy(), kModelledDeviceMetric);
  ASSERT_EQ(a.comparisons.size(), 1u);
  EXPECT_FALSE(a.comparisons[0].exact);
  EXPECT_EQ(a.comparisons[0].verdict, Verdict::Regression);
  EXPECT_EQ(a.comparisons[0].decidedAtRounds, 12);
  EXPECT_FALSE(constantArms(s, "m", 1));
  EXPECT_TRUE(constantArms(constant("m", 3, 1, 2), "m", 3));
}

TEST(ModelledMetric, AZeroBaseHasNoRatio) {
  EXPECT_THROW(exactComparison("m", kModelledDeviceMetric, 0.0, 1.0, 1, 0.02), std::invalid_argument);
}

TEST(ModelledMetric, TheSideMetricIsReportedAndNeverDecides) {
  // Side: the modelled time of a measured decision, 10 % slower; deciding: nothing regressed.
  auto side = sideComparisons(constant("m", 12, 2.5, 2.75), {"m"}, modelledPolicy(), kModelledDeviceMetric);
  ASSERT_EQ(side.size(), 1u);
  EXPECT_FALSE(side[0].deciding);
  EXPECT_EQ(side[0].verdict, Verdict::Regression);
  EXPECT_EQ(side[0].rounds, 12);
  AbResult r;
  MetricComparison decided;
  decided.verdict = Verdict::NoChange;
  r.comparisons = {decided, side[0]};
  EXPECT_EQ(exitCodeFor(r), kPass);
  EXPECT_EQ(verdictLine(r).find("regression:"), std::string::npos) << verdictLine(r);
  EXPECT_NE(verdictLine(r).find("1 comparisons (1 no change"), std::string::npos) << verdictLine(r);
  EXPECT_TRUE(sideComparisons({}, {"m"}, modelledPolicy(), kModelledDeviceMetric).empty());
}

TEST(ModelledMetric, AnInjectedShiftScalesTheModelledTimeAndTheOtherKindsAreRefused) {
  EXPECT_DOUBLE_EQ(modelledSlowdownFactor(parseSlowdownSpec("shift:10")), 1.10);
  EXPECT_DOUBLE_EQ(modelledSlowdownFactor(parseSlowdownSpec("3")), 1.03);
  for (const char* spec : {"tail:0.3:25", "spread:3"}) {
    try {
      modelledSlowdownFactor(parseSlowdownSpec(spec));
      ADD_FAILURE() << spec << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--metric measured"), std::string::npos) << e.what();
    }
  }
}

TEST(ModelledMetric, MetricNamesAndTheFamilySize) {
  EXPECT_EQ(parseDecisionMetric("modelled-device-time"), DecisionMetric::ModelledDeviceTime);
  EXPECT_EQ(parseDecisionMetric(decisionMetricName(DecisionMetric::Measured)), DecisionMetric::Measured);
  EXPECT_THROW(parseDecisionMetric("wall"), std::invalid_argument);
  EXPECT_TRUE(isDeterministicMetric("modelled_device_ms"));
  EXPECT_TRUE(isDeterministicMetric("modelled_device_ms.mean"));
  EXPECT_FALSE(isDeterministicMetric("latency_ms"));
  Measurement m;
  m.clock = dynqual::exec::TimingClock::ThreadCpu;
  EXPECT_EQ(decidingMetric(m), "cpu_time_ms");
  EXPECT_EQ(sideMetric(m), "modelled_device_ms");
  m.metric = DecisionMetric::ModelledDeviceTime;
  EXPECT_EQ(decidingMetric(m), "modelled_device_ms");
  EXPECT_EQ(sideMetric(m), "cpu_time_ms");
  Policy p;
  EXPECT_EQ(comparisonCount(5, p, m), 0); // decided exactly: no tested comparison
  m.compileTime = true;
  EXPECT_EQ(comparisonCount(5, p, m), 5);
}

TEST(ModelledMetric, TheStoreSaysWhichMetricDecided) {
  fs::path dbPath = fs::temp_directory_path() / ("ab-modelled-" + std::to_string(::getpid()) + ".db");
  fs::remove(dbPath);
  Policy p = modelledPolicy();
  Measurement m;
  m.metric = DecisionMetric::ModelledDeviceTime;
  m.clock = dynqual::exec::TimingClock::ThreadCpu;
  AbResult r;
  r.samples = constant("m", 1, 2.5, 2.75);
  r.comparisons = analyze(r.samples, {"m"}, p, kModelledDeviceMetric).comparisons;
  auto side = sideComparisons(constant("m", 1, 1.0, 1.0), {"m"}, p, "cpu_time_ms");
  r.comparisons.insert(r.comparisons.end(), side.begin(), side.end());
  ModelCheck c;
  c.model = "m";
  c.passed = true;
  r.checks.push_back(c);
  int64_t runId = 0;
  {
    dynqual::store::Store db(dbPath);
    dynqual::store::RunRecord header;
    header.key = "ab-modelled-run";
    header.kind = "ab";
    header.startedAt = "2026-01-01T00:00:00Z";
    header.machine.fingerprint = "test-machine";
    header.machine.cpuModel = "cpu";
    header.machine.os = "os";
    header.params = policyParams(p, m);
    runId = db.beginRun(header);
    recordAbResult(db, runId, r);
  }
  dynqual::store::Store db(dbPath);
  StoredAbRun s = loadAbRun(db, runId);
  EXPECT_EQ(decisionMetricFromParams(s.params), DecisionMetric::ModelledDeviceTime);
  EXPECT_EQ(decidingMetricFromParams(s.params), "modelled_device_ms");
  ASSERT_EQ(s.comparisons.size(), 2u);
  EXPECT_EQ(s.comparisons[0].metric, "modelled_device_ms");
  EXPECT_TRUE(s.comparisons[0].deciding);
  EXPECT_TRUE(s.comparisons[0].exact);
  EXPECT_EQ(s.comparisons[0].verdict, Verdict::Regression);
  EXPECT_EQ(s.comparisons[1].metric, "cpu_time_ms");
  EXPECT_FALSE(s.comparisons[1].deciding);
  auto again = analyze(s.samples, {"m"}, policyFromParams(s.params), decidingMetricFromParams(s.params)).comparisons;
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].verdict, s.comparisons[0].verdict);
  EXPECT_EQ(again[0].ratio, s.comparisons[0].ratio);
  fs::remove(dbPath);
}
