// Wilcoxon signed-rank test: a textbook example, brute-force enumeration of every sign vector
// (independent of the recursion under test), and the normal approximation by hand.
#include "dynqual/stats/SignedRank.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

using namespace dynqual;

namespace {

double phi(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

/// Midrank of |d_i| among the non-zero |d| by counting: #{|d_j| < |d_i|} + (#{|d_j| == |d_i|} + 1) / 2.
std::vector<double> midranksByCounting(const std::vector<double>& d) {
  std::vector<double> r;
  for (double a : d) {
    double less = 0, equal = 0;
    for (double b : d) {
      less += std::fabs(b) < std::fabs(a);
      equal += std::fabs(b) == std::fabs(a);
    }
    r.push_back(less + (equal + 1) / 2);
  }
  return r;
}

struct Tails {
  double greater, less;
};

/// P(W+ >= w) and P(W+ <= w) by listing all 2^n sign vectors (d without zeros).
Tails enumerate(const std::vector<double>& d) {
  std::vector<double> ranks = midranksByCounting(d);
  double w = 0;
  for (size_t i = 0; i < d.size(); ++i)
    w += d[i] > 0 ? ranks[i] : 0;
  size_t n = d.size();
  std::uint64_t ge = 0, le = 0, total = std::uint64_t{1} << n;
  for (std::uint64_t mask = 0; mask < total; ++mask) {
    double s = 0;
    for (size_t i = 0; i < n; ++i)
      if (mask >> i & 1)
        s += ranks[i];
    ge += s >= w - 1e-9;
    le += s <= w + 1e-9;
  }
  return {static_cast<double>(ge) / total, static_cast<double>(le) / total};
}

} // namespace

TEST(SignedRank, HollanderWolfeExample31) {
  // Hollander, Wolfe & Chicken, 3rd ed., Example 3.1 (Hamilton depression scale), z = y - x for
  // n = 9 patients. |z| ranks: 0.01 (1), 0.08 (2), 0.147 (3), ..., positives 0.147 and 0.08 ->
  // T+ = 5. Subsets of {1..9} with sum <= 5: {}, 1, 2, 3, 12, 4, 13, 5, 14, 23 -> 10 of 512, so
  // P(T+ <= 5) = 0.01953 (the book's lower-tail P-value; R: psignrank(5, 9) = 0.01953).
  std::vector<double> z = {-0.952, 0.147, -1.022, -0.43, -0.62, -0.59, -0.49, 0.08, -0.01};
  auto r = stats::signedRankTest(z);
  EXPECT_EQ(r.n, 9);
  EXPECT_EQ(r.zerosDropped, 0);
  EXPECT_FALSE(r.ties);
  EXPECT_DOUBLE_EQ(r.wPlus, 5);
  EXPECT_EQ(r.method, stats::PValueMethod::Exact);
  EXPECT_NEAR(r.pLess, 10.0 / 512, 1e-15);
  EXPECT_NEAR(r.pGreater, 1 - 7.0 / 512, 1e-15); // P(T+ >= 5) = 1 - P(T+ <= 4) = 1 - 7/512
  EXPECT_NEAR(r.pTwoSided, 20.0 / 512, 1e-15);
}

TEST(SignedRank, TinyExactByHand) {
  // d = 1, 2, 3 all positive: W+ = 6, the maximum; only the all-+ pattern reaches it: 1/8.
  auto r = stats::signedRankTest({1, 2, 3});
  EXPECT_NEAR(r.pGreater, 1.0 / 8, 1e-15);
  EXPECT_NEAR(r.pLess, 1.0, 1e-15);
  EXPECT_NEAR(r.pTwoSided, 2.0 / 8, 1e-15);
}

TEST(SignedRank, ZerosAreDropped) {
  // Wilcoxon's method: the two zeros go, the rest is the n = 3 case above.
  auto r = stats::signedRankTest({0, 1, 0, 2, 3});
  EXPECT_EQ(r.n, 3);
  EXPECT_EQ(r.zerosDropped, 2);
  EXPECT_NEAR(r.pGreater, 1.0 / 8, 1e-15);
  auto allZero = stats::signedRankTest({0, 0});
  EXPECT_EQ(allZero.n, 0);
  EXPECT_EQ(allZero.pTwoSided, 1);
}

TEST(SignedRank, ExactWithTiesMatchesEnumerationOfAllSignVectors) {
  // Hand-picked ties (two groups of 2 and one of 3) plus random samples drawn from few values.
  std::vector<std::vector<double>> cases = {
      {1, -1, 2, 2, -3, 0.5, 2, -0.5},
      {1, 1, 1, 1, -1},
      {-2, -2, 3, 3, 3, -3, 1},
  };
  std::mt19937_64 rng(7);
  for (int c = 0; c < 20; ++c) {
    std::vector<double> d;
    int n = 3 + c % 12;
    for (int i = 0; i < n; ++i) {
      double v = static_cast<double>(rng() % 5 + 1); // |d| in 1..5: many ties
      d.push_back(rng() & 1 ? v : -v);
    }
    cases.push_back(d);
  }
  for (const auto& d : cases) {
    Tails t = enumerate(d);
    auto r = stats::signedRankTest(d);
    ASSERT_EQ(r.method, stats::PValueMethod::Exact);
    EXPECT_NEAR(r.pGreater, t.greater, 1e-12);
    EXPECT_NEAR(r.pLess, t.less, 1e-12);
    EXPECT_NEAR(r.pTwoSided, std::min(1.0, 2 * std::min(t.greater, t.less)), 1e-12);
  }
}

TEST(SignedRank, NullDistributionSumsToOneAndIsSymmetric) {
  // Doubled midranks of |d| = 1, 1, 2, 3, 3, 3: 3, 3, 6, 10, 10, 10 (sum 42 = n (n + 1)).
  stats::SignedRankNull null({3, 3, 6, 10, 10, 10});
  EXPECT_EQ(null.maxDoubled(), 42);
  double total = 0;
  for (int s = 0; s <= 42; ++s) {
    total += null.pmf(s);
    EXPECT_DOUBLE_EQ(null.pmf(s), null.pmf(42 - s));
  }
  EXPECT_NEAR(total, 1, 1e-15);
  EXPECT_DOUBLE_EQ(null.pmf(0), 1.0 / 64);
  EXPECT_DOUBLE_EQ(null.pmf(3), 2.0 / 64); // either of the two 3s alone
  EXPECT_THROW(stats::SignedRankNull({2, 0}), std::invalid_argument);
}

TEST(SignedRank, NormalApproximationByHand) {
  // Forced by exactMaxN = 0. d = 1 2 3 4 5 -6: W+ = 15, E = 6*7/4 = 10.5,
  // Var = 6*7*13/24 = 22.75; pGreater = 1 - Phi((15 - 10.5 - 0.5) / sqrt(22.75)) = 0.200839
  // (R: wilcox.test(c(1:5, -6), exact = FALSE)$p.value = 0.4017 two-sided).
  auto r = stats::signedRankTest({1, 2, 3, 4, 5, -6}, 0);
  EXPECT_EQ(r.method, stats::PValueMethod::NormalApprox);
  EXPECT_NEAR(r.pGreater, 0.20083908323488653, 1e-12);
  EXPECT_NEAR(r.pTwoSided, 0.40167816646977306, 1e-12);
  // With ties: |d| = 1 1 2 2 3 3 3 4 -> midranks 1.5 1.5 3.5 3.5 6 6 6 8; positives 1 1 2 3 3 3 ->
  // W+ = 3 + 3.5 + 18 = 24.5; E = 18; Var = 8*9*17/24 - (6 + 6 + 24)/48 = 51 - 0.75 = 50.25.
  auto t = stats::signedRankTest({1, 1, 2, -2, 3, 3, 3, -4}, 0);
  EXPECT_DOUBLE_EQ(t.wPlus, 24.5);
  EXPECT_TRUE(t.ties);
  EXPECT_NEAR(t.pGreater, 1 - phi((24.5 - 18 - 0.5) / std::sqrt(50.25)), 1e-12);
  EXPECT_NEAR(t.pLess, phi((24.5 - 18 + 0.5) / std::sqrt(50.25)), 1e-12);
}

TEST(SignedRank, ExactAndNormalAgreeForLargeN) {
  // At n = 50 the two methods should differ by little: a sanity bound, not a textbook value.
  std::vector<double> d;
  for (int i = 1; i <= 50; ++i)
    d.push_back(i % 3 == 0 ? -i : i);
  auto exact = stats::signedRankTest(d, 50);
  auto normal = stats::signedRankTest(d, 49);
  EXPECT_EQ(exact.method, stats::PValueMethod::Exact);
  EXPECT_EQ(normal.method, stats::PValueMethod::NormalApprox);
  EXPECT_NEAR(exact.pTwoSided, normal.pTwoSided, 0.002);
}

TEST(SignedRank, Errors) {
  EXPECT_THROW(stats::signedRankTest({}), std::invalid_argument);
  EXPECT_THROW(stats::signedRankTest({1, NAN}), std::invalid_argument);
  EXPECT_THROW(stats::signedRankTest({1}, -1), std::invalid_argument);
}
