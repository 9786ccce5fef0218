// Latency summary of timed repetitions (docs/metrics/latency.md, qps.md, cpu-percent.md).
#include "dynqual/stats/Latency.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

using namespace dynqual;

TEST(Latency, MedianP90MeanAndQps) {
  // Sorted: 1 2 3 4 5 6 7 8 9 10. Median (5+6)/2 = 5.5; p90 rank ceil(0.9*10) = 9 -> 9;
  // mean 55/10 = 5.5 ms -> QPS 1000/5.5 = 181.818...
  auto s = stats::summarizeLatencies({10, 1, 9, 2, 8, 3, 7, 4, 6, 5});
  EXPECT_DOUBLE_EQ(s.medianMs, 5.5);
  EXPECT_DOUBLE_EQ(s.p90Ms, 9);
  EXPECT_DOUBLE_EQ(s.meanMs, 5.5);
  EXPECT_NEAR(s.qps, 181.8181818, 1e-6);
  // Odd count: median is the middle one; p90 of 3 samples is rank ceil(2.7) = 3.
  auto t = stats::summarizeLatencies({4, 1, 2});
  EXPECT_DOUBLE_EQ(t.medianMs, 2);
  EXPECT_DOUBLE_EQ(t.p90Ms, 4);
  EXPECT_THROW(stats::summarizeLatencies({}), std::invalid_argument);
  EXPECT_THROW(stats::summarizeLatencies({1, NAN}), std::invalid_argument);
}

TEST(Latency, CpuPercent) {
  EXPECT_DOUBLE_EQ(stats::cpuPercent(0.5, 2.0), 25.0);  // 0.5 s CPU over 2 s wall
  EXPECT_DOUBLE_EQ(stats::cpuPercent(3.0, 1.5), 200.0); // two busy threads
  EXPECT_THROW(stats::cpuPercent(1, 0), std::invalid_argument);
}

TEST(Latency, NearestRankIsExactForIntegerPercentiles) {
  // The nearest rank is the smallest k with k/n >= p/100, i.e. 100 k >= p n (Hyndman & Fan
  // definition 1). Checked by counting, in integers, for every integer p <= 100 and n <= 400:
  // p = 7, n = 100 must be rank 7 (0.07 * 100 is 7.000000000000001 in binary floating point).
  for (int n = 1; n <= 400; ++n) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      v[static_cast<size_t>(i)] = i + 1; // the k-th smallest is k
    for (int p = 1; p <= 100; ++p) {
      int k = 1;
      while (100 * k < p * n)
        ++k;
      ASSERT_DOUBLE_EQ(stats::nearestRankPercentile(v, p), k) << "p " << p << " n " << n;
    }
  }
}
