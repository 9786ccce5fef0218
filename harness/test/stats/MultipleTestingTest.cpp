// Holm, Benjamini-Hochberg and Bonferroni on a small list, adjusted by hand.
#include "dynqual/stats/MultipleTesting.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

using namespace dynqual;

namespace {
// m = 4; sorted: 0.005 (index 3), 0.01 (0), 0.03 (2), 0.04 (1).
const std::vector<double> kP = {0.01, 0.04, 0.03, 0.005};
} // namespace

TEST(MultipleTesting, Bonferroni) {
  auto a = stats::bonferroniAdjust(kP); // 4 p, capped at 1
  EXPECT_NEAR(a[0], 0.04, 1e-15);
  EXPECT_NEAR(a[1], 0.16, 1e-15);
  EXPECT_NEAR(a[2], 0.12, 1e-15);
  EXPECT_NEAR(a[3], 0.02, 1e-15);
  EXPECT_DOUBLE_EQ(stats::bonferroniAdjust({0.5, 0.9})[1], 1.0);
}

TEST(MultipleTesting, HolmByHand) {
  // (m - j + 1) p_(j): 4*0.005 = 0.02, 3*0.01 = 0.03, 2*0.03 = 0.06, 1*0.04 = 0.04;
  // running max: 0.02, 0.03, 0.06, 0.06. Back in input order: 0.03 0.06 0.06 0.02.
  auto a = stats::holmAdjust(kP);
  EXPECT_NEAR(a[0], 0.03, 1e-15);
  EXPECT_NEAR(a[1], 0.06, 1e-15);
  EXPECT_NEAR(a[2], 0.06, 1e-15);
  EXPECT_NEAR(a[3], 0.02, 1e-15);
}

TEST(MultipleTesting, BenjaminiHochbergByHand) {
  // m p_(j) / j: 0.02, 0.02, 0.04, 0.04; running min from the top: 0.02 0.02 0.04 0.04.
  // Input order: 0.02 0.04 0.04 0.02.
  auto a = stats::benjaminiHochbergAdjust(kP);
  EXPECT_NEAR(a[0], 0.02, 1e-15);
  EXPECT_NEAR(a[1], 0.04, 1e-15);
  EXPECT_NEAR(a[2], 0.04, 1e-15);
  EXPECT_NEAR(a[3], 0.02, 1e-15);
}

TEST(MultipleTesting, BenjaminiHochbergNeedsTheRunningMinimum) {
  // m = 2: m p_(j) / j = 2 * 0.01 / 1 = 0.02 and 2 * 0.011 / 2 = 0.011. The step-up running minimum
  // from the largest p down gives 0.011 for both; without it the first would stay 0.02.
  auto a = stats::benjaminiHochbergAdjust({0.01, 0.011});
  EXPECT_NEAR(a[0], 0.011, 1e-15);
  EXPECT_NEAR(a[1], 0.011, 1e-15);
}

TEST(MultipleTesting, HolmAlphasReproduceHolmRejections) {
  // alpha = 0.05: levels 0.0125, 0.01667, 0.025, 0.05 by sorted position. Holm rejects the first
  // two (0.005 < 0.0125, 0.01 < 0.01667) and stops at 0.03 >= 0.025; 0.04 is not rejected although
  // 0.04 < 0.05, so its alpha is cut to its own p (0.04).
  auto al = stats::holmAlphas(kP, 0.05);
  EXPECT_NEAR(al[3], 0.0125, 1e-15);
  EXPECT_NEAR(al[0], 0.05 / 3, 1e-15);
  EXPECT_NEAR(al[2], 0.025, 1e-15);
  EXPECT_NEAR(al[1], 0.04, 1e-15);
  auto adj = stats::holmAdjust(kP);
  for (size_t i = 0; i < kP.size(); ++i)
    EXPECT_EQ(kP[i] < al[i], adj[i] < 0.05) << i;
}

TEST(MultipleTesting, EmptyFamilyAndErrors) {
  EXPECT_TRUE(stats::holmAdjust({}).empty());
  EXPECT_TRUE(stats::benjaminiHochbergAdjust({}).empty());
  EXPECT_THROW(stats::holmAdjust({0.1, 1.5}), std::invalid_argument);
  EXPECT_THROW(stats::bonferroniAdjust({-0.1}), std::invalid_argument);
  EXPECT_THROW(stats::benjaminiHochbergAdjust({NAN}), std::invalid_argument);
  EXPECT_THROW(stats::holmAlphas({0.1}, 0), std::invalid_argument);
}
