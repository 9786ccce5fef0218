#pragma once
// Typed store records of A/B runs (schema version 3, docs/store.md): samples with round and
// position, checks, exact counters, comparisons, and per-model noise of calibrations.
#include "dynqual/diff/AbTypes.h"
#include "dynqual/store/Store.h"

namespace dynqual::diff {

/// Policy and measurement as run_params (alpha, margin, looks, bootstrap_resamples, seed,
/// samples_per_position, warmup, min_sample_ms, budget_s).
std::map<std::string, std::string> policyParams(const Policy& p, const Measurement& m);

/// Reads policyParams back. Throws std::runtime_error naming the parameter when one is missing
/// or malformed.
Policy policyFromParams(const std::map<std::string, std::string>& params);
/// The timed metric a stored run measured ("latency_ms" for runs stored before the clock was a
/// parameter, which all timed wall).
std::string timingMetricFromParams(const std::map<std::string, std::string>& params);
/// The compile-time metric a stored run measured ("compile_ms" when the run predates the parameter).
std::string compileMetricFromParams(const std::map<std::string, std::string>& params);

/// Writes the checks, counters, samples and comparisons of `r` for run `runId`, and the runtime
/// and program hashes as run_params (diff::hashParams), in one IMMEDIATE transaction (all or
/// nothing). Throws store::StoreError as Store's writers do.
void recordAbResult(store::Store& db, int64_t runId, const AbResult& r);

/// Replaces the comparisons of run `runId` (after a reanalysis that changed them) in one transaction.
void recordComparisons(store::Store& db, int64_t runId, const std::vector<MetricComparison>& comparisons);

/// What a stored A/B run holds: samples, comparisons, checks (without cases), params, kind.
struct StoredAbRun {
  int64_t runId = 0;
  std::string kind;
  std::map<std::string, std::string> params;
  std::vector<Sample> samples;
  std::vector<Sample> compileSamples;  ///< empty unless the run timed compiles
  std::vector<MetricComparison> comparisons;
  std::vector<ModelCheck> checks;
};

/// Loads run `runId` ("latest" = the newest run of kind ab, gate or calibrate; resolve that with
/// latestAbRun). Throws std::runtime_error when the run does not exist or is not an A/B run.
StoredAbRun loadAbRun(store::Store& db, int64_t runId);
/// Id of the newest run of kind ab, gate or calibrate; throws std::runtime_error when there is none.
int64_t latestAbRun(store::Store& db);

/// Noise of one model in an A/A run: scaled MAD (1.4826 MAD) and standard deviation of the
/// per-round log ratios ln(head/base) (docs/metrics/noise.md).
struct NoiseEstimate {
  std::string model;
  int rounds = 0;
  double scaledMad = 0, sd = 0;
};
/// Computes the noise of every model with at least two rounds in `samples`, each round valued by
/// `value` (the run's Policy::roundValue).
std::vector<NoiseEstimate> estimateNoise(const std::vector<Sample>& samples, RoundValue value);
/// Stores calibration noise of the timed `metric` for run `runId` on the run's machine, in one
/// transaction.
void recordNoise(store::Store& db, int64_t runId, const std::vector<NoiseEstimate>& noise,
                 const std::string& metric);
/// Every stored calibration of `model` and `metric` on the machine with `machineFingerprint`,
/// oldest first.
std::vector<NoiseEstimate> noiseHistory(store::Store& db, const std::string& machineFingerprint,
                                        const std::string& model, const std::string& metric);

/// Per-round log ratios of each model of a stored run, in round order, each round valued by
/// `value` (for bench stats).
std::map<std::string, std::vector<double>> logRatiosByModel(const std::vector<Sample>& samples, RoundValue value);

} // namespace dynqual::diff
