#pragma once
// Descriptive statistics: median, mean, quantile, median absolute deviation, robust z-scores
// (docs/metrics/robust-z.md). Pure functions.
#include <vector>

namespace dynqual::stats {

/// Normal-consistency factor of the MAD: 1 / Phi^{-1}(3/4) = 1.4826 (Hampel 1974).
inline constexpr double kMadNormalScale = 1.4826;
/// Normal-consistency factor of the mean absolute deviation: sqrt(pi / 2) = 1.2533.
inline constexpr double kMeanAbsDevNormalScale = 1.2533;
/// Modified z-score outlier cutoff |z| > 3.5 (Iglewicz & Hoaglin 1993, "How to Detect and
/// Handle Outliers", ASQC Basic References in Quality Control vol. 16, sec. 3.3).
inline constexpr double kRobustZOutlierCutoff = 3.5;

/// Sample median of `x` (any unit; the result has the unit of x): the middle order statistic for
/// odd n, the mean of the two middle ones for even n. Throws std::invalid_argument for an empty
/// vector or a NaN element.
double median(std::vector<double> x);

/// Arithmetic mean sum(x) / n. Throws std::invalid_argument for an empty vector or a NaN element.
double mean(const std::vector<double>& x);

/// Sample quantile at probability p in [0, 1], Hyndman & Fan (1996) definition 7 (R's default,
/// numpy's "linear"): with x sorted ascending and h = (n - 1) p, the result is
/// x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]) (0-based). quantile(x, 0.5) equals
/// median(x). Throws std::invalid_argument for an empty vector, a NaN element or p outside [0, 1].
double quantile(std::vector<double> x, double p);

/// Lower-half mean: the mean of the ceil(n/2) smallest values of x (unit of x), that is the
/// asymmetrically trimmed mean that drops the largest floor(n/2) values. For timing samples that
/// interference can only lengthen, it keeps the undisturbed half and averages it, which is less
/// noisy than the minimum alone (docs/metrics/round-value.md gives the measured effect). Equals
/// min(x) for n = 1, 2. Throws std::invalid_argument for an empty vector or a NaN element.
double lowerHalfMean(std::vector<double> x);

/// Raw median absolute deviation MAD = median_i |x_i - median(x)| (unit of x).
/// Throws std::invalid_argument for an empty vector or a NaN element.
double mad(const std::vector<double>& x);

/// MAD scaled for consistency with the standard deviation of a normal sample:
/// 1.4826 * mad(x). Same errors as mad().
double scaledMad(const std::vector<double>& x);

/// Robust (modified) z-score of every element, same length and order as x:
///   z_i = (x_i - median(x)) / s,  s = 1.4826 * MAD                        (Iglewicz & Hoaglin 1993)
/// When MAD == 0 (more than half the values equal the median) the scale falls back to
///   s = 1.2533 * mean_i |x_i - median(x)|
/// (the normal-consistent mean absolute deviation around the median; the same fallback as IBM
/// SPSS's modified z-score). That scale is 0 only when every x_i equals the median, and then every
/// z_i is 0. Points with |z_i| > kRobustZOutlierCutoff are outliers; callers flag, never drop them.
/// Throws std::invalid_argument for an empty vector or a non-finite element.
std::vector<double> robustZScores(const std::vector<double>& x);

} // namespace dynqual::stats
