#pragma once
// Summary statistics of timed repetitions (docs/metrics/qps.md, latency.md, cpu-percent.md).
// The median here is stats::median (Descriptive.h).
#include <vector>

namespace dynqual::stats {

/// Summary of per-repetition latencies, all in milliseconds except qps.
struct LatencySummary {
  double meanMs = 0;   ///< arithmetic mean of the samples
  double medianMs = 0; ///< middle sample; mean of the two middle ones for an even count
  double p90Ms = 0;    ///< nearest-rank 90th percentile: the ceil(0.9 n)-th smallest sample
  double qps = 0;      ///< 1000 / meanMs (inferences per second of one caller, back to back)
};

/// Summarizes `latencyMs` (one wall-clock sample per repetition, ms). Throws
/// std::invalid_argument for an empty vector or a negative or non-finite sample. A mean of 0
/// (a clock too coarse for the run) gives qps = +inf.
LatencySummary summarizeLatencies(const std::vector<double>& latencyMs);

/// Nearest-rank percentile (p in (0, 100]): the ceil(p n / 100)-th smallest of `samples`, the
/// smallest k with 100 k >= p n (Hyndman & Fan 1996, definition 1), computed in integers for an
/// integer p and as ceil(p n / 100) in floating point otherwise.
/// Throws std::invalid_argument for an empty vector or p outside (0, 100].
double nearestRankPercentile(std::vector<double> samples, double p);

/// CPU utilisation in percent: 100 * cpuSeconds / wallSeconds, where cpuSeconds is user + system
/// time of the process over the same interval (getrusage). It exceeds 100 when several threads
/// ran. Throws std::invalid_argument when wallSeconds <= 0 or cpuSeconds < 0.
double cpuPercent(double cpuSeconds, double wallSeconds);

} // namespace dynqual::stats
