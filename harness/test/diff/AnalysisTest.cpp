// The analysis of stored samples: round values, verdicts on constructed samples whose answer is
// known by construction, reanalysis through the store, counter changes and exit codes.
#include "dynqual/diff/AbStore.h"
#include "dynqual/diff/Analysis.h"
#include "dynqual/diff/Engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

using namespace dynqual::diff;
namespace fs = std::filesystem;

namespace {

/// Samples for `rounds` ABBA rounds: base ~ 10 ms * (1 + noise), head = base-level * ratio, noise
/// uniform in +-noise from a fixed seed, 2 positions x 2 samples per arm and round.
std::vector<Sample> make(const std::string& model, int rounds, double ratio, double noise, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-noise, noise);
  std::vector<Sample> s;
  const char* order[2][4] = {{"base", "head", "head", "base"}, {"head", "base", "base", "head"}};
  for (int r = 0; r < rounds; ++r)
    for (int p = 0; p < 4; ++p)
      for (int k = 0; k < 2; ++k) {
        std::string arm = order[r % 2][p];
        double v = 10.0 * (1 + u(gen)) * (arm == "head" ? ratio : 1.0);
        s.push_back({model, arm, r, p, k, v, 1});
      }
  return s;
}

/// The header of a stored A/B run of this test file: fixed machine and start time.
dynqual::store::RunRecord testRun(const std::string& key, const std::string& kind,
                                  const std::map<std::string, std::string>& params) {
  dynqual::store::RunRecord header;
  header.key = key;
  header.kind = kind;
  header.startedAt = "2026-01-01T00:00:00Z";
  header.machine.fingerprint = "test-machine";
  header.machine.cpuModel = "cpu";
  header.machine.os = "os";
  header.params = params;
  return header;
}

Policy policy(std::vector<int> looks) {
  Policy p;
  p.looks = std::move(looks);
  p.bootstrapResamples = 200;
  return p;
}

} // namespace

TEST(RoundValues, MinimumOfEachArmInTheRound) {
  // Round 0: base samples 1, 3, 2 -> minimum 1; head samples 4, 6 -> minimum 4.
  std::vector<Sample> s = {{"m", "base", 0, 0, 0, 1, 1}, {"m", "base", 0, 3, 0, 3, 1}, {"m", "base", 0, 3, 1, 2, 1},
                           {"m", "head", 0, 1, 0, 4, 1}, {"m", "head", 0, 2, 0, 6, 1}, {"m", "base", 1, 0, 0, 7, 1},
                           {"x", "head", 0, 1, 0, 99, 1}};
  auto v = roundValues(s, "m");
  ASSERT_EQ(v.size(), 1u); // round 1 lacks a head value
  EXPECT_DOUBLE_EQ(v.at(0).first, 1);
  EXPECT_DOUBLE_EQ(v.at(0).second, 4);
}

TEST(RoundValues, LowerHalfMeanOfEachArmInTheRound) {
  // Base samples 5, 1, 9, 3 -> the fastest half {1, 3}, mean 2; head samples 8, 4, 6 -> the
  // fastest ceil(3/2) = 2 {4, 6}, mean 5. The minimum would give 1 and 4.
  std::vector<Sample> s = {{"m", "base", 0, 0, 0, 5, 1}, {"m", "base", 0, 3, 0, 1, 1}, {"m", "base", 0, 0, 1, 9, 1},
                           {"m", "base", 0, 3, 1, 3, 1}, {"m", "head", 0, 1, 0, 8, 1}, {"m", "head", 0, 2, 0, 4, 1},
                           {"m", "head", 0, 1, 1, 6, 1}};
  auto v = roundValues(s, "m", RoundValue::LowerHalfMean);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_DOUBLE_EQ(v.at(0).first, 2);
  EXPECT_DOUBLE_EQ(v.at(0).second, 5);
  EXPECT_DOUBLE_EQ(roundValues(s, "m").at(0).first, 1);
  EXPECT_EQ(parseRoundValue(roundValueName(RoundValue::LowerHalfMean)), RoundValue::LowerHalfMean);
  EXPECT_THROW(parseRoundValue("p75"), std::invalid_argument);
}

TEST(RoundValues, MeanMedianAndP90OfEachArmInTheRound) {
  // Base samples 5, 1, 9, 3: mean 18/4 = 4.5, median (3 + 5)/2 = 4, p90 rank ceil(0.9 * 4) = 4 -> 9.
  std::vector<double> b = {5, 1, 9, 3};
  EXPECT_DOUBLE_EQ(roundValueOf(b, RoundValue::Mean), 4.5);
  EXPECT_DOUBLE_EQ(roundValueOf(b, RoundValue::Median), 4);
  EXPECT_DOUBLE_EQ(roundValueOf(b, RoundValue::P90), 9);
  for (RoundValue v :
       {RoundValue::Min, RoundValue::LowerHalfMean, RoundValue::Mean, RoundValue::Median, RoundValue::P90})
    EXPECT_EQ(parseRoundValue(roundValueName(v)), v);
}

TEST(Analysis, TheTailValueIsASecondComparisonAndAnImprovementNeedsBoth) {
  // Per round, base: 10 samples of 10 ms; head: 8 of 9 ms and 2 of 14 ms. The minimum falls 10 %
  // (9 / 10), the mean does not move ((8 * 9 + 2 * 14) / 10 = 10): the minimum alone says
  // improvement, the mean says no change, so the model is not an improvement.
  std::vector<Sample> s;
  for (int r = 0; r < 12; ++r)
    for (int k = 0; k < 10; ++k) {
      double jitter = 1 + 0.0001 * ((r * 7 + k) % 5);
      s.push_back({"m", "base", r, k < 5 ? (r % 2 ? 1 : 0) : (r % 2 ? 2 : 3), k, 10.0 * jitter, 1});
      s.push_back({"m", "head", r, k < 5 ? (r % 2 ? 0 : 1) : (r % 2 ? 3 : 2), k, (k < 8 ? 9.0 : 14.0) * jitter, 1});
    }
  Policy p = policy({12});
  p.tailValue = RoundValue::Mean;
  AnalysisOutcome a = analyze(s, {"m"}, p, "cpu_time_ms");
  ASSERT_EQ(a.comparisons.size(), 2u);
  EXPECT_EQ(a.comparisons[1].metric, "cpu_time_ms.mean");
  EXPECT_NEAR(a.comparisons[0].ratio, 0.9, 1e-3);
  EXPECT_NEAR(a.comparisons[1].ratio, 1.0, 1e-3);
  EXPECT_EQ(a.comparisons[1].verdict, Verdict::NoChange);
  EXPECT_EQ(a.comparisons[0].verdict, Verdict::Inconclusive); // improvement of the minimum only
  p.tailValue.reset();
  EXPECT_EQ(analyze(s, {"m"}, p, "cpu_time_ms").comparisons[0].verdict, Verdict::Improvement);
}

TEST(Analysis, CompileTimeIsASecondComparisonInTheSameFamily) {
  // Run time equal on both arms; compile time of the head 20% slower. Both have +-0.5% noise, so
  // by construction the run is "no change" and the compile a regression (CI near [1.19, 1.21]).
  auto run = make("m", 12, 1.00, 0.005, 3);
  auto compile = make("m", 12, 1.20, 0.005, 4);
  AnalysisOutcome a = analyze(run, {"m"}, policy({12}), "cpu_time_ms", compile, "compile_cpu_ms");
  ASSERT_EQ(a.comparisons.size(), 2u);
  EXPECT_EQ(a.comparisons[0].metric, "cpu_time_ms");
  EXPECT_EQ(a.comparisons[0].verdict, Verdict::NoChange);
  EXPECT_EQ(a.comparisons[1].model, "m");
  EXPECT_EQ(a.comparisons[1].metric, "compile_cpu_ms");
  EXPECT_EQ(a.comparisons[1].verdict, Verdict::Regression);
  EXPECT_NEAR(a.comparisons[1].ratio, 1.20, 0.01);
  // Without compile samples the family is the run comparison alone.
  EXPECT_EQ(analyze(run, {"m"}, policy({12}), "cpu_time_ms").comparisons.size(), 1u);
}

TEST(Analysis, ClearSlowdownIsARegressionAndEqualArmsAreNoChange) {
  // Model "slow": head is 10% slower with +-0.5% noise; "same": equal arms with the same noise.
  auto s = make("slow", 24, 1.10, 0.005, 1);
  auto t = make("same", 24, 1.00, 0.005, 2);
  s.insert(s.end(), t.begin(), t.end());
  AnalysisOutcome a = analyze(s, {"slow", "same"}, policy({12, 16, 24}));
  ASSERT_EQ(a.comparisons.size(), 2u);
  EXPECT_EQ(a.comparisons[0].verdict, Verdict::Regression);
  EXPECT_NEAR(a.comparisons[0].ratio, 1.10, 0.01);
  EXPECT_GT(a.comparisons[0].ciLow, 1.02);
  EXPECT_EQ(a.comparisons[1].verdict, Verdict::NoChange);
  EXPECT_GE(a.comparisons[1].ciLow, 0.98);
  EXPECT_LE(a.comparisons[1].ciHigh, 1.02);
  // Both are closed at the first look, so the replay stops there.
  EXPECT_EQ(a.looksDone, 1);
  EXPECT_TRUE(a.allClosed);
  EXPECT_EQ(a.comparisons[0].decidedAtRounds, 12);
}

TEST(Analysis, NoisyArmsStayInconclusiveAndMissingRoundsStopTheReplay) {
  // +-10% noise: a 2% margin cannot be settled in 12 rounds.
  auto s = make("noisy", 12, 1.0, 0.10, 3);
  AnalysisOutcome a = analyze(s, {"noisy"}, policy({12, 16}));
  ASSERT_EQ(a.comparisons.size(), 1u);
  EXPECT_EQ(a.comparisons[0].verdict, Verdict::Inconclusive);
  EXPECT_EQ(a.looksDone, 1); // rounds for the look at 16 were never taken
  EXPECT_FALSE(a.allClosed);
  AnalysisOutcome none = analyze(make("m", 5, 1.0, 0.01, 4), {"m"}, policy({12}));
  EXPECT_EQ(none.looksDone, 0);
  EXPECT_TRUE(none.comparisons.empty());
}

TEST(Analysis, AComparisonClosedEarlyNeedsNoFurtherRounds) {
  // "done" is 30 % slower with +-0.1 % noise: a regression at the first look (12 rounds), after
  // which its model takes no more rounds. "open" has +-10 % noise: inconclusive at 12 and 16.
  // The look at 16 must still be replayed for "open", with "done" keeping its verdict of look 12.
  auto s = make("done", 12, 1.30, 0.001, 5);
  auto t = make("open", 16, 1.00, 0.10, 6);
  s.insert(s.end(), t.begin(), t.end());
  AnalysisOutcome a = analyze(s, {"done", "open"}, policy({12, 16}));
  ASSERT_EQ(a.comparisons.size(), 2u);
  EXPECT_EQ(a.looksDone, 2);
  EXPECT_EQ(a.comparisons[0].verdict, Verdict::Regression);
  EXPECT_EQ(a.comparisons[0].decidedAtRounds, 12);
  EXPECT_EQ(a.comparisons[0].rounds, 12);
  EXPECT_EQ(a.comparisons[1].rounds, 16);
  EXPECT_EQ(a.comparisons[1].verdict, Verdict::Inconclusive);
  // An open comparison short of a look's rounds still stops the replay there.
  auto u = make("open", 14, 1.00, 0.10, 6);
  auto v = make("done", 12, 1.30, 0.001, 5);
  u.insert(u.end(), v.begin(), v.end());
  EXPECT_EQ(analyze(u, {"done", "open"}, policy({12, 16})).looksDone, 1);
}

TEST(Analysis, CompileTimeDoublesTheFamilyOfTheReachabilityWarning) {
  // 10 models with compile times are 20 comparisons: 0.05 / 6 looks / 20 = 4.2e-4 needs
  // 2^(1-n) < 4.2e-4, n >= 13 (2^-12 = 2.4e-4; 2^-11 = 4.9e-4), so the look at 12 cannot reject.
  // Timed alone (10 comparisons, 8.3e-4) n >= 12 and the default looks raise nothing.
  Measurement m;
  Policy p = policy({12, 16, 24, 32, 48, 64});
  EXPECT_TRUE(reachabilityWarnings(p, comparisonCount(10, p, m)).empty());
  m.compileTime = true;
  EXPECT_EQ(comparisonCount(10, p, m), 20);
  auto w = reachabilityWarnings(p, comparisonCount(10, p, m));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("looks before round 13"), std::string::npos) << w[0];
  // A tail round value adds one comparison per model as well: 30.
  p.tailValue = RoundValue::Mean;
  EXPECT_EQ(comparisonCount(10, p, m), 30);
}

TEST(Analysis, ReachabilityWarningNamesTheRoundsNeeded) {
  // alpha 0.05 over 6 looks and 10 comparisons: 0.05/60 needs 2^(1-n) < 8.3e-4 -> n >= 12, so a
  // last look at 8 rounds can never reject.
  auto w = reachabilityWarnings(policy({4, 8}), 10);
  ASSERT_FALSE(w.empty());
  EXPECT_TRUE(reachabilityWarnings(policy({12, 16, 24, 32, 48, 64}), 4).empty());
}

TEST(CounterChanges, ListsEveryDifferingCounterAndTheArtifactSize) {
  ModelCheck c;
  c.model = "m";
  c.baseCounters = {{"syncs", 2}, {"kernel_launches", 10}, {"peak_device_bytes", 100}};
  c.headCounters = {{"syncs", 2}, {"kernel_launches", 12}, {"peak_device_bytes", 10000}};
  c.baseArtifactBytes = 500;
  c.headArtifactBytes = 520;
  auto ch = counterChanges({c});
  ASSERT_EQ(ch.size(), 3u);
  EXPECT_EQ(ch[0].name, "kernel_launches");
  EXPECT_EQ(ch[1].name, "peak_device_bytes");
  EXPECT_EQ(ch[1].head - ch[1].base, 9900);
  EXPECT_EQ(ch[2].name, "artifact_bytes");
}

TEST(ExitCode, PrecedenceIsRegressionThenInfrastructureThenInconclusive) {
  AbResult r;
  EXPECT_EQ(exitCodeFor(r), kPass);
  MetricComparison open;
  open.verdict = Verdict::Inconclusive;
  r.comparisons.push_back(open);
  EXPECT_EQ(exitCodeFor(r), kInconclusive);
  r.infraErrors.push_back("runner missing");
  EXPECT_EQ(exitCodeFor(r), kInfra);
  ModelCheck bad;
  bad.passed = false;
  r.checks.push_back(bad);
  EXPECT_EQ(exitCodeFor(r), kRegression);
}

TEST(AbStore, RecordedRunReanalysesToTheSameVerdicts) {
  fs::path dbPath = fs::temp_directory_path() / ("ab-store-" + std::to_string(::getpid()) + ".db");
  fs::remove(dbPath);
  Policy p = policy({12, 16});
  p.roundValue = RoundValue::LowerHalfMean; // stored with the run, so the replay uses it too
  Measurement m;
  AbResult r;
  r.samples = make("slow", 16, 1.05, 0.01, 5);
  auto t = make("same", 16, 1.0, 0.01, 6);
  r.samples.insert(r.samples.end(), t.begin(), t.end());
  r.comparisons = analyze(r.samples, {"slow", "same"}, p).comparisons;
  ModelCheck c;
  c.model = "slow";
  c.passed = true;
  c.baseCounters = {{"syncs", 3}};
  c.headCounters = {{"syncs", 4}};
  r.checks.push_back(c);
  int64_t runId = 0;
  {
    dynqual::store::Store db(dbPath);
    auto params = policyParams(p, m);
    runId = db.beginRun(testRun("ab-test-run", "ab", params));
    recordAbResult(db, runId, r);
  }
  dynqual::store::Store db(dbPath);
  StoredAbRun s = loadAbRun(db, runId);
  EXPECT_EQ(s.samples.size(), r.samples.size());
  ASSERT_EQ(s.comparisons.size(), 2u);
  EXPECT_EQ(s.checks.at(0).headCounters.at("syncs"), 4u);
  Policy back = policyFromParams(s.params);
  EXPECT_EQ(back.looks, p.looks);
  EXPECT_EQ(back.roundValue, RoundValue::LowerHalfMean);
  std::vector<std::string> models = {s.comparisons[0].model, s.comparisons[1].model};
  auto again = analyze(s.samples, models, back).comparisons;
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(again[i].verdict, s.comparisons[i].verdict);
    EXPECT_DOUBLE_EQ(again[i].p, s.comparisons[i].p);
    EXPECT_DOUBLE_EQ(again[i].ratio, s.comparisons[i].ratio);
    EXPECT_DOUBLE_EQ(again[i].ciLow, s.comparisons[i].ciLow);
    // The equivalence interval is stored too (schema version 8), narrower than the CI.
    EXPECT_DOUBLE_EQ(s.comparisons[i].eqLow, r.comparisons[i].eqLow);
    EXPECT_DOUBLE_EQ(s.comparisons[i].eqHigh, r.comparisons[i].eqHigh);
    EXPECT_GT(s.comparisons[i].eqLow, s.comparisons[i].ciLow);
    EXPECT_LT(s.comparisons[i].eqHigh, s.comparisons[i].ciHigh);
  }
  EXPECT_TRUE(s.sideSamples.empty()); // this run had no side metric
  EXPECT_EQ(latestAbRun(db), runId);
  fs::remove(dbPath);
}

TEST(AbStore, SideMetricSamplesAreStoredApartFromTheDecidingOnes) {
  fs::path dbPath = fs::temp_directory_path() / ("ab-store-side-" + std::to_string(::getpid()) + ".db");
  fs::remove(dbPath);
  Policy p = policy({12, 16});
  AbResult r;
  r.samples = make("m", 16, 1.00, 0.01, 8);
  r.sideSamples = make("m", 16, 1.10, 0.01, 9);
  r.comparisons = analyze(r.samples, {"m"}, p).comparisons;
  int64_t runId = 0;
  {
    dynqual::store::Store db(dbPath);
    runId = db.beginRun(testRun("ab-side-test-run", "ab", policyParams(p, Measurement{})));
    recordAbResult(db, runId, r);
  }
  dynqual::store::Store db(dbPath);
  StoredAbRun s = loadAbRun(db, runId);
  ASSERT_EQ(s.samples.size(), r.samples.size());
  ASSERT_EQ(s.sideSamples.size(), r.sideSamples.size());
  // Same multiset of values, each in the table it was written to.
  auto values = [](const std::vector<Sample>& v) {
    std::vector<double> out;
    for (const auto& x : v)
      out.push_back(x.valueMs);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(values(s.sideSamples), values(r.sideSamples));
  EXPECT_EQ(values(s.samples), values(r.samples));
  fs::remove(dbPath);
}

TEST(AbStore, ABisectStepReanalysesLikeAnAbRunAndOtherKindsAreRefused) {
  fs::path dbPath = fs::temp_directory_path() / ("ab-store-bisect-" + std::to_string(::getpid()) + ".db");
  fs::remove(dbPath);
  Policy p = policy({12, 16});
  AbResult r;
  r.samples = make("slow", 16, 1.05, 0.01, 7);
  r.comparisons = analyze(r.samples, {"slow"}, p).comparisons;
  int64_t stepId = 0, bisectId = 0;
  {
    dynqual::store::Store db(dbPath);
    stepId = db.beginRun(testRun("bisect-step-test-run", "bisect-step", policyParams(p, Measurement{})));
    recordAbResult(db, stepId, r);
    auto bisect = testRun("bisect-test-run", "bisect", policyParams(p, Measurement{}));
    bisect.startedAt = "2026-01-01T00:00:01Z";
    bisectId = db.beginRun(bisect);
  }
  dynqual::store::Store db(dbPath);
  EXPECT_EQ(latestAbRun(db), stepId); // the later bisect summary run has no samples of its own
  StoredAbRun s = loadAbRun(db, stepId);
  EXPECT_EQ(s.kind, "bisect-step");
  ASSERT_EQ(s.comparisons.size(), 1u);
  auto again = analyze(s.samples, {"slow"}, policyFromParams(s.params)).comparisons;
  EXPECT_EQ(again.at(0).verdict, s.comparisons[0].verdict);
  EXPECT_DOUBLE_EQ(again.at(0).ratio, s.comparisons[0].ratio);
  EXPECT_THROW(loadAbRun(db, bisectId), std::runtime_error);
  fs::remove(dbPath);
}

TEST(Noise, ScaledMadOfPerRoundLogRatios) {
  // Four rounds with head/base = e^0.01, e^-0.01, e^0.02, e^0: log ratios {0.01,-0.01,0.02,0};
  // median 0.005, |dev| {0.005,0.015,0.015,0.005} -> MAD 0.01, scaled 0.014826.
  std::vector<Sample> s;
  double r[] = {0.01, -0.01, 0.02, 0.0};
  for (int i = 0; i < 4; ++i) {
    s.push_back({"m", "base", i, 0, 0, 10.0, 1});
    s.push_back({"m", "head", i, 1, 0, 10.0 * std::exp(r[i]), 1});
  }
  auto n = estimateNoise(s, RoundValue::Min);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].rounds, 4);
  EXPECT_NEAR(n[0].scaledMad, 0.014826, 1e-9);
}
