#pragma once
// Exact (Clopper-Pearson) confidence interval of a binomial proportion (docs/metrics/clopper-pearson.md).
//
// Source: Clopper & Pearson (1934), "The use of confidence or fiducial limits illustrated in the
// case of the binomial", Biometrika 26.
#include <cstdint>

namespace dynqual::stats {

/// Proportion k / n with its interval (all in [0, 1]).
struct ProportionInterval {
  double estimate = 0;
  double low = 0;
  double high = 0;
};

/// Clopper-Pearson interval for k successes in n trials at level `confidence`, a = 1 - confidence:
///   low  = Beta^{-1}(a / 2; k, n - k + 1)      (0 when k == 0)
///   high = Beta^{-1}(1 - a / 2; k + 1, n - k)  (1 when k == n)
/// (boost::math beta quantiles). Coverage is at least `confidence` for every true proportion.
/// Throws std::invalid_argument for n < 1, k outside [0, n] or confidence outside (0, 1).
ProportionInterval clopperPearson(std::int64_t k, std::int64_t n, double confidence = 0.95);

} // namespace dynqual::stats
