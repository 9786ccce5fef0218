#pragma once
// Notes from the stored calibrations of this machine (docs/metrics/noise.md).
#include "dynqual/diff/AbTypes.h"

#include <filesystem>
#include <string>
#include <vector>

namespace dynqual::store {
class Store;
} // namespace dynqual::store

namespace dynqual::cli {

/// Rounds a calibrated noise asks for: stats::roundsToSettle, the rounds at which an A/A
/// comparison settles as "no change" in 80 % of runs (docs/metrics/noise.md): its equivalence
/// interval, at level 1 - 2 a for the first look's level a, fits in the margin. None when
/// `comparisons` (diff::comparisonCount) is 0: nothing is tested.
std::vector<std::string> sizingFromCalibration(store::Store& db, const std::string& machine,
                                               const std::vector<std::filesystem::path>& models, const diff::Policy& p,
                                               const std::string& metric, int comparisons);

/// Models whose noise in this run (scaled MAD of the per-round log ratios, docs/metrics/noise.md)
/// is more than twice the median of their calibrations on this machine: the machine is noisier
/// than its history, so an inconclusive verdict says more about the machine than the change.
std::vector<std::string> noisierThanHistory(store::Store& db, const std::string& machine, const diff::AbResult& r);

} // namespace dynqual::cli
