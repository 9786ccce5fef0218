#pragma once
// Percentile bootstrap confidence interval of a median (docs/metrics/bootstrap-ci.md).
//
// Source: Efron & Tibshirani, An Introduction to the Bootstrap (1993), ch. 13.3 (percentile interval).
#include <cstdint>
#include <vector>

namespace dynqual::stats {

/// Bootstrap interval; values in the unit of the sample.
struct BootstrapInterval {
  double estimate = 0; ///< median of the original sample
  double low = 0;      ///< quantile (1 - confidence) / 2 of the resampled medians
  double high = 0;     ///< quantile (1 + confidence) / 2 of the resampled medians
  double confidence = 0;
  int resamples = 0;
  std::uint64_t seed = 0;
};

/// Percentile bootstrap interval of the median of `x`: draw `resamples` samples of size n with
/// replacement, take the median of each, and return the (1 -/+ confidence) / 2 quantiles
/// (Hyndman-Fan definition 7, see quantile()) of those medians. Random indices come from
/// std::mt19937_64 seeded with `seed`, mapped to [0, n) by floor(u * n / 2^64) of each 64-bit
/// output u (no std:: distribution, whose algorithm is library-specific), so the result is
/// reproducible from (x, seed, resamples) on every platform.
/// Throws std::invalid_argument for an empty vector, a non-finite element, confidence outside
/// (0, 1) or resamples < 1.
BootstrapInterval bootstrapMedianInterval(const std::vector<double>& x, double confidence, int resamples,
                                          std::uint64_t seed);

} // namespace dynqual::stats
