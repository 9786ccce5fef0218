#pragma once
// Typed store records of A/B runs (schema version 3, docs/store.md): samples with round and
// position, checks, exact counters, comparisons, and per-model noise of calibrations.
#include "dynqual/diff/AbTypes.h"
#include "dynqual/store/Store.h"

#include <optional>

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
/// The decision metric a stored run used (run parameter decision_metric; Measured for runs stored
/// before it existed). Throws std::runtime_error for a value this dynqual does not know.
DecisionMetric decisionMetricFromParams(const std::map<std::string, std::string>& params);
/// The metric of a stored run's ab_samples, which decided it: modelled_device_ms when the
/// modelled device time decided, else timingMetricFromParams. Comparisons of the other timing
/// metric are the side metric's (MetricComparison::deciding false when loaded).
std::string decidingMetricFromParams(const std::map<std::string, std::string>& params);
/// The compile-time metric a stored run measured ("compile_ms" when the run predates the parameter).
std::string compileMetricFromParams(const std::map<std::string, std::string>& params);

/// Writes the checks, counters, samples and comparisons of `r` for run `runId`, and the runtime
/// and program hashes as run_params (diff::hashParams), in one IMMEDIATE transaction (all or
/// nothing). Throws store::StoreError as Store's writers do.
void recordAbResult(store::Store& db, int64_t runId, const AbResult& r);

/// Replaces the comparisons of run `runId` (after a reanalysis that changed them) in one transaction.
void recordComparisons(store::Store& db, int64_t runId, const std::vector<MetricComparison>& comparisons);

/// Version of the A/B outcome record (ab_outcomes, schema version 6) this build writes and reads.
inline constexpr int kAbRecordVersion = 1;

/// What an A/B run ended with beyond its samples, checks and comparisons (ab_outcomes): the exit
/// code and verdict line it printed, rounds, looks, and the infrastructure errors, warnings,
/// environment check, binary sizes and injected slowdowns of its AbResult.
struct StoredOutcome {
  int recordVersion = kAbRecordVersion;
  int exitCode = 0; ///< diff::exitCodeFor of the result as recorded
  std::string verdictLine;
  int rounds = 0, looksDone = 0;
  bool budgetExhausted = false;
  double wallSeconds = 0;
  std::vector<std::string> infraErrors, warnings, envWarnings;
  Environment envStart, envEnd;
  std::map<std::string, std::pair<uint64_t, uint64_t>> binaryBytes;
  std::map<std::string, double> slowdownUs;
};

/// What a stored A/B run holds: samples, comparisons, checks, params, kind, outcome.
struct StoredAbRun {
  int64_t runId = 0;
  std::string kind;
  std::map<std::string, std::string> params;
  std::vector<Sample> samples;
  std::vector<Sample> compileSamples; ///< empty unless the run timed compiles
  /// Samples of the side metric (AbResult::sideSamples); empty for runs without one and for runs
  /// recorded before schema version 8, whose side comparisons stay as recorded.
  std::vector<Sample> sideSamples;
  std::vector<MetricComparison> comparisons;
  std::vector<ModelCheck> checks;
  /// Absent for runs recorded before schema version 6, and for runs that never recorded a result;
  /// when present, `checks` carry their cases too.
  std::optional<StoredOutcome> outcome;
};

/// Writes the outcome row of `r` for run `runId` (part of recordAbResult's transaction; the
/// caller holds the transaction).
void insertAbOutcome(store::Store& db, int64_t runId, const AbResult& r);
/// Reads the outcome row of run `runId`; nullopt when the store predates it or the run has none.
/// The cases of each check (names, errors, the comparisons' verdicts, reasons, combined and
/// per-output L2) and the arms' versions, kept in the row, are put back into `checks`. Throws
/// std::runtime_error ("unsupported: ... written by a newer dynqual") when the record version is
/// newer than kAbRecordVersion, or naming the field when the row is malformed.
std::optional<StoredOutcome> loadAbOutcome(store::Store& db, int64_t runId, std::vector<ModelCheck>& checks);

/// True for the run kinds recorded by recordAbResult: ab, gate, calibrate and bisect-step (one
/// step of a bisection is one A/B). These are the runs loadAbRun reads.
bool isAbRunKind(const std::string& kind);
/// Loads run `runId` ("latest" = the newest A/B run, isAbRunKind; resolve that with latestAbRun).
/// Throws std::runtime_error when the run does not exist or is not an A/B run.
StoredAbRun loadAbRun(store::Store& db, int64_t runId);
/// Id of the newest A/B run (isAbRunKind); throws std::runtime_error when there is none.
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
void recordNoise(store::Store& db, int64_t runId, const std::vector<NoiseEstimate>& noise, const std::string& metric);
/// Every stored calibration of `model` and `metric` on the machine with `machineFingerprint`,
/// oldest first.
std::vector<NoiseEstimate> noiseHistory(store::Store& db, const std::string& machineFingerprint,
                                        const std::string& model, const std::string& metric);

/// Per-round log ratios of each model of a stored run, in round order, each round valued by
/// `value` (for bench stats).
std::map<std::string, std::vector<double>> logRatiosByModel(const std::vector<Sample>& samples, RoundValue value);

} // namespace dynqual::diff
