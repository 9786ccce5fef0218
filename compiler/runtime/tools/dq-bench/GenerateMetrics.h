// The generation metrics of `dq-bench generate` (docs/metrics/ttft.md, tps.md,
// decode-limits.md): pure functions of timestamps and measured rates, so they are tested with
// hand-computed numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dq::bench {

/// Timestamps of one generation, in milliseconds on one steady clock.
struct GenerationTimes {
  double prefillStartMs = 0;         ///< just before the prefill run is queued
  std::vector<double> tokenOnHostMs; ///< when token k's id had arrived on the host, k = 0..n-1
};

/// Time to first token (ms) = tokenOnHostMs[0] - prefillStartMs (docs/metrics/ttft.md).
/// Throws std::invalid_argument when no token was generated or a timestamp runs backwards.
double ttftMs(const GenerationTimes &t);

/// Decode throughput (tokens/s) = (n - 1) / ((tokenOnHostMs[n-1] - tokenOnHostMs[0]) / 1000),
/// n = generated tokens (docs/metrics/tps.md): the prefill and the first token are excluded.
/// Throws std::invalid_argument for n < 2 or a zero or negative interval.
double tokensPerSecond(const GenerationTimes &t);

/// Physical limits of decode throughput (docs/metrics/decode-limits.md).
struct DecodeLimits {
  double weightBytesPerToken = 0;   ///< bytes of weights read per decode step
  double copyBytesPerSecond = 0;    ///< measured copy bandwidth (read + write bytes per second)
  double launchesPerToken = 0;      ///< kernel launches and device copies per decode step
  double launchSeconds = 0;         ///< measured seconds per empty-kernel launch
  double bandwidthLimitTps() const; ///< copyBytesPerSecond / weightBytesPerToken
  double launchLimitTps() const;    ///< 1 / (launchesPerToken * launchSeconds)
  /// The smaller of the two limits ("binding"); a limit whose inputs are 0 counts as infinite.
  double bindingLimitTps() const;
  /// "bandwidth" or "launch": which limit binds.
  std::string binding() const;
  /// achievedTps / bindingLimitTps().
  double fractionOfBinding(double achievedTps) const;
};

} // namespace dq::bench
