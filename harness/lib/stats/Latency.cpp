#include "dynqual/stats/Latency.h"

#include "dynqual/stats/Descriptive.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace dynqual::stats {

double nearestRankPercentile(std::vector<double> samples, double p) {
  if (samples.empty())
    throw std::invalid_argument("percentile of no samples");
  if (!(p > 0 && p <= 100))
    throw std::invalid_argument("percentile " + std::to_string(p) + " outside (0, 100]");
  std::sort(samples.begin(), samples.end());
  const auto n = static_cast<uint64_t>(samples.size());
  size_t rank = 0;
  if (p == std::floor(p)) {
    // Integer p: rank = ceil(p n / 100) in integers. In floating point p / 100.0 * n is inexact
    // (7 / 100.0 * 100 = 7.000000000000001 gives rank 8).
    auto pi = static_cast<uint64_t>(p);
    rank = static_cast<size_t>((pi * n + 99) / 100);
  } else {
    rank = static_cast<size_t>(std::ceil(p * static_cast<double>(n) / 100.0));
  }
  return samples[std::clamp<size_t>(rank, 1, samples.size()) - 1];
}

LatencySummary summarizeLatencies(const std::vector<double>& latencyMs) {
  if (latencyMs.empty())
    throw std::invalid_argument("no latency samples (--reps must be at least 1)");
  for (double v : latencyMs)
    if (!std::isfinite(v) || v < 0)
      throw std::invalid_argument("latency sample " + std::to_string(v) + " ms is not a finite non-negative time");
  LatencySummary s;
  s.meanMs = std::accumulate(latencyMs.begin(), latencyMs.end(), 0.0) / static_cast<double>(latencyMs.size());
  s.medianMs = median(latencyMs);
  s.p90Ms = nearestRankPercentile(latencyMs, 90);
  s.qps = s.meanMs > 0 ? 1000.0 / s.meanMs : std::numeric_limits<double>::infinity();
  return s;
}

double cpuPercent(double cpuSeconds, double wallSeconds) {
  if (!(wallSeconds > 0) || !(cpuSeconds >= 0))
    throw std::invalid_argument("CPU percent needs wall > 0 s and CPU >= 0 s (got " + std::to_string(cpuSeconds) +
                                " s over " + std::to_string(wallSeconds) + " s)");
  return 100.0 * cpuSeconds / wallSeconds;
}

} // namespace dynqual::stats
