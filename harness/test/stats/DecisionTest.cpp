// The gate's decision rule: the verdict table, decide() on constructed rounds whose p-values and
// intervals follow by hand from the exact distribution, Holm across a family, and the minimum rounds.
#include "dynqual/stats/Decision.h"
#include "dynqual/stats/MultipleTesting.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

using namespace dynqual;
using stats::Direction;
using stats::Verdict;

namespace {
/// log(ratio) + the 2k symmetric offsets +/-0.001, ..., +/-k*0.001 (distinct, so no ties).
std::vector<double> rounds(double ratio, int k) {
  std::vector<double> r;
  for (int i = 1; i <= k; ++i) {
    r.push_back(std::log(ratio) + 0.001 * i);
    r.push_back(std::log(ratio) - 0.001 * i);
  }
  return r;
}
} // namespace

TEST(Decision, VerdictTable) {
  const auto L = Direction::LowerIsBetter, H = Direction::HigherIsBetter;
  // Significant and wholly above 1 + m: worse for latency, better for QPS.
  EXPECT_EQ(stats::classify(0.01, 1.03, 1.08, L, 0.05, 0.02), Verdict::Regression);
  EXPECT_EQ(stats::classify(0.01, 1.03, 1.08, H, 0.05, 0.02), Verdict::Improvement);
  // Wholly below 1 - m: the mirror image.
  EXPECT_EQ(stats::classify(0.01, 0.90, 0.97, L, 0.05, 0.02), Verdict::Improvement);
  EXPECT_EQ(stats::classify(0.01, 0.90, 0.97, H, 0.05, 0.02), Verdict::Regression);
  // Beyond the margin but not significant; significant but straddling the margin.
  EXPECT_EQ(stats::classify(0.2, 1.03, 1.08, L, 0.05, 0.02), Verdict::Inconclusive);
  EXPECT_EQ(stats::classify(0.01, 1.01, 1.05, L, 0.05, 0.02), Verdict::Inconclusive);
  // p == alpha is not significant (p < alpha).
  EXPECT_EQ(stats::classify(0.05, 1.03, 1.08, L, 0.05, 0.02), Verdict::Inconclusive);
  // Inside [1 - m, 1 + m] (closed), significant or not: no change.
  EXPECT_EQ(stats::classify(0.5, 0.99, 1.01, L, 0.05, 0.02), Verdict::NoChange);
  EXPECT_EQ(stats::classify(0.001, 1.005, 1.015, L, 0.05, 0.02), Verdict::NoChange);
  EXPECT_EQ(stats::classify(0.5, 0.98, 1.02, H, 0.05, 0.02), Verdict::NoChange);
  EXPECT_THROW(stats::classify(0.5, 1, 1, L, 0, 0.02), std::invalid_argument);
  EXPECT_THROW(stats::classify(0.5, 1, 1, L, 0.05, 1.0), std::invalid_argument);
}

TEST(Decision, ClearRegressionAndImprovement) {
  // 20 rounds, all log ratios positive and distinct: W+ = 210 (the maximum), exact two-sided
  // p = 2 / 2^20. The offsets are symmetric, so HL = log(1.10) and the ratio is 1.10.
  std::vector<double> r = rounds(1.10, 10);
  stats::DecisionParams p;
  auto d = stats::decide(r, p);
  EXPECT_EQ(d.n, 20);
  EXPECT_NEAR(d.pTwoSided, 2.0 / (1 << 20), 1e-18);
  EXPECT_NEAR(d.ratio, 1.10, 1e-12);
  EXPECT_NEAR(d.medianRatio, 1.10, 1e-12);
  EXPECT_GT(d.ratioLow, 1.02);
  EXPECT_EQ(d.verdict, Verdict::Regression);
  EXPECT_TRUE(std::isfinite(d.medianRatioLow) && d.medianRatioLow <= d.medianRatio);
  EXPECT_TRUE(d.outlierRounds.empty());
  p.direction = Direction::HigherIsBetter;  // e.g. QPS up 10 %
  EXPECT_EQ(stats::decide(r, p).verdict, Verdict::Improvement);
  EXPECT_EQ(stats::decide(rounds(0.90, 10), p).verdict, Verdict::Regression);  // QPS down 10 %
}

TEST(Decision, NoChangeInconclusiveAndTooFewRounds) {
  stats::DecisionParams p;
  // +/-0.1 % noise around 1.0 over 30 rounds: the interval lies well inside [0.98, 1.02].
  auto same = stats::decide(rounds(1.0, 15), p);
  EXPECT_EQ(same.verdict, Verdict::NoChange);
  EXPECT_GT(same.pTwoSided, 0.5);
  // 5 rounds: the smallest two-sided p is 2/32 = 0.0625 >= 0.05 and the 95 % interval is
  // unbounded (P(T+ <= 0) = 1/32 > 0.025), so even a 50 % slowdown is inconclusive.
  auto few = stats::decide({std::log(1.5), std::log(1.51), std::log(1.52), std::log(1.53), std::log(1.54)}, p);
  EXPECT_NEAR(few.pTwoSided, 0.0625, 1e-15);
  EXPECT_EQ(few.ratioLow, 0);
  EXPECT_TRUE(std::isinf(few.ratioHigh));
  EXPECT_EQ(few.verdict, Verdict::Inconclusive);
  // Wide noise straddling the margin: inconclusive.
  std::vector<double> wide;
  for (int i = 1; i <= 6; ++i) {
    wide.push_back(0.05 * i);
    wide.push_back(-0.05 * i);
  }
  EXPECT_EQ(stats::decide(wide, p).verdict, Verdict::Inconclusive);
}

TEST(Decision, OutliersAreFlaggedNeverDropped) {
  std::vector<double> r = rounds(1.0, 10);
  r[7] = std::log(3.0);  // one round three times slower
  stats::DecisionParams p;
  p.bootstrapResamples = 0;
  auto d = stats::decide(r, p);
  EXPECT_EQ(d.n, 20);
  ASSERT_EQ(d.outlierRounds.size(), 1u);
  EXPECT_EQ(d.outlierRounds[0], 7);
  EXPECT_EQ(d.robustZ.size(), 20u);
  EXPECT_TRUE(std::isnan(d.medianRatioLow));  // bootstrap skipped
}

TEST(Decision, FamilyUsesHolmLevels) {
  // A: 20 positive rounds, p = 2^-19. B: 8 positive rounds, p = 2/256 = 0.0078.
  std::vector<stats::Comparison> family = {{rounds(1.10, 10), Direction::LowerIsBetter},
                                           {rounds(1.10, 4), Direction::LowerIsBetter}};
  stats::DecisionParams common;
  // familyAlpha 0.01: A first at 0.005 (rejected), then B at 0.01: 0.0078 < 0.01, rejected; B's
  // 99 % interval has k = 1 (P(T+ <= 0) = 1/256 <= 0.005 < 2/256): [min, max] > 1.02.
  auto d = stats::decideFamily(family, 0.01, common);
  EXPECT_EQ(d[0].verdict, Verdict::Regression);
  EXPECT_EQ(d[1].verdict, Verdict::Regression);
  EXPECT_NEAR(d[1].hl.confidence, 1 - 0.01, 1e-15);
  EXPECT_NEAR(d[0].hl.confidence, 1 - 0.005, 1e-15);
  // familyAlpha 0.006: B's level is 0.006 < 0.0078, so B is not significant.
  auto e = stats::decideFamily(family, 0.006, common);
  EXPECT_EQ(e[0].verdict, Verdict::Regression);
  EXPECT_NE(e[1].verdict, Verdict::Regression);
  EXPECT_TRUE(stats::decideFamily({}, 0.05, common).empty());
}

TEST(Decision, MinRoundsForAlpha) {
  // Smallest n with 2 / 2^n < alpha: 0.05 -> 2/64 = 0.031 (n = 6; 2/32 = 0.0625 is not < 0.05);
  // 0.01 -> 2/256 = 0.0078 (n = 8); 0.001 -> 2/2048 = 0.00098 (n = 11).
  EXPECT_EQ(stats::minRoundsForAlpha(0.05), 6);
  EXPECT_EQ(stats::minRoundsForAlpha(0.01), 8);
  EXPECT_EQ(stats::minRoundsForAlpha(0.001), 11);
  EXPECT_TRUE(stats::roundsWarning(5, 0.05).has_value());
  EXPECT_FALSE(stats::roundsWarning(6, 0.05).has_value());
  EXPECT_THROW(stats::minRoundsForAlpha(0), std::invalid_argument);
  // The claim behind the minimum: at n = 6 all-positive rounds give p = 2/64 < 0.05.
  EXPECT_LT(stats::decide(rounds(1.5, 3), {}).pTwoSided, 0.05);
}

TEST(Decision, Errors) {
  stats::DecisionParams p;
  EXPECT_THROW(stats::decide({}, p), std::invalid_argument);
  EXPECT_THROW(stats::decide({0.1, NAN}, p), std::invalid_argument);
  p.alpha = 1.5;
  EXPECT_THROW(stats::decide({0.1, 0.2}, p), std::invalid_argument);
  p.alpha = 0.05;
  p.bootstrapResamples = -1;
  EXPECT_THROW(stats::decide({0.1, 0.2}, p), std::invalid_argument);
}
