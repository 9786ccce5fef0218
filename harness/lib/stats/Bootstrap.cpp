#include "dynqual/stats/Bootstrap.h"

#include "dynqual/stats/Descriptive.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

namespace dynqual::stats {

BootstrapInterval bootstrapMedianInterval(const std::vector<double>& x, double confidence, int resamples,
                                          std::uint64_t seed) {
  if (x.empty())
    throw std::invalid_argument("bootstrap interval of no values");
  for (double v : x)
    if (!std::isfinite(v))
      throw std::invalid_argument("bootstrap interval needs finite values (got " + std::to_string(v) + ")");
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("bootstrap interval: confidence " + std::to_string(confidence) + " outside (0, 1)");
  if (resamples < 1)
    throw std::invalid_argument("bootstrap interval: resamples " + std::to_string(resamples) + " < 1");
  BootstrapInterval r;
  r.estimate = median(x);
  r.confidence = confidence;
  r.resamples = resamples;
  r.seed = seed;
  std::mt19937_64 rng(seed);
  const auto n = static_cast<unsigned __int128>(x.size());
  std::vector<double> sample(x.size()), medians(static_cast<size_t>(resamples));
  for (int b = 0; b < resamples; ++b) {
    for (double& s : sample)
      s = x[static_cast<size_t>((static_cast<unsigned __int128>(rng()) * n) >> 64)];
    medians[static_cast<size_t>(b)] = median(sample);
  }
  std::sort(medians.begin(), medians.end());
  r.low = quantile(medians, (1 - confidence) / 2);
  r.high = quantile(std::move(medians), (1 + confidence) / 2);
  return r;
}

} // namespace dynqual::stats
