#pragma once
// What `dynqual qualify` does for one model, inside that model's own process: compile once (with
// per-pass times), run every data set and extra binding against the reference (the `dynqual run`
// path), then load the artifact and time repetitions in this process.
#include "dynqual/run/ModelRun.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dynqual::qualify {

/// Compiles like run::CompileFn and returns the per-pass wall-clock times in ms, in pass order.
using TimedCompileFn = std::function<std::vector<std::pair<std::string, double>>(
    const onnx::ModelProto& model, const std::string& pipeline, const std::filesystem::path& artifactPath)>;

/// Timed repetitions of one case (docs/metrics/).
struct PerfResult {
  bool measured = false;
  std::string error;             ///< why nothing was measured ("" when measured)
  std::string timedCase;         ///< the data set or binding whose inputs were timed
  double sessionMs = 0;          ///< read the artifact + create the device, ms
  double firstInferMs = 0;       ///< first runProgram after loading, ms (upload to download)
  std::vector<double> latencyMs; ///< one wall-clock sample per timed repetition, ms
  double cpuPercent = 0;         ///< 100 * (user+system CPU s) / wall s over the timed repetitions
  std::vector<std::pair<std::string, uint64_t>> counters; ///< device counters of the last rep
};

/// Settings of one qualification.
struct QualifyConfig {
  run::RunConfig run; ///< device, pipeline, bindings, seed, dynqual-exec, work folder
  int warmup = 1;     ///< untimed runs after the first inference
  int reps = 10;      ///< timed repetitions (>= 1)
  /// When set, the timed repetitions come from here (device results carried from another
  /// machine, DevicePlan.h) instead of a dynqual-exec process; called with the model and its
  /// timed case.
  std::function<PerfResult(const run::ModelResult&, const run::CaseResult&)> measure;
};

/// Everything learned about one model.
struct ModelQualification {
  run::ModelResult result;                            ///< compile, data sets, bindings
  std::vector<std::pair<std::string, double>> passMs; ///< compile time per pass, ms
  std::string compilerVersion;                        ///< from the artifact ("" without one)
  std::string pipelineSpec;                           ///< exact spec the artifact records
  PerfResult perf;
  /// ru_maxrss of the process that qualified the model (compile, reference and timing), bytes;
  /// unset when unknown (a replay of device results that carry none).
  std::optional<int64_t> peakHostBytes;
  /// Bad input, as opposed to a compiler failure: the file that could not be used and why, keyed
  /// by case name ("" for model.onnx itself, else "test_data_set_K"); messages name the file
  /// relative to the model folder ("test_data_set_0/input_0.pb: input 'x': dim 2 is 4, declared 8").
  std::map<std::string, std::string> inputErrors;
  /// True when every failure of the model is an input error: status "input-error" (exit 2 from
  /// `dynqual qualify` when no model failed otherwise).
  bool inputError = false;
};

/// The input errors of a model folder, found without running anything: model.onnx that does not
/// load, and each stored data set whose files do not parse or whose inputs contradict the
/// declared dtype, rank or a static dim. Keys and messages as ModelQualification::inputErrors.
std::map<std::string, std::string> findInputErrors(const std::filesystem::path& modelDir);

/// Qualifies one model folder. Never throws: problems become a failed result or a perf error.
/// Timing uses the inputs of the first passed case (stored data sets first, then bindings);
/// a model that failed or was skipped is not timed, one whose only failures are input errors is
/// (the other data sets and bindings run as usual).
ModelQualification qualifyModel(const std::filesystem::path& modelDir, const QualifyConfig& config,
                                const TimedCompileFn& compile);

/// Model-level accuracy summary (the L2 table row), over every case's "EP vs CPU" comparison
/// (vs the reference for stored sets, the reference-made expected outputs for bindings):
/// combined_l2 = sqrt(sum (a-b)^2), relative_l2 = combined_l2 / sqrt(sum b^2) over all outputs
/// of all cases, elements and nan_inf_skipped summed.
nlohmann::json accuracySummary(const run::ModelResult& result, double relL2Gate);

/// JSON the qualify-one process prints: {"model": <dynqual-run model object>, "accuracy": ...,
/// "compile": {"total_ms", "passes": [{"pass","ms"}]}, "compiler_version", "pipeline_spec", "perf": {...},
/// "peak_host_bytes", "records": [<store case>...]}, where "records" is caseRecords(q, config)
/// (QualifyRecords.h) in the store's exchange format (store::caseToJson). Throws what
/// caseRecords throws.
nlohmann::json toJson(const ModelQualification& q, const QualifyConfig& config);

} // namespace dynqual::qualify
