#pragma once
// Monte-Carlo operating characteristics of the sequential gate (`dynqual bench stats`;
// docs/metrics/gate-decision.md). Pure and seeded.
#include "dynqual/stats/Binomial.h"
#include "dynqual/stats/Decision.h"
#include "dynqual/stats/Sequential.h"

#include <cstdint>
#include <vector>

namespace dynqual::stats {

struct SimulationParams {
  std::vector<double> residuals; ///< A/A per-round log ratios from a calibration (>= 2 values)
  bool centre = true;            ///< subtract their Hodges-Lehmann estimate first (the test's location)
  double effect = 0;             ///< true relative change of head vs base: log(1 + effect) is added to every round
  double driftPerRound = 0;      ///< log units added per round: round j (1-based) gets j * drift
  double outlierRate = 0;        ///< per round, probability of an outlier
  double outlierMagnitude = 0;   ///< log units added to an outlier round, sign + or - with probability 1/2
  double tailDf = 0;    ///< > 0: each residual is multiplied by sqrt(df / X), X ~ chi-square(df) (t-type tails)
  int trials = 2000;    ///< T simulated gate runs
  int comparisons = 10; ///< M comparisons per suite, all with the same effect; Holm across them
  double alpha = 0.05;  ///< suite-level alpha, spent over the looks
  double margin = kDefaultMargin;
  Direction direction = Direction::LowerIsBetter;
  LookSchedule schedule;
  std::uint64_t seed = 1;
};

/// count / total with its Clopper-Pearson 95 % interval (NaN rate and bounds when total == 0).
struct RateEstimate {
  std::int64_t count = 0;
  std::int64_t total = 0;
  double rate = 0, low = 0, high = 0;
};

/// `count` of `total` as a RateEstimate: rate = count / total with its Clopper-Pearson 95 %
/// interval (Clopper and Pearson 1934, stats::clopperPearson); rate and bounds NaN when total == 0.
RateEstimate rateEstimate(std::int64_t count, std::int64_t total);

struct SimulationResult {
  /// Comparisons flagged (Regression or Improvement) in a direction the true effect does not
  /// have: any flag when effect == 0, the opposite flag otherwise. Out of T * M comparisons.
  RateEstimate falsePositivePerComparison;
  /// Trials in which at least one comparison got such a flag. Out of T.
  RateEstimate falsePositivePerSuite;
  /// Comparisons ending NoChange. Out of T * M.
  RateEstimate noChange;
  /// Comparisons flagged in the true effect's direction (Regression when the effect is bad for
  /// `direction`, Improvement when good; count 0 when effect == 0). Out of T * M.
  RateEstimate detection;
  double meanRounds = 0; ///< rounds at which the suite stopped, averaged over trials
};

/// Simulates `trials` runs of the full sequential gate (startSuite / applyLook over
/// schedule, Holm across the M comparisons at every look, bootstrap skipped since the verdict
/// does not use it). Each round of each comparison is r = e + log(1 + effect) + j * drift
/// [+/- outlierMagnitude], e resampled with replacement from the (centred) residuals
/// [times the t-scale]. One std::mt19937_64 seeded with `seed` drives everything, so the result
/// is reproducible from the parameters. Throws std::invalid_argument for fewer than 2 residuals, a
/// non-finite residual, effect <= -1, trials or comparisons < 1, outlierRate outside [0, 1],
/// tailDf < 0, or the errors of the schedule and decide().
SimulationResult simulateGate(const SimulationParams& params);

} // namespace dynqual::stats
