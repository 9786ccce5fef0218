// Clopper-Pearson interval: closed forms at k = 0 and k = n, and the defining tail equations.
#include "dynqual/stats/Binomial.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

using namespace dynqual;

namespace {
/// P(X >= k) and P(X <= k) for X ~ Binomial(n, p), summed term by term.
double upperTail(int k, int n, double p) {
  double s = 0;
  for (int j = k; j <= n; ++j)
    s += std::exp(std::lgamma(n + 1.0) - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0)) * std::pow(p, j) *
         std::pow(1 - p, n - j);
  return s;
}
double lowerTail(int k, int n, double p) {
  return 1 - upperTail(k + 1, n, p);
}
} // namespace

TEST(Binomial, ZeroAndAllSuccessesClosedForm) {
  // k = 0: upper = 1 - (alpha/2)^(1/n); k = n: lower = (alpha/2)^(1/n). n = 10, 95 %: 0.308498.
  auto z = stats::clopperPearson(0, 10, 0.95);
  EXPECT_EQ(z.low, 0);
  EXPECT_NEAR(z.high, 1 - std::pow(0.025, 0.1), 1e-12);
  EXPECT_NEAR(z.high, 0.308498, 1e-6);
  auto a = stats::clopperPearson(10, 10, 0.95);
  EXPECT_EQ(a.high, 1);
  EXPECT_NEAR(a.low, std::pow(0.025, 0.1), 1e-12);
}

TEST(Binomial, BoundsSolveTheTailEquations) {
  // Clopper & Pearson (1934): P(X >= k | low) = alpha/2 and P(X <= k | high) = alpha/2.
  // Also R: binom.test(5, 10)$conf.int = 0.1870860 0.8129140.
  auto r = stats::clopperPearson(5, 10, 0.95);
  EXPECT_NEAR(r.estimate, 0.5, 1e-15);
  EXPECT_NEAR(r.low, 0.1870860, 1e-6);
  EXPECT_NEAR(r.high, 0.8129140, 1e-6);
  auto s = stats::clopperPearson(3, 20, 0.9);
  EXPECT_NEAR(upperTail(3, 20, s.low), 0.05, 1e-9);
  EXPECT_NEAR(lowerTail(3, 20, s.high), 0.05, 1e-9);
}

TEST(Binomial, Errors) {
  EXPECT_THROW(stats::clopperPearson(0, 0, 0.95), std::invalid_argument);
  EXPECT_THROW(stats::clopperPearson(11, 10, 0.95), std::invalid_argument);
  EXPECT_THROW(stats::clopperPearson(-1, 10, 0.95), std::invalid_argument);
  EXPECT_THROW(stats::clopperPearson(1, 10, 1.0), std::invalid_argument);
}
