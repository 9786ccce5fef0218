#pragma once
// A stored ab, gate or calibrate run made back into the AbResult the gate renderers take: shared
// by `dynqual gate --reanalyze RUN` and `dynqual report RUN`, so both print the same tables.
#include "dynqual/diff/AbStore.h"
#include "dynqual/reports/GateReport.h"
#include "dynqual/store/Store.h"

#include <string>
#include <vector>

namespace dynqual::cli {

/// Which comparisons the rebuilt result carries.
enum class StoredComparisons {
  AsRecorded, ///< the ones that decided the run (what `report` shows)
  Recomputed, ///< recomputed from the stored samples and policy (what `--reanalyze` shows)
};

/// A stored A/B run, rebuilt.
struct RebuiltAbRun {
  diff::StoredAbRun stored;
  diff::AbResult result;        ///< checks, samples, comparisons, counters and the stored outcome
  reports::GateContext context; ///< command = the run's kind; labels, policy and measurement from run_params
  /// Comparisons whose recomputed verdict, ratio, interval, p or rounds differ from the stored
  /// ones, one line each ("m: stored regression ratio 1.1 p 0.01, recomputed ...").
  std::vector<std::string> differences;
  size_t recomputed = 0; ///< comparisons recomputed
};

/// Loads A/B run `runId` (diff::loadAbRun) and rebuilds its result: the stored checks, counters,
/// samples and outcome (infrastructure errors, environment, warnings, binary sizes, rounds,
/// looks), and the comparisons chosen by `which`; the other set is compared with it into
/// `differences`. The policy and measurement come from run_params (diff::policyFromParams).
/// Throws std::runtime_error when the run is not an A/B run, a parameter is malformed, or the
/// outcome was written by a newer dynqual.
RebuiltAbRun rebuildAbRun(store::Store& db, int64_t runId, StoredComparisons which);

/// The measurement settings a run stored as run_params (diff::policyParams); a missing one keeps
/// its default. Throws std::runtime_error naming a malformed parameter.
diff::Measurement measurementFromParams(const std::map<std::string, std::string>& params);

} // namespace dynqual::cli
