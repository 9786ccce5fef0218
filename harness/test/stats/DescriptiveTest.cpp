// Median, mean, quantile, MAD and robust z-scores; every expected value is worked by hand in the
// comment beside it.
#include "dynqual/stats/Descriptive.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

using namespace dynqual;

TEST(Descriptive, MedianOddEvenAndErrors) {
  EXPECT_DOUBLE_EQ(stats::median({3, 1, 2}), 2);      // sorted 1 2 3
  EXPECT_DOUBLE_EQ(stats::median({4, 1, 3, 2}), 2.5); // (2 + 3) / 2
  EXPECT_DOUBLE_EQ(stats::median({7}), 7);
  EXPECT_THROW(stats::median({}), std::invalid_argument);
  EXPECT_THROW(stats::median({1, NAN}), std::invalid_argument);
}

TEST(Descriptive, MeanAndQuantileDefinition7) {
  EXPECT_DOUBLE_EQ(stats::mean({1, 2, 3, 10}), 4);
  EXPECT_THROW(stats::mean({}), std::invalid_argument);
  // Hyndman-Fan type 7 on 1..4: h = 3 p; p = 0.25 -> h = 0.75 -> 1 + 0.75 (2 - 1) = 1.75
  // (R: quantile(1:4, 0.25) == 1.75).
  EXPECT_DOUBLE_EQ(stats::quantile({4, 3, 2, 1}, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(stats::quantile({4, 3, 2, 1}, 0.5), 2.5); // equals the median
  EXPECT_DOUBLE_EQ(stats::quantile({4, 3, 2, 1}, 0), 1);
  EXPECT_DOUBLE_EQ(stats::quantile({4, 3, 2, 1}, 1), 4);
  // h = 3 * 0.9 = 2.7 -> 3 + 0.7 (10 - 3) = 7.9
  EXPECT_NEAR(stats::quantile({1, 2, 3, 10}, 0.9), 7.9, 1e-12);
  EXPECT_THROW(stats::quantile({1, 2}, 1.5), std::invalid_argument);
  EXPECT_THROW(stats::quantile({}, 0.5), std::invalid_argument);
}

// By hand: {4, 1, 9, 2, 7} sorted is 1 2 4 7 9; ceil(5/2) = 3 kept: (1 + 2 + 4) / 3 = 7/3.
// {5, 3, 8, 1}: 2 kept, (1 + 3) / 2 = 2. One or two values: the minimum.
TEST(Descriptive, LowerHalfMeanKeepsTheSmallestHalf) {
  EXPECT_DOUBLE_EQ(stats::lowerHalfMean({4, 1, 9, 2, 7}), 7.0 / 3.0);
  EXPECT_DOUBLE_EQ(stats::lowerHalfMean({5, 3, 8, 1}), 2.0);
  EXPECT_DOUBLE_EQ(stats::lowerHalfMean({6}), 6.0);
  EXPECT_DOUBLE_EQ(stats::lowerHalfMean({6, 2}), 2.0);
  EXPECT_THROW(stats::lowerHalfMean({}), std::invalid_argument);
  EXPECT_THROW(stats::lowerHalfMean({1, std::nan("")}), std::invalid_argument);
}

TEST(Descriptive, MadRawAndScaled) {
  // median 3; |x - 3| = 2 1 0 1 97 -> median 1.
  EXPECT_DOUBLE_EQ(stats::mad({1, 2, 3, 4, 100}), 1);
  EXPECT_DOUBLE_EQ(stats::scaledMad({1, 2, 3, 4, 100}), 1.4826);
  EXPECT_THROW(stats::mad({}), std::invalid_argument);
}

TEST(Descriptive, RobustZUsesMad) {
  // median 3, MAD 1 -> scale 1.4826: z = (x - 3) / 1.4826.
  auto z = stats::robustZScores({1, 2, 3, 4, 100});
  ASSERT_EQ(z.size(), 5u);
  EXPECT_NEAR(z[0], -2 / 1.4826, 1e-12);
  EXPECT_DOUBLE_EQ(z[2], 0);
  EXPECT_NEAR(z[4], 97 / 1.4826, 1e-9); // 65.43: an outlier by the 3.5 cutoff
  EXPECT_GT(std::fabs(z[4]), stats::kRobustZOutlierCutoff);
  EXPECT_LT(std::fabs(z[3]), stats::kRobustZOutlierCutoff);
}

TEST(Descriptive, RobustZFallsBackToMeanAbsoluteDeviation) {
  // median 5, |x - 5| = 0 0 0 0 4 -> MAD 0; mean |x - 5| = 0.8 -> scale 1.2533 * 0.8 = 1.00264;
  // z(9) = 4 / 1.00264 = 3.98947.
  auto z = stats::robustZScores({5, 5, 9, 5, 5});
  EXPECT_DOUBLE_EQ(z[0], 0);
  EXPECT_NEAR(z[2], 4 / (1.2533 * 0.8), 1e-12);
  // Every value equal to the median: scale 0 by both rules, every z is 0.
  for (double v : stats::robustZScores({2, 2, 2}))
    EXPECT_EQ(v, 0);
  EXPECT_THROW(stats::robustZScores({}), std::invalid_argument);
  EXPECT_THROW(stats::robustZScores({1, INFINITY}), std::invalid_argument);
}

#include "dynqual/stats/Accuracy.h"

TEST(RelativeL2, FormulaAndZeroNormRule) {
  // a = (1, 2), b = (1, 4): sum (a-b)^2 = 4, sum b^2 = 17 -> 2 / sqrt(17).
  EXPECT_DOUBLE_EQ(dynqual::stats::relativeL2(4, 17), 2 / std::sqrt(17.0));
  EXPECT_EQ(dynqual::stats::relativeL2(0, 0), 0);
  EXPECT_TRUE(std::isinf(dynqual::stats::relativeL2(1e-3, 0)));
  EXPECT_THROW(dynqual::stats::relativeL2(-1, 1), std::invalid_argument);
  EXPECT_THROW(dynqual::stats::relativeL2(std::nan(""), 1), std::invalid_argument);
}
