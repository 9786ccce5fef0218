#pragma once
// Change points of a series in time order: E-divisive means with a significance check (the
// windowed split-and-merge of Apache Otava, or Matteson & James' permutation test) and PELT.
// Pure and deterministic: the same input and options give the same change points
// (docs/metrics/change-points.md).
//
// Sources:
// - Matteson & James (2014), "A Nonparametric Approach for Multiple Change Point Analysis of
//   Multivariate Data", JASA 109(505), 334-345 (E-divisive, its statistic Q and the permutation test).
// - Fleming et al. (2023), "Hunter: Using Change Point Detection to Hunt for Performance
//   Regressions", ICPE '23 (the windowed split step and the merge step), as implemented by Apache
//   Otava (otava.apache.org; defaults window_len 50, max_pvalue 0.001, min_magnitude 0).
// - Killick, Fearnhead & Eckley (2012), "Optimal Detection of Changepoints With a Linear
//   Computational Cost", JASA 107(500), 1590-1598 (PELT).
#include <cstdint>
#include <string>
#include <vector>

namespace dynqual::stats {

/// How candidate change points are proposed.
enum class ChangePointMethod {
  EDivisive, ///< energy statistic Q maximised over splits, hierarchical bisection
  Pelt,      ///< penalised Gaussian mean-change cost, exact minimum by pruned dynamic programming
};

/// How an E-divisive split is judged significant in the split step.
enum class ChangePointTest {
  TTest,       ///< Welch's two-sample t-test between the two sides (Otava's default, windowed)
  Permutation, ///< Matteson & James' permutation test of Q over the whole series (no windows)
};

/// Defaults: PELT proposes, the merge step keeps changes at p <= 0.001 (Otava's max_pvalue), with
/// segments of at least 5 points. PELT is the default because it had the best precision and recall
/// of the three methods on synthetic histories (docs/metrics/change-points.md has the table).
/// The E-divisive settings are Otava's (window 50, first pass at 10 x maxP).
struct ChangePointOptions {
  ChangePointMethod method = ChangePointMethod::Pelt;
  ChangePointTest test = ChangePointTest::TTest;
  int window = 50;         ///< points per sliding window of the split step (Otava window_len)
  double maxP = 0.001;     ///< a change point is kept when its p <= maxP (Otava max_pvalue)
  int minSegment = 5;      ///< points each segment must hold at least (>= 2)
  double minMagnitude = 0; ///< also drop a change point whose |relative change| <= this (0: off)
  bool logScale = true;    ///< detect on ln(x) (needs x > 0): timing changes are multiplicative
  int permutations = 999;  ///< R of the permutation test; p = (1 + #{Q_r >= Q}) / (R + 1)
  std::uint64_t seed = 1;  ///< permutation test only: std::mt19937_64 seed
  double peltPenalty = 0;  ///< PELT: penalty per change in units of ln(n); 0 = kDefaultPeltPenalty
};

/// PELT's default penalty: beta = 3 ln(n) per change on the cost in units of sigma^2, between
/// BIC (2 ln n for the change's location and level) and the modified BIC; chosen by the
/// measurement in docs/metrics/change-points.md.
inline constexpr double kDefaultPeltPenalty = 3.0;

/// One change point: x[index] is the first point of the new segment.
struct ChangePoint {
  int index = 0;
  int segmentStart = 0; ///< the segment before is x[segmentStart, index)
  int segmentEnd = 0;   ///< the segment after is x[index, segmentEnd)
  double before = 0;    ///< level before (geometric mean with logScale, else mean; unit of x)
  double after = 0;     ///< level after, likewise
  double change = 0;    ///< after / before - 1 (0.05 = 5 % higher)
  double p = 1;         ///< Welch t-test between the two adjacent segments (on ln x with logScale)
  double q = 0;         ///< E-divisive statistic Q of the split that proposed it (0 for PELT)
};

/// Result of Welch's two-sample t-test.
struct WelchTest {
  double t = 0;  ///< (mean(b) - mean(a)) / sqrt(var(a)/n_a + var(b)/n_b)
  double df = 0; ///< Welch-Satterthwaite degrees of freedom
  double p = 1;  ///< two-sided
};

/// Welch's t-test (Welch 1947, "The generalization of 'Student's' problem when several different
/// population variances are involved", Biometrika 34): t as above with unbiased variances,
///   df = (v_a/n_a + v_b/n_b)^2 / ((v_a/n_a)^2/(n_a-1) + (v_b/n_b)^2/(n_b-1)),
/// p = 2 P(T_df > |t|) (boost::math). Both variances 0: p = 0 when the means differ, else 1.
/// Throws std::invalid_argument when a side has fewer than 2 values or a value is not finite.
WelchTest welchTest(const std::vector<double>& a, const std::vector<double>& b);

/// The best E-divisive split of z[begin, end).
struct EnergySplit {
  int tau = -1;   ///< first index of the right part; -1 when no split satisfies minSegment
  int kappa = -1; ///< the right part is z[tau, kappa)
  double q = 0;   ///< Q at (tau, kappa)
};

/// E-divisive's split of z[begin, end) (Matteson & James 2014, eq. 5-6, alpha = 1): over
/// begin < tau < kappa <= end, with X = z[begin, tau) (n points) and Y = z[tau, kappa) (m points),
///   Q(X, Y) = (m n / (m + n)) E,
///   E = 2/(m n) sum_ij |X_i - Y_j| - 1/C(n,2) sum_{i<k} |X_i - X_k| - 1/C(m,2) sum_{j<k} |Y_j - Y_k|
/// (a within-sum term is 0 when its side has 1 point), maximised over (tau, kappa) with
/// tau - begin >= minSegment, kappa - tau >= minSegment and end - tau >= minSegment. Ties go to the
/// smallest tau, then kappa. O((end - begin)^2). Throws std::invalid_argument for a range outside
/// z or minSegment < 1.
EnergySplit bestEnergySplit(const std::vector<double>& z, int begin, int end, int minSegment);

/// Change points of `x` (time order, any unit), oldest first.
///
/// E-divisive with the t-test (Otava's algorithm): split step: windows of `window` points
/// starting every window/2 (a window starts at the last change it found when that is later);
/// within a window, bisect: take the interval whose best split has the largest Q, keep the split
/// when Welch's test between its two sides gives p <= 10 maxP (Otava's first pass), and stop at
/// the first split that fails. Merge step: every candidate gets Welch's test between its adjacent
/// segments; while one has p > maxP, a segment shorter than minSegment, or |change| <= minMagnitude
/// (when set), remove the worst (segments too short first, then the largest p, then the smallest
/// |change|; ties to the lowest index) and recompute its neighbours.
/// With ChangePointTest::Permutation: bisection over the whole series, each split kept when its
/// permutation p (points shuffled within every current interval, R times, seeded) <= maxP; then
/// the same merge step.
/// PELT: the exact minimiser of sum_segments sum_i (z_i - mean)^2 / sigma^2 + beta * changes with
/// segments of >= minSegment points, beta = peltPenalty * ln(n), sigma = 1.4826 MAD(diff(z)) / sqrt(2)
/// (robust to the level shifts themselves); then the same merge step.
///
/// z = ln(x) when logScale, else x. Fewer than 2 minSegment points: no change point.
/// Throws std::invalid_argument for a non-finite value, a value <= 0 with logScale, window <
/// 2 minSegment, minSegment < 2, maxP outside (0, 1], permutations < 1 or peltPenalty < 0.
std::vector<ChangePoint> detectChangePoints(const std::vector<double>& x, const ChangePointOptions& options = {});

/// "e-divisive", "e-divisive-permutation" or "pelt".
std::string changePointMethodName(const ChangePointOptions& options);

} // namespace dynqual::stats
