#pragma once
// The gate's decision rule for one A/B comparison (docs/metrics/gate-decision.md). Pure function
// of the per-round log ratios; the round is the unit of analysis.
#include "dynqual/stats/Bootstrap.h"
#include "dynqual/stats/HodgesLehmann.h"
#include "dynqual/stats/SignedRank.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dynqual::stats {

/// Which way of a metric is good: latency and bytes are LowerIsBetter, QPS and TPS HigherIsBetter.
enum class Direction { LowerIsBetter, HigherIsBetter };

/// The verdict of one comparison. Inconclusive is also the state of a comparison still open at a look.
/// Identical is no statistic's outcome: the gate gives it, without timing, to a model whose two
/// arms run byte-identical programs on byte-identical runtimes (docs/metrics/gate-decision.md);
/// it counts as a pass.
enum class Verdict { Regression, Improvement, NoChange, Inconclusive, Identical };

/// "regression", "improvement", "no-change", "inconclusive", "identical".
const char* verdictName(Verdict v);

/// Default equivalence margin m: changes within +/-2 % are "no change" (policy).
inline constexpr double kDefaultMargin = 0.02;

struct DecisionParams {
  Direction direction = Direction::LowerIsBetter;
  double alpha = 0.05; ///< for this comparison, already adjusted (holmAlphas); CI level 1 - alpha
  /// Level of the two one-sided tests behind "no change" (interval at 1 - 2 equivalenceAlpha);
  /// 0 means alpha. decideFamily sets it to the family's level, unadjusted (see decideFamily).
  double equivalenceAlpha = 0;
  double margin = kDefaultMargin; ///< m in [0, 1)
  std::uint64_t bootstrapSeed = 1;
  int bootstrapResamples = 2000; ///< 0 skips the median-ratio bootstrap (its fields are NaN)
  int exactMaxN = kSignedRankExactMaxN;
};

/// Everything the gate reports for one comparison. Ratios are head / base.
struct Decision {
  int n = 0;                          ///< rounds
  double ratio = 1;                   ///< exp(HL estimate of the log ratios)
  double ratioLow = 0, ratioHigh = 0; ///< exp of the HL interval at level 1 - alpha (0 / +inf when unbounded)
  double ratioCoverage = 1;           ///< achieved coverage of that interval (HodgesLehmannResult)
  /// exp of the HL interval at level 1 - 2 equivalenceAlpha: "no change" when it lies within the margin
  double equivalenceLow = 0, equivalenceHigh = 0;
  double equivalenceAlpha = 0;                    ///< the level used (params.equivalenceAlpha, or alpha)
  double medianRatio = 1;                         ///< exp(median of the log ratios)
  double medianRatioLow = 0, medianRatioHigh = 0; ///< exp of the percentile-bootstrap interval, level 1 - alpha
  int bootstrapResamples = 0; ///< B used: max(params.bootstrapResamples, bootstrapResamplesFor(alpha)); 0 when skipped
  double pTwoSided = 1;       ///< Wilcoxon signed-rank test of the log ratios against 0
  SignedRankResult test;
  HodgesLehmannResult hl;         ///< on the log scale
  std::vector<double> robustZ;    ///< robust z of each round's log ratio, round order
  std::vector<int> outlierRounds; ///< 0-based rounds with |z| > 3.5: flagged, never dropped
  Verdict verdict = Verdict::Inconclusive;
};

/// The rule on a ratio interval [low, high] (head / base) and the two-sided p-value, m = margin,
/// the margin symmetric on the log scale (+-ln(1 + m): the ratios 1/(1 + m) and 1 + m, so that
/// swapping the arms, [low, high] -> [1/high, 1/low], mirrors the verdict):
///   bad side = ratio > 1 + m for LowerIsBetter, ratio < 1/(1 + m) for HigherIsBetter;
///   Regression:  p < alpha and the interval lies wholly on the bad side
///                (LowerIsBetter: low > 1 + m; HigherIsBetter: high < 1/(1 + m));
///   Improvement: p < alpha and the interval lies wholly on the good side (the mirror image);
///   NoChange:    1/(1 + m) <= low and high <= 1 + m;
///   Inconclusive otherwise.
/// Throws std::invalid_argument for alpha outside (0, 1) or margin outside [0, 1).
Verdict classify(double pTwoSided, double ratioLow, double ratioHigh, Direction direction, double alpha, double margin);

/// classify() where "no change" rests on its own interval [equivalenceLow, equivalenceHigh]: the
/// interval at level 1 - 2 a of the two one-sided tests of an equivalence test at level a
/// (Schuirmann 1987, "A comparison of the two one-sided tests procedure and the power approach for
/// assessing the equivalence of average bioavailability", J. Pharmacokinet. Biopharm. 15:657).
/// Regression and improvement use [ratioLow, ratioHigh] as classify() does. Same errors.
Verdict classify(double pTwoSided, double ratioLow, double ratioHigh, double equivalenceLow, double equivalenceHigh,
                 Direction direction, double alpha, double margin);

/// Decides one comparison from r_i = log(head_i / base_i), one value per round (natural log).
/// Test: signedRankTest(r), which drops rounds with r_i = 0. Ratio interval: exp of
/// hodgesLehmannInterval over the same non-zero r_i at 1 - alpha ([1, 1] when every r_i is 0).
/// Median ratio interval: exp of bootstrapMedianInterval(r, 1 - alpha, B, seed), B at least
/// bootstrapResamplesFor(alpha) (exp is monotone, so
/// these are intervals of the ratio). Robust z: robustZScores(r). Equivalence interval: exp of
/// hodgesLehmannInterval over the same r_i at 1 - 2 a, a = equivalenceAlpha (or alpha when 0).
/// Verdict: classify() with both intervals.
/// Throws std::invalid_argument for an empty vector, a non-finite r_i, alpha outside (0, 1),
/// equivalenceAlpha outside [0, 0.5), margin outside [0, 1) or bootstrapResamples < 0.
Decision decide(const std::vector<double>& logRatios, const DecisionParams& params);

/// One comparison of a family: its per-round log ratios and its metric's direction.
struct Comparison {
  std::vector<double> logRatios;
  Direction direction = Direction::LowerIsBetter;
};

/// Decides a family at family-wise level `familyAlpha`: raw signed-rank p-values of every member,
/// then holmAlphas(p, familyAlpha) gives each member its alpha, then decide() with that alpha
/// (common supplies margin, bootstrap and exactMaxN; its alpha and direction are ignored).
/// "No change" is tested at familyAlpha itself (common.equivalenceAlpha when set), not at the
/// Holm level: the gate passes only when every comparison is "no change" (or an improvement), an
/// intersection-union test, whose level is that of each member test without a multiplicity
/// correction (Berger 1982, "Multiparameter hypothesis testing and acceptance sampling",
/// Technometrics 24:295; Berger & Hsu 1996, Statistical Science 11:283). The claims of
/// regression and improvement keep Holm's family-wise control.
/// Same order as `family`. An empty family gives an empty result. Errors as decide(), and
/// std::invalid_argument for familyAlpha outside (0, 1).
std::vector<Decision> decideFamily(const std::vector<Comparison>& family, double familyAlpha,
                                   const DecisionParams& common);

/// Smallest n at which the exact two-sided signed-rank test can give p < alpha at all: the
/// smallest p over n untied non-zero rounds is 2 / 2^n, so n = smallest integer with 2^(1-n) < alpha.
/// (The HL interval at level 1 - alpha is bounded from that n on as well.) Examples: 0.05 -> 6,
/// 0.01 -> 8, 0.001 -> 11. Throws std::invalid_argument for alpha outside (0, 1).
int minRoundsForAlpha(double alpha);

/// Rounds an A/A comparison needs to settle as "no change" with probability `power`: the HL
/// estimate is about normal with standard error se = 1.05 sigma / sqrt(n) (asymptotic efficiency
/// 3/pi of HL under normal noise; docs/metrics/noise.md) and its interval at level 1 - alpha has
/// half-width z_{1-alpha/2} se; it lies inside +-ln(1 + m) when |estimate| <= ln(1 + m) - z se,
/// which has probability `power` when ln(1 + m) = (z_{1-alpha/2} + z_{(1+power)/2}) se. So
/// n = ceil(((z_{1-alpha/2} + z_{(1+power)/2}) 1.05 sigma / ln(1 + m))^2), the sample size of an
/// equivalence test (two one-sided tests) at a true difference of 0 (Chow, Shao & Wang, "Sample
/// Size Calculations in Clinical Research", 2nd ed., sec. 3.2), with Student t quantiles at n - 1
/// degrees of freedom (iterated) for the few rounds, and at least minRoundsForAlpha(alpha), below
/// which the interval is unbounded. Below 40 rounds, where the exact interval's extreme Walsh
/// averages make that optimistic, n is instead the smallest count at which 2000 simulated A/A runs
/// of normal noise (fixed seed) settle in at least `power` of cases. sigma: per-round noise of the log
/// ratios (scaled MAD, log units); m: margin. Throws std::invalid_argument for sigma < 0, m <= 0,
/// alpha or power outside (0, 1).
int roundsToSettle(double sigma, double margin, double alpha, double power = 0.8);

/// Bootstrap resamples for a percentile interval at level 1 - alpha: ceil(20 / alpha), so that
/// about 10 resamples lie beyond each bound (capped at 10^8). Throws std::invalid_argument for
/// alpha outside (0, 1).
int bootstrapResamplesFor(double alpha);

/// A warning text when `maxRounds` rounds cannot reach p < alpha (maxRounds < minRoundsForAlpha),
/// naming both numbers; std::nullopt otherwise. Pass the smallest alpha a comparison can get
/// (for Holm over M comparisons at look level a: a / M). Errors as minRoundsForAlpha.
std::optional<std::string> roundsWarning(int maxRounds, double alpha);

} // namespace dynqual::stats
