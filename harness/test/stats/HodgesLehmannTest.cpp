// Hodges-Lehmann estimate and interval: Walsh averages by hand and the Hollander-Wolfe example.
#include "dynqual/stats/HodgesLehmann.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

using namespace dynqual;

TEST(HodgesLehmann, MedianOfWalshAverages) {
  // Walsh averages of 1 2 3: 1 1.5 2 2 2.5 3 -> median 2.
  EXPECT_DOUBLE_EQ(stats::hodgesLehmann({1, 2, 3}), 2);
  // Of 1 2 10: 1 1.5 5.5 2 6 10 -> sorted 1 1.5 2 5.5 6 10 -> (2 + 5.5) / 2 = 3.75.
  EXPECT_DOUBLE_EQ(stats::hodgesLehmann({1, 2, 10}), 3.75);
  EXPECT_DOUBLE_EQ(stats::hodgesLehmann({4}), 4);
  EXPECT_THROW(stats::hodgesLehmann({}), std::invalid_argument);
  EXPECT_THROW(stats::hodgesLehmann({NAN}), std::invalid_argument);
}

TEST(HodgesLehmann, HollanderWolfeIntervalExample) {
  // Hollander, Wolfe & Chicken, 3rd ed., Examples 3.1-3.3 (n = 9): estimate -0.46 (the book's
  // value). For a 95 % interval the tail is 0.025: P(T+ <= 5) = 10/512 = 0.0195 <= 0.025 <
  // P(T+ <= 6) = 14/512, so k = 6 and the achieved coverage is 1 - 20/512 = 0.9609 (the book's
  // 96.1 %). Bounds: the 6th smallest and 6th largest (40th) of the 45 Walsh averages, listed by
  // hand: -0.786 = (-0.952 - 0.62) / 2 and -0.01 = (-0.01 - 0.01) / 2.
  std::vector<double> z = {-0.952, 0.147, -1.022, -0.43, -0.62, -0.59, -0.49, 0.08, -0.01};
  auto r = stats::hodgesLehmannInterval(z, 0.95);
  EXPECT_NEAR(r.estimate, -0.46, 1e-12);
  EXPECT_EQ(r.k, 6);
  EXPECT_EQ(r.method, stats::PValueMethod::Exact);
  EXPECT_NEAR(r.achievedCoverage, 1 - 20.0 / 512, 1e-15);
  EXPECT_NEAR(r.low, -0.786, 1e-12);
  EXPECT_NEAR(r.high, -0.01, 1e-12);
}

TEST(HodgesLehmann, TooFewObservationsGiveAnUnboundedInterval) {
  // n = 5: P(T+ <= 0) = 1/32 = 0.03125 > 0.025, so no k works at 95 % -> (-inf, inf).
  auto r = stats::hodgesLehmannInterval({1, 2, 3, 4, 5}, 0.95);
  EXPECT_EQ(r.k, 0);
  EXPECT_TRUE(std::isinf(r.low) && r.low < 0);
  EXPECT_TRUE(std::isinf(r.high) && r.high > 0);
  // n = 6: 1/64 = 0.0156 <= 0.025 < 2/64 -> k = 1: the smallest and largest data values.
  auto s = stats::hodgesLehmannInterval({1, 2, 3, 4, 5, 6}, 0.95);
  EXPECT_EQ(s.k, 1);
  EXPECT_DOUBLE_EQ(s.low, 1);
  EXPECT_DOUBLE_EQ(s.high, 6);
  EXPECT_NEAR(s.achievedCoverage, 1 - 2.0 / 64, 1e-15);
}

TEST(HodgesLehmann, NormalApproximationCriticalValue) {
  // n = 60 with exactMaxN = 50: k = floor(60*61/4 + 0.5 - 1.959964 * sqrt(60*61*121/24))
  // = floor(915.5 - 1.959964 * 135.83998) = floor(649.26) = 649 (hand computation).
  std::vector<double> d;
  for (int i = 0; i < 60; ++i)
    d.push_back(i);
  auto r = stats::hodgesLehmannInterval(d, 0.95);
  EXPECT_EQ(r.method, stats::PValueMethod::NormalApprox);
  EXPECT_EQ(r.k, 649);
  EXPECT_NEAR(r.estimate, 29.5, 1e-12); // symmetric sample: centre of symmetry
  EXPECT_NEAR(r.low + r.high, 59, 1e-12);
  EXPECT_GT(r.achievedCoverage, 0.95);
  EXPECT_LT(r.achievedCoverage, 0.955);
}

TEST(HodgesLehmann, Errors) {
  EXPECT_THROW(stats::hodgesLehmannInterval({1, 2}, 1.0), std::invalid_argument);
  EXPECT_THROW(stats::hodgesLehmannInterval({1, 2}, 0.0), std::invalid_argument);
  EXPECT_THROW(stats::hodgesLehmannInterval({}, 0.9), std::invalid_argument);
}
