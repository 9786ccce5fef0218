// The injected kinds of change (--inject-slowdown SPEC) and the sample-level simulation of the
// whole gate on calibration rounds (bench stats --modes), on constructed rounds whose answer
// follows by hand.
#include "dynqual/diff/GateSimulation.h"
#include "dynqual/diff/Slowdown.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

using namespace dynqual::diff;

TEST(Slowdown, ParsesEachKindAndRefusesTheRest) {
  EXPECT_EQ(parseSlowdownSpec("3").kind, SlowdownSpec::Kind::Shift);
  EXPECT_DOUBLE_EQ(parseSlowdownSpec("3").percent, 3);
  EXPECT_DOUBLE_EQ(parseSlowdownSpec("shift:2.5").percent, 2.5);
  SlowdownSpec t = parseSlowdownSpec("tail:0.3:25");
  EXPECT_EQ(t.kind, SlowdownSpec::Kind::Tail);
  EXPECT_DOUBLE_EQ(t.fraction, 0.3);
  EXPECT_DOUBLE_EQ(t.percent, 25);
  SlowdownSpec s = parseSlowdownSpec("spread:3");
  EXPECT_EQ(s.kind, SlowdownSpec::Kind::Spread);
  EXPECT_DOUBLE_EQ(s.factor, 3);
  for (const char* bad : {"", "-1", "x", "3%", "tail:0.3", "tail:0:5", "tail:1.5:5", "tail:0.3:-1", "spread:0.5",
                          "spread", "shift:", "jitter:3", "tail:0.3:25:1"})
    EXPECT_THROW(parseSlowdownSpec(bad), std::invalid_argument) << bad;
  for (const char* text : {"shift:3", "tail:0.3:25", "spread:3"})
    EXPECT_EQ(slowdownSpecText(parseSlowdownSpec(text)), text);
}

TEST(Slowdown, BusyWorkIsSizedFromTheBase) {
  // Shift and tail: PCT % of the median, 10 % of 2 ms = 200 us. Spread: W = S sqrt(3 (F^2 - 1)),
  // S = 0.1 ms, F = 3: 0.1 * sqrt(24) ms = 489.898 us; then the head's spread is
  // sqrt(S^2 + W^2 / 3) = sqrt(0.01 + 0.08) = 0.3 ms = F S.
  EXPECT_DOUBLE_EQ(slowdownBusyUs(parseSlowdownSpec("10"), 2.0, 0.1), 200);
  EXPECT_DOUBLE_EQ(slowdownBusyUs(parseSlowdownSpec("tail:0.3:10"), 2.0, 0.1), 200);
  double w = slowdownBusyUs(parseSlowdownSpec("spread:3"), 2.0, 0.1);
  EXPECT_NEAR(w, 489.898, 1e-3);
  EXPECT_NEAR(std::sqrt(0.1 * 0.1 + (w / 1000) * (w / 1000) / 3), 0.3, 1e-12);
  EXPECT_THROW(slowdownBusyUs(parseSlowdownSpec("10"), -1, 0), std::invalid_argument);
}

namespace {

/// 64 calibration rounds of one model: 10 samples per arm of one run each, 10 ms with normal
/// noise of sd `sd` ms, the same for both arms (A/A); positions of 5 samples.
std::vector<CalibrationRound> aaRounds(double sd, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> z(10.0, sd);
  std::vector<CalibrationRound> out(64);
  for (auto& c : out) {
    for (int i = 0; i < 10; ++i) {
      c.base.push_back(z(gen));
      c.head.push_back(z(gen));
    }
    c.baseSpreadMs = sd;
  }
  return out;
}

GateSimulationParams suite(const std::string& change, const std::string& model) {
  GateSimulationParams p;
  p.rounds["a"] = aaRounds(0.1, 1);
  p.rounds["b"] = aaRounds(0.1, 2);
  p.policy.looks = {12, 16, 24, 32, 48, 64};
  p.policy.roundValue = RoundValue::Min;
  p.policy.tailValue = RoundValue::Mean;
  p.trials = 200;
  if (!change.empty()) {
    p.change = parseSlowdownSpec(change);
    p.changedModel = model;
  }
  return p;
}

} // namespace

TEST(GateSimulation, EachKindOfChangeGetsTheVerdictItShould) {
  // Noise 1 % per sample: the round values move by well under the 2 % margin under A/A.
  auto aa = simulateGateOnSamples(suite("", ""));
  EXPECT_EQ(aa.falsePositivePerSuite.count, 0);
  EXPECT_GE(aa.noChange["a"].rate, 0.95);
  // A 10 % shift on "a": every round value moves by 10 %, a regression every time; "b" untouched.
  auto shift = simulateGateOnSamples(suite("10", "a"));
  EXPECT_DOUBLE_EQ(shift.busyUs, 1000.0 * 0.10 * shift.medianMs);
  EXPECT_EQ(shift.detected.count, 200);
  EXPECT_EQ(shift.falsePositivePerSuite.count, 0);
  // 30 % of the runs 25 % slower: the minimum of 10 samples is nearly always an unslowed one
  // (all 10 slowed: 0.3^10 = 6e-6) and barely moves; the mean moves by 0.3 * 25 = 7.5 %, which the
  // second comparison finds.
  auto tail = simulateGateOnSamples(suite("tail:0.3:25", "a"));
  EXPECT_GE(tail.detected.rate, 0.95);
  EXPECT_GE(tail.tailVerdicts["a"]["regression"], 190);
  EXPECT_EQ(tail.falsePositivePerSuite.count, 0);
  // Three times the spread at the same mean: the head's minimum falls (W = 0.49 ms, its fastest
  // of 10 uniform draws near 0 against the base's fixed +W), which alone would read as an
  // improvement; the mean does not move, so the model is never an improvement.
  auto spread = simulateGateOnSamples(suite("spread:3", "a"));
  EXPECT_NEAR(spread.busyUs, 100 * std::sqrt(24.0), 1e-9);
  EXPECT_EQ(spread.changedImprovement.count, 0);
  EXPECT_GT(spread.firstVerdicts["a"]["inconclusive"], 0); // the minimum alone said improvement
  // Without the second comparison the same data reads as an improvement.
  GateSimulationParams minOnly = suite("spread:3", "a");
  minOnly.policy.tailValue.reset();
  EXPECT_GE(simulateGateOnSamples(minOnly).changedImprovement.rate, 0.9);
}

TEST(GateSimulation, Errors) {
  GateSimulationParams p = suite("", "");
  p.rounds["c"] = {CalibrationRound{{1.0}, {1.0}, 1, 0}};
  EXPECT_THROW(simulateGateOnSamples(p), std::invalid_argument);
  GateSimulationParams q = suite("10", "nope");
  EXPECT_THROW(simulateGateOnSamples(q), std::invalid_argument);
}
