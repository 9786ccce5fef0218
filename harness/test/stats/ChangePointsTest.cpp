// Change points on hand-checkable series: a clean step, no step, two steps, the minimum segment,
// determinism, and precision/recall of a small fixed-seed simulation.
#include "dynqual/stats/ChangePointSimulation.h"
#include "dynqual/stats/ChangePoints.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

using namespace dynqual;

namespace {

std::vector<double> steps(const std::vector<std::pair<int, double>>& parts) {
  std::vector<double> x;
  for (auto [n, v] : parts)
    x.insert(x.end(), static_cast<size_t>(n), v);
  return x;
}

/// A deterministic wobble of +-0.5 % that no test can call a change: 0.5 % * sin(2.4 i).
std::vector<double> wobble(std::vector<double> x) {
  for (size_t i = 0; i < x.size(); ++i)
    x[i] *= 1 + 0.005 * std::sin(2.4 * static_cast<double>(i));
  return x;
}

std::vector<int> indices(const std::vector<stats::ChangePoint>& cps) {
  std::vector<int> out;
  for (const auto& c : cps)
    out.push_back(c.index);
  return out;
}

stats::ChangePointOptions method(stats::ChangePointMethod m, stats::ChangePointTest t = stats::ChangePointTest::TTest) {
  stats::ChangePointOptions o;
  o.method = m;
  o.test = t;
  o.permutations = 199;
  o.maxP = 0.01; // reachable by 199 permutations: (1 + 0) / 200 = 0.005
  return o;
}

const stats::ChangePointOptions kAll[] = {
    method(stats::ChangePointMethod::EDivisive),
    method(stats::ChangePointMethod::EDivisive, stats::ChangePointTest::Permutation),
    method(stats::ChangePointMethod::Pelt)};

} // namespace

TEST(ChangePoints, EnergyStatisticOfACleanStep) {
  // X = {0,0,0}, Y = {1,1,1}: sum |X_i - Y_j| = 9, within sums 0, so Q = 2 * 9 / 6 = 3.
  // Any other split mixes the sides: e.g. (tau 3, kappa 4) gives Q = 2 * 3 / 4 = 1.5.
  auto s = stats::bestEnergySplit({0, 0, 0, 1, 1, 1}, 0, 6, 1);
  EXPECT_EQ(s.tau, 3);
  EXPECT_EQ(s.kappa, 6);
  EXPECT_DOUBLE_EQ(s.q, 3.0);
  // A sub-range: [1, 5) of {9,0,0,2,2,9} is {0,0,2,2}; X = {0,0}, Y = {2,2}: Q = 2 * 8 / 4 = 4.
  auto r = stats::bestEnergySplit({9, 0, 0, 2, 2, 9}, 1, 5, 1);
  EXPECT_EQ(r.tau, 3);
  EXPECT_DOUBLE_EQ(r.q, 4.0);
  // Within-side spread lowers Q: X = {0, 2}, Y = {5, 5}: 2 * (5+5+3+3) / 4 - 2*2*2 / (4*1) = 8 - 2 = 6.
  auto w = stats::bestEnergySplit({0, 2, 5, 5}, 0, 4, 2);
  EXPECT_EQ(w.tau, 2);
  EXPECT_DOUBLE_EQ(w.q, 6.0);
  EXPECT_EQ(stats::bestEnergySplit({0, 1, 2}, 0, 3, 2).tau, -1); // no split leaves 2 points a side
}

TEST(ChangePoints, WelchTestMatchesAHandCalculation) {
  // Means 2 and 5, variances 1 and 1: t = 3 / sqrt(1/3 + 1/3) = 3.6742, df = (2/3)^2 / (2 (1/3)^2 / 2) = 4;
  // two-sided p of t(4) at 3.6742 = 0.021312 (R: 2 * pt(-3.6742, 4); scipy ttest_ind equal_var=False).
  auto w = stats::welchTest({1, 2, 3}, {4, 5, 6});
  EXPECT_NEAR(w.t, 3.6742, 1e-4);
  EXPECT_NEAR(w.df, 4.0, 1e-12);
  EXPECT_NEAR(w.p, 0.021312, 1e-6);
  EXPECT_EQ(stats::welchTest({1, 1}, {2, 2}).p, 0.0); // no spread, different means
  EXPECT_EQ(stats::welchTest({1, 1}, {1, 1}).p, 1.0);
  EXPECT_THROW(stats::welchTest({1}, {2, 3}), std::invalid_argument);
}

TEST(ChangePoints, CleanStepIsFoundAtItsFirstPoint) {
  // 10 ms for 30 points, then 11 ms: one change at index 30, +10 %, both sides without spread.
  for (const auto& o : kAll) {
    SCOPED_TRACE(stats::changePointMethodName(o));
    auto cps = stats::detectChangePoints(steps({{30, 10.0}, {30, 11.0}}), o);
    ASSERT_EQ(cps.size(), 1u);
    EXPECT_EQ(cps[0].index, 30);
    EXPECT_EQ(cps[0].segmentStart, 0);
    EXPECT_EQ(cps[0].segmentEnd, 60);
    EXPECT_NEAR(cps[0].before, 10.0, 1e-12);
    EXPECT_NEAR(cps[0].after, 11.0, 1e-12);
    EXPECT_NEAR(cps[0].change, 0.10, 1e-12);
    EXPECT_EQ(cps[0].p, 0.0);
  }
  // The same with a +-0.5 % wobble on top: still one change at 30, about +10 %.
  for (const auto& o : kAll) {
    SCOPED_TRACE(stats::changePointMethodName(o));
    auto cps = stats::detectChangePoints(wobble(steps({{30, 10.0}, {30, 11.0}})), o);
    ASSERT_EQ(cps.size(), 1u);
    EXPECT_EQ(cps[0].index, 30);
    EXPECT_NEAR(cps[0].change, 0.10, 0.005);
    EXPECT_LT(cps[0].p, 1e-6);
  }
}

TEST(ChangePoints, NoStepNoChangePoint) {
  for (const auto& o : kAll) {
    SCOPED_TRACE(stats::changePointMethodName(o));
    EXPECT_TRUE(stats::detectChangePoints(steps({{120, 10.0}}), o).empty());
    EXPECT_TRUE(stats::detectChangePoints(wobble(steps({{120, 10.0}})), o).empty());
    EXPECT_TRUE(stats::detectChangePoints({10, 11}, o).empty()); // shorter than two segments
  }
}

TEST(ChangePoints, TwoStepsAcrossWindows) {
  // 10 -> 12 at 40, 12 -> 9 at 80 (+20 %, -25 %); 120 points span several 50-point windows.
  for (const auto& o : kAll) {
    SCOPED_TRACE(stats::changePointMethodName(o));
    auto cps = stats::detectChangePoints(wobble(steps({{40, 10.0}, {40, 12.0}, {40, 9.0}})), o);
    ASSERT_EQ(indices(cps), (std::vector<int>{40, 80}));
    EXPECT_NEAR(cps[0].change, 0.20, 0.01);
    EXPECT_NEAR(cps[1].change, -0.25, 0.01);
    EXPECT_EQ(cps[0].segmentEnd, 80); // the segments of neighbours meet
    EXPECT_EQ(cps[1].segmentStart, 40);
  }
}

TEST(ChangePoints, MinimumSegmentLength) {
  // A 3-point excursion: a segment of its own only when segments may be that short.
  auto x = wobble(steps({{30, 10.0}, {3, 15.0}, {30, 10.0}}));
  for (auto o : kAll) {
    SCOPED_TRACE(stats::changePointMethodName(o));
    o.minSegment = 5;
    for (const auto& c : stats::detectChangePoints(x, o)) {
      EXPECT_GE(c.index - c.segmentStart, 5);
      EXPECT_GE(c.segmentEnd - c.index, 5);
    }
    o.minSegment = 3;
    EXPECT_EQ(indices(stats::detectChangePoints(x, o)), (std::vector<int>{30, 33}));
  }
}

TEST(ChangePoints, MinimumMagnitudeDropsSmallChanges) {
  auto x = wobble(steps({{40, 10.0}, {40, 10.3}, {40, 12.0}})); // +3 % at 40, +16.5 % at 80
  stats::ChangePointOptions o;
  EXPECT_EQ(indices(stats::detectChangePoints(x, o)), (std::vector<int>{40, 80}));
  o.minMagnitude = 0.05;
  EXPECT_EQ(indices(stats::detectChangePoints(x, o)), (std::vector<int>{80}));
}

TEST(ChangePoints, Deterministic) {
  std::vector<double> x;
  for (int i = 0; i < 200; ++i) // a pseudo-random history with a step at 120
    x.push_back((i < 120 ? 10.0 : 10.6) * (1 + 0.02 * std::sin(1.7 * i * i)));
  for (const auto& o : kAll) {
    auto a = stats::detectChangePoints(x, o);
    auto b = stats::detectChangePoints(x, o);
    ASSERT_EQ(indices(a), indices(b));
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(a[i].p, b[i].p);
  }
}

TEST(ChangePoints, RejectsBadInput) {
  stats::ChangePointOptions o;
  EXPECT_THROW(stats::detectChangePoints({1, 2, 0, 3}, o), std::invalid_argument); // log of 0
  EXPECT_THROW(stats::detectChangePoints({1, NAN, 3}, o), std::invalid_argument);
  o.window = 8; // fewer than two segments of 5
  EXPECT_THROW(stats::detectChangePoints({1, 2, 3}, o), std::invalid_argument);
  o = {};
  o.minSegment = 1;
  EXPECT_THROW(stats::detectChangePoints({1, 2, 3}, o), std::invalid_argument);
  o = {};
  o.logScale = false;
  EXPECT_NO_THROW(stats::detectChangePoints({-1, 0, 3}, o));
}

TEST(ChangePointSimulation, PrecisionAndRecallAtTheDefaults) {
  // 60 histories of 200 points, normal noise of 1.35 % (the scaled MAD of the thread-CPU
  // calibration in docs/metrics/gate-decision.md), two shifts of 5 % each: both rates >= 0.9.
  stats::ChangePointSimParams p;
  p.sigma = 0.0135;
  p.shifts = 2;
  p.shiftSize = 0.05;
  p.trials = 60;
  p.seed = 7;
  auto r = stats::simulateChangePoints(p);
  EXPECT_EQ(r.truePositives + r.falseNegatives, 120);
  EXPECT_GE(r.precision.rate, 0.9);
  EXPECT_GE(r.recall.rate, 0.9);
  // No shift at all: every detection is false, and they must be rare.
  p.shifts = 0;
  auto none = stats::simulateChangePoints(p);
  EXPECT_EQ(none.truePositives, 0);
  EXPECT_LE(none.historiesWithFalse, 6);
  // Reproducible from the seed.
  auto again = stats::simulateChangePoints(p);
  EXPECT_EQ(again.falsePositives, none.falsePositives);
}

TEST(ChangePointSimulation, RejectsShiftsThatDoNotFit) {
  stats::ChangePointSimParams p;
  p.length = 50;
  p.shifts = 3;
  p.minSpacing = 20;
  EXPECT_THROW(stats::simulateChangePoints(p), std::invalid_argument);
}
