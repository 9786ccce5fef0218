// TTFT, TPS and the decode limits of dq-bench generate, on hand-computed timestamps and rates.
#include "GenerateMetrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

using namespace dq::bench;

TEST(GenerateMetrics, TtftAndTpsFromHandComputedTimestamps) {
  GenerationTimes t;
  t.prefillStartMs = 100.0;
  // First token on the host 7.5 ms after the prefill starts, then 4 more 10 ms apart.
  t.tokenOnHostMs = {107.5, 117.5, 127.5, 137.5, 147.5};
  EXPECT_DOUBLE_EQ(ttftMs(t), 7.5);
  // (5 - 1) tokens / (147.5 - 107.5 = 40 ms) = 100 tokens/s; the prefill does not count.
  EXPECT_DOUBLE_EQ(tokensPerSecond(t), 100.0);
  // Uneven steps: only the first and last arrival matter: 2 / 0.030 s.
  t.tokenOnHostMs = {110.0, 111.0, 140.0};
  EXPECT_DOUBLE_EQ(tokensPerSecond(t), 2.0 / 0.030);
}

TEST(GenerateMetrics, RejectsTooFewTokensAndBackwardsClocks) {
  GenerationTimes t;
  EXPECT_THROW(ttftMs(t), std::invalid_argument);
  t.tokenOnHostMs = {5.0};
  EXPECT_DOUBLE_EQ(ttftMs(t), 5.0);
  EXPECT_THROW(tokensPerSecond(t), std::invalid_argument);
  t.tokenOnHostMs = {5.0, 4.0};
  EXPECT_THROW(tokensPerSecond(t), std::invalid_argument);
  t.prefillStartMs = 6.0;
  t.tokenOnHostMs = {5.0};
  EXPECT_THROW(ttftMs(t), std::invalid_argument);
}

TEST(GenerateMetrics, LimitsAndTheBindingOne) {
  DecodeLimits l;
  l.weightBytesPerToken = 1.7e9;  // 0.85 B fp16 parameters
  l.copyBytesPerSecond = 4.25e12; // 4250 GB/s
  l.launchesPerToken = 500;
  l.launchSeconds = 2e-6;                          // 2 us per launch
  EXPECT_DOUBLE_EQ(l.bandwidthLimitTps(), 2500.0); // 4.25e12 / 1.7e9
  EXPECT_DOUBLE_EQ(l.launchLimitTps(), 1000.0);    // 1 / (500 * 2e-6)
  EXPECT_EQ(l.binding(), "launch");
  EXPECT_DOUBLE_EQ(l.bindingLimitTps(), 1000.0);
  EXPECT_DOUBLE_EQ(l.fractionOfBinding(250.0), 0.25);
  l.launchSeconds = 0.5e-6; // launch limit 4000 tokens/s: bandwidth binds
  EXPECT_EQ(l.binding(), "bandwidth");
  EXPECT_DOUBLE_EQ(l.fractionOfBinding(1250.0), 0.5);
  l.weightBytesPerToken = 0; // nothing measured: no limit, no fraction
  l.launchesPerToken = 0;
  EXPECT_TRUE(std::isinf(l.bindingLimitTps()));
  EXPECT_DOUBLE_EQ(l.fractionOfBinding(10.0), 0.0);
}
