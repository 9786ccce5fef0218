#pragma once
// Precision and recall of change-point detection on synthetic histories (`dynqual bench
// changepoints`; docs/metrics/change-points.md). Pure and seeded.
#include "dynqual/stats/ChangePoints.h"
#include "dynqual/stats/Simulation.h"

#include <cstdint>
#include <vector>

namespace dynqual::stats {

struct ChangePointSimParams {
  /// Noise in log units, resampled with replacement for every point (e.g. a calibration's
  /// centred per-round log ratios). Empty: normal noise with standard deviation `sigma`.
  std::vector<double> residuals;
  double sigma = 0.01;
  /// Every e_i is multiplied by this. A calibration's residual is the log ratio of two runs, whose
  /// variance is twice one run's, so one run (one history point) has 1/sqrt(2) of its spread.
  double noiseScale = 1.0;
  int length = 200;        ///< points per history
  int shifts = 1;          ///< true change points per history (>= 0)
  double shiftSize = 0.05; ///< each shift multiplies the level by (1 + size) or divides it by it, sign at random
  int minSpacing = 20;     ///< points between two shifts and between a shift and either end, at least
  int tolerance = 5;       ///< a detection within this many points of a true shift matches it
  int trials = 200;        ///< histories
  ChangePointOptions options;
  std::uint64_t seed = 1;
};

struct ChangePointSimResult {
  std::int64_t truePositives = 0;      ///< true shifts matched by a detection (each at most once)
  std::int64_t falsePositives = 0;     ///< detections matching no true shift
  std::int64_t falseNegatives = 0;     ///< true shifts with no detection
  std::int64_t historiesWithFalse = 0; ///< histories with at least one false positive
  /// TP / (TP + FP) and TP / (TP + FN) with Clopper-Pearson 95 % intervals (NaN when the
  /// denominator is 0: no detection at all, or no true shift).
  RateEstimate precision, recall;
  double meanAbsLocationError = 0; ///< over matched shifts, in points
};

/// Simulates `trials` histories: level 10 ms, point i = level_i * exp(e_i), e_i = noiseScale * a draw from the
/// residuals (or N(0, sigma^2)), level_i multiplied by (1 + shiftSize)^(+-1) at each of `shifts`
/// positions drawn uniformly among those keeping minSpacing, then runs detectChangePoints with
/// `options`. A detection matches the nearest unmatched true shift within `tolerance` points
/// (greedy in index order). One std::mt19937_64 seeded with `seed` drives everything.
/// Throws std::invalid_argument for length < 2, shifts < 0, shifts that cannot be placed with
/// minSpacing, shiftSize <= 0, sigma < 0 with no residuals, a non-finite residual, trials < 1,
/// tolerance < 0, noiseScale < 0, or the errors of detectChangePoints.
ChangePointSimResult simulateChangePoints(const ChangePointSimParams& params);

} // namespace dynqual::stats
