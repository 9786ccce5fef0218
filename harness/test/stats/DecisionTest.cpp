// The gate's decision rule: the verdict table, decide() on constructed rounds whose p-values and
// intervals follow by hand from the exact distribution, Holm across a family, and the minimum rounds.
#include "dynqual/stats/Decision.h"
#include "dynqual/stats/Bootstrap.h"
#include "dynqual/stats/HodgesLehmann.h"
#include "dynqual/stats/MultipleTesting.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
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
  // The margin is symmetric on the log scale: [1/(1+m), 1+m] (1/1.02 = 0.980392).
  EXPECT_EQ(stats::classify(0.5, 0.9804, 1.02, H, 0.05, 0.02), Verdict::NoChange);
  EXPECT_EQ(stats::classify(0.5, 0.98, 1.02, H, 0.05, 0.02), Verdict::Inconclusive);
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
  p.direction = Direction::HigherIsBetter; // e.g. QPS up 10 %
  EXPECT_EQ(stats::decide(r, p).verdict, Verdict::Improvement);
  EXPECT_EQ(stats::decide(rounds(0.90, 10), p).verdict, Verdict::Regression); // QPS down 10 %
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

TEST(Decision, MarginIsSymmetricOnTheLogScale) {
  // Swapping the arms turns an interval [lo, hi] of head/base into [1/hi, 1/lo]: the verdict must
  // mirror (regression <-> improvement, the others kept), which needs the bounds exp(+-ln(1 + m)).
  // [0.9801, 1.00] swapped is [1.00, 1.0203]: 1.0203 > 1.02 is outside, so 0.9801 < 1/1.02 =
  // 0.980392 must be outside as well.
  const auto L = Direction::LowerIsBetter;
  auto mirror = [](Verdict v) {
    return v == Verdict::Regression ? Verdict::Improvement : v == Verdict::Improvement ? Verdict::Regression : v;
  };
  EXPECT_EQ(stats::classify(0.5, 0.9801, 1.00, L, 0.05, 0.02), Verdict::Inconclusive);
  EXPECT_EQ(stats::classify(0.5, 0.9805, 1.00, L, 0.05, 0.02), Verdict::NoChange);
  for (double lo : {0.95, 0.975, 0.9801, 0.9805, 0.99, 1.0, 1.019, 1.0201, 1.03})
    for (double hi : {0.97, 0.9802, 0.9806, 1.0, 1.0199, 1.0203, 1.05, 1.2}) {
      if (hi < lo)
        continue;
      for (double p : {0.001, 0.5})
        EXPECT_EQ(stats::classify(p, lo, hi, L, 0.05, 0.02), mirror(stats::classify(p, 1 / hi, 1 / lo, L, 0.05, 0.02)))
            << "[" << lo << ", " << hi << "] p " << p;
    }
}

TEST(Decision, ZeroRoundsCountTheSameInTestAndInterval) {
  // 30 rounds with equal arms (log ratio exactly 0) and 3 rounds 2.7 times slower. The signed-rank
  // test drops the zeros (Wilcoxon's convention): n = 3, p = 2/8 = 0.25. The interval must rest on
  // the same 3 rounds: at n = 3 it is unbounded, so the verdict cannot be "no change" (with the
  // zeros kept it would be [1, 1]).
  std::vector<double> r(30, 0.0);
  for (int i = 0; i < 3; ++i)
    r.push_back(std::log(2.7) + 0.01 * i);
  stats::DecisionParams p;
  auto d = stats::decide(r, p);
  EXPECT_NEAR(d.pTwoSided, 0.25, 1e-15);
  EXPECT_EQ(d.verdict, Verdict::Inconclusive);
  EXPECT_TRUE(std::isinf(d.ratioHigh));
  // Every round equal: nothing differs, the ratio is 1 and the interval [1, 1].
  auto same = stats::decide(std::vector<double>(20, 0.0), p);
  EXPECT_EQ(same.verdict, Verdict::NoChange);
  EXPECT_DOUBLE_EQ(same.ratioLow, 1.0);
  EXPECT_DOUBLE_EQ(same.ratioHigh, 1.0);
}

TEST(Decision, BootstrapResamplesAreSizedFromAlpha) {
  // At alpha = 0.001 a 99.9 % percentile interval from B = 2000 resamples would rest on the 2nd
  // smallest and largest of them; decide() raises B to ceil(20 / alpha) = 20000, so that about
  // 10 resamples lie beyond each bound. The interval is then the one of bootstrapMedianInterval
  // with B = 20000 and the same seed.
  std::mt19937_64 gen(3);
  std::normal_distribution<double> z(0.0, 0.02);
  std::vector<double> r(40);
  for (double& x : r)
    x = z(gen);
  stats::DecisionParams p;
  p.alpha = 0.001;
  p.bootstrapResamples = 2000;
  p.bootstrapSeed = 9;
  auto d = stats::decide(r, p);
  auto b = stats::bootstrapMedianInterval(r, 0.999, 20000, 9);
  EXPECT_DOUBLE_EQ(d.medianRatioLow, std::exp(b.low));
  EXPECT_DOUBLE_EQ(d.medianRatioHigh, std::exp(b.high));
}

TEST(Decision, RoundsToSettleGiveEightyPercentNoChange) {
  // A/A rounds of normal noise sigma: at n = roundsToSettle(sigma, m, alpha) rounds the
  // Hodges-Lehmann interval at level 1 - alpha must lie inside [1/(1+m), 1+m] ("no change") in
  // about 80 % of runs. Counted over 1000 simulated runs per case; the bound 74 % leaves 4.3
  // binomial standard deviations (sqrt(0.8 * 0.2 / 1000) = 1.3 %) below 80 %. The earlier sizing,
  // n = (z 1.05 sigma / m)^2, settled in about 10 % of runs.
  std::mt19937_64 gen(11);
  for (auto [sigma, alpha] : {std::pair{0.01, 0.05 / 6 / 4}, std::pair{0.02, 0.05 / 6}}) {
    const double m = 0.02;
    int n = stats::roundsToSettle(sigma, m, alpha);
    std::normal_distribution<double> z(0.0, sigma);
    int settled = 0;
    for (int t = 0; t < 1000; ++t) {
      std::vector<double> r(static_cast<size_t>(n));
      for (double& x : r)
        x = z(gen);
      auto hl = stats::hodgesLehmannInterval(r, 1 - alpha);
      settled += hl.low >= -std::log1p(m) && hl.high <= std::log1p(m);
    }
    EXPECT_GE(settled, 740) << "sigma " << sigma << " alpha " << alpha << " n " << n;
    EXPECT_LE(settled, 900) << "sigma " << sigma << " alpha " << alpha << " n " << n; // not oversized either
  }
}

TEST(Decision, OutliersAreFlaggedNeverDropped) {
  std::vector<double> r = rounds(1.0, 10);
  r[7] = std::log(3.0); // one round three times slower
  stats::DecisionParams p;
  p.bootstrapResamples = 0;
  auto d = stats::decide(r, p);
  EXPECT_EQ(d.n, 20);
  ASSERT_EQ(d.outlierRounds.size(), 1u);
  EXPECT_EQ(d.outlierRounds[0], 7);
  EXPECT_EQ(d.robustZ.size(), 20u);
  EXPECT_TRUE(std::isnan(d.medianRatioLow)); // bootstrap skipped
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

TEST(Decision, NoChangeIsAnEquivalenceTestAtTheFamilyLevel) {
  // 8 rounds, |r| all distinct; T+ = 1 + 3 + 5 + 8 = 17 of mean 18, so p is near 1 for both members.
  const std::vector<double> r = {-0.0300, -0.0226, -0.0151, -0.0076, 0.0075, 0.0150, 0.0225, 0.0301};
  // Exact null of T+ for n = 8 (256 sign patterns), subsets with sum <= c for c = 0..6:
  // 1, 2, 3, 5, 7, 10, 14. The interval at 1 - b is [W(k), W(37 - k)] of the 36 sorted Walsh
  // averages, k the largest with P(T+ <= k - 1) <= b / 2:
  //   Holm levels 0.025 and 0.05 (97.5 %, 95 %): k = 3 and 4, W(3) = -0.0226, W(4) = -0.02255,
  //   both beyond -ln(1.02) = -0.0198;
  //   the equivalence interval at 1 - 2 * 0.05 = 90 %: P(T+ <= 5) = 10/256 <= 0.05 < 14/256, so
  //   k = 6: [W(6), W(31)] = [(-0.0300 + -0.0076) / 2, (0.0225 + 0.0150) / 2] = [-0.0188, 0.01875]
  //   (W(5) = (-0.0226 + -0.0151) / 2 = -0.01885 just below it).
  std::vector<stats::Comparison> family = {{r, Direction::LowerIsBetter}, {r, Direction::LowerIsBetter}};
  stats::DecisionParams common;
  common.bootstrapResamples = 0;
  auto d = stats::decideFamily(family, 0.05, common);
  for (const auto& x : d) {
    EXPECT_LT(x.ratioLow, 1 / 1.02); // the Holm interval is wider than the margin ...
    EXPECT_NEAR(std::log(x.equivalenceLow), -0.0188, 1e-12);
    EXPECT_NEAR(std::log(x.equivalenceHigh), 0.01875, 1e-12);
    EXPECT_EQ(x.equivalenceAlpha, 0.05);
    EXPECT_EQ(x.verdict, Verdict::NoChange); // ... and the equivalence interval decides
  }
  EXPECT_NEAR(std::log(d[0].ratioLow) + std::log(d[1].ratioLow), -0.0226 - 0.02255, 1e-12);
  // Asked for 95 % equivalence intervals instead (a = 0.025): k = 4, [-0.02255, 0.02255], which
  // does not fit.
  common.equivalenceAlpha = 0.025;
  for (const auto& x : stats::decideFamily(family, 0.05, common))
    EXPECT_EQ(x.verdict, Verdict::Inconclusive);
  common.equivalenceAlpha = 0.5;
  EXPECT_THROW(stats::decideFamily(family, 0.05, common), std::invalid_argument);
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
