#pragma once
// Monte-Carlo operating characteristics of the whole gate on a stored A/A calibration, sample by
// sample (`dynqual bench stats --mode`, docs/commands/bench.md): each simulated round of a model is
// one of its calibration rounds, drawn with replacement, with a change injected into the samples as
// `--inject-slowdown` injects it into the runs, then valued, tested and corrected as `analyze`
// does (every model a comparison per round value, Holm over the suite, the looks of the policy,
// models that close early stop taking rounds). Pure and seeded.
#include "dynqual/diff/AbTypes.h"
#include "dynqual/stats/Simulation.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dynqual::diff {

/// One calibration round of one model: each arm's samples (ms) and the runs each sample averages.
struct CalibrationRound {
  std::vector<double> base, head;
  int iterations = 1;
  double baseSpreadMs = 0; ///< median over the round's base positions of the scaled MAD of a position's samples
};

/// The calibration rounds of each model in `samples` (rounds missing an arm left out).
std::map<std::string, std::vector<CalibrationRound>> calibrationRounds(const std::vector<Sample>& samples);

struct GateSimulationParams {
  std::map<std::string, std::vector<CalibrationRound>> rounds; ///< per model, >= 2 rounds each
  Policy policy;                                               ///< alpha, margin, looks, round value and tail value
  std::string changedModel;                                    ///< the model whose head gets `change` ("" for A/A)
  SlowdownSpec change;
  /// Keep each model's real A/A bias (the arms as measured). False: each drawn round's arms are
  /// swapped with probability 1/2, which makes every statistic of the A/A log ratios symmetric
  /// about 0 (the arms are exchangeable under A/A) while keeping each model's own spread.
  bool keepBias = false;
  int trials = 1000;
  std::uint64_t seed = 1;
};

struct GateSimulationResult {
  /// Trials in which the changed model got a regression on some comparison (A/A: count 0).
  stats::RateEstimate detected;
  /// Trials in which the changed model got an improvement on its first comparison (after the
  /// rule that an improvement needs both comparisons).
  stats::RateEstimate changedImprovement;
  /// Trials in which any other model (A/A: any model) was flagged regression or improvement.
  stats::RateEstimate falsePositivePerSuite;
  /// Per model: trials in which each of its comparisons ended "no change".
  std::map<std::string, stats::RateEstimate> noChange;
  /// Per model: verdict counts of its first comparison ("regression", ...) and of its second.
  std::map<std::string, std::map<std::string, int>> firstVerdicts, tailVerdicts;
  double meanRounds = 0; ///< rounds of the suite's last open model, averaged over trials
  /// Busy work of the change per model in the changed model's terms (us): the base median M and
  /// spread S it was sized from.
  double medianMs = 0, spreadMs = 0, busyUs = 0;
};

/// Runs the simulation. Sizing of the change follows the engine: M = the median of the changed
/// model's base samples, S = the median over its base positions of the scaled MAD of one
/// position's samples (the engine sizes from one position before round 0; the median over all is
/// its expected value). A sample of k runs gets Shift: + busy; Tail: + busy * Binomial(k, FRAC) / k;
/// Spread: base + W, head + U(0, 2W). Throws std::invalid_argument for a model with fewer than 2
/// rounds, a changed model not in `rounds`, or the errors of the schedule and decide().
GateSimulationResult simulateGateOnSamples(const GateSimulationParams& p);

} // namespace dynqual::diff
