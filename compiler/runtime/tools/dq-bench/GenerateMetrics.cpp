// Generation metrics: TTFT, TPS and the decode limits (formulas in GenerateMetrics.h).
#include "GenerateMetrics.h"

#include <limits>
#include <stdexcept>

namespace dq::bench {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

void checkOrdered(const GenerationTimes &t) {
  double prev = t.prefillStartMs;
  for (size_t k = 0; k < t.tokenOnHostMs.size(); ++k) {
    if (t.tokenOnHostMs[k] < prev)
      throw std::invalid_argument("token " + std::to_string(k) + " arrives at " + std::to_string(t.tokenOnHostMs[k]) +
                                  " ms, before " + std::to_string(prev) + " ms");
    prev = t.tokenOnHostMs[k];
  }
}
} // namespace

double ttftMs(const GenerationTimes &t) {
  if (t.tokenOnHostMs.empty()) throw std::invalid_argument("TTFT needs at least one generated token");
  checkOrdered(t);
  return t.tokenOnHostMs.front() - t.prefillStartMs;
}

double tokensPerSecond(const GenerationTimes &t) {
  const size_t n = t.tokenOnHostMs.size();
  if (n < 2) throw std::invalid_argument("TPS needs at least two generated tokens (got " + std::to_string(n) + ")");
  checkOrdered(t);
  const double ms = t.tokenOnHostMs.back() - t.tokenOnHostMs.front();
  if (ms <= 0) throw std::invalid_argument("TPS: the first and last token arrive at the same time");
  return static_cast<double>(n - 1) / (ms / 1000.0);
}

double DecodeLimits::bandwidthLimitTps() const {
  if (weightBytesPerToken <= 0 || copyBytesPerSecond <= 0) return kInf;
  return copyBytesPerSecond / weightBytesPerToken;
}

double DecodeLimits::launchLimitTps() const {
  if (launchesPerToken <= 0 || launchSeconds <= 0) return kInf;
  return 1.0 / (launchesPerToken * launchSeconds);
}

double DecodeLimits::bindingLimitTps() const {
  const double b = bandwidthLimitTps(), l = launchLimitTps();
  return b < l ? b : l;
}

std::string DecodeLimits::binding() const { return bandwidthLimitTps() <= launchLimitTps() ? "bandwidth" : "launch"; }

double DecodeLimits::fractionOfBinding(double achievedTps) const {
  const double lim = bindingLimitTps();
  return lim == kInf ? 0 : achievedTps / lim;
}

} // namespace dq::bench
