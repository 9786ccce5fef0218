#pragma once
// Hodges-Lehmann one-sample location estimate and its signed-rank confidence interval
// (docs/metrics/hodges-lehmann.md).
//
// Sources: Hodges & Lehmann (1963), "Estimates of location based on rank tests", Ann. Math.
// Statist. 34; Hollander, Wolfe & Chicken, Nonparametric Statistical Methods, 3rd ed., ch. 3.2
// (estimator) and 3.3 (interval, eq. 3.25 and the large-sample eq. 3.29).
#include "dynqual/stats/SignedRank.h"

#include <vector>

namespace dynqual::stats {

/// Hodges-Lehmann estimate: the median of the n (n + 1) / 2 Walsh averages (d_i + d_j) / 2,
/// i <= j (unit of d). All values are used, zeros included. O(n^2) memory.
/// Throws std::invalid_argument for an empty vector or a non-finite element.
double hodgesLehmann(const std::vector<double>& d);

/// Estimate and confidence interval; bounds in the unit of d.
struct HodgesLehmannResult {
  double estimate = 0;
  double low = 0;              ///< k-th smallest Walsh average, -inf when k == 0
  double high = 0;             ///< k-th largest Walsh average, +inf when k == 0
  double confidence = 0;       ///< requested level
  double achievedCoverage = 1; ///< 1 - 2 P(W+ <= k - 1) under H0 (normal approximation above exactMaxN)
  int n = 0;                   ///< observations used (all of d)
  int k = 0;                   ///< order of the bounds among the sorted Walsh averages (1-based)
  PValueMethod method = PValueMethod::Exact;
};

/// Interval [W_(k), W_(N+1-k)] over the N = n (n + 1) / 2 sorted Walsh averages W_(1..N), where
/// k is the largest integer with P0(W+ <= k - 1) <= (1 - confidence) / 2 under the no-ties
/// null distribution of W+ for n observations. The distribution of W+ is discrete, so the
/// achieved coverage 1 - 2 P0(W+ <= k - 1) is >= confidence (reported in achievedCoverage) and
/// exact only for continuous data without ties. For n <= exactMaxN the distribution is exact;
/// above it k = floor(n (n + 1) / 4 + 1/2 - z sqrt(n (n + 1)(2n + 1) / 24)), z = Phi^{-1}((1 + confidence) / 2).
/// When even k = 1 would cover less than `confidence` (2^-n > (1 - confidence) / 2), k = 0 and the
/// interval is (-inf, +inf). All of d is used, zeros included (the interval inverts the test on
/// d - theta, which has no zeros for theta off the data); R's wilcox.test drops zeros first.
/// Throws std::invalid_argument for an empty vector, a non-finite element, confidence outside
/// (0, 1) or exactMaxN < 0.
HodgesLehmannResult hodgesLehmannInterval(const std::vector<double>& d, double confidence,
                                          int exactMaxN = kSignedRankExactMaxN);

} // namespace dynqual::stats
