#pragma once
// `dynqual run` for one model folder: compile once, run every stored data set and extra shape
// bindings through the executor (a dynqual-exec process each, or a replay), compare with stored
// outputs and the CPU reference.
#include "dynqual/compare/Compare.h"
#include "dynqual/exec/Executor.h"
#include "dynqual/scope/OpScope.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dynqual::run {

/// Compiles a loaded model with a pipeline ("production" or a pass-pipeline spec) and writes the
/// artifact to `artifactPath` (.dqp and .dqp.bin). Throws std::runtime_error with one line naming
/// the node/op on failure.
using CompileFn = std::function<void(const onnx::ModelProto& model, const std::string& pipeline,
                                     const std::filesystem::path& artifactPath)>;

/// Settings shared by every model of one `dynqual run`.
struct RunConfig {
  std::string device = "sim";
  std::string pipeline = "production";
  int extraBindings = 4;           ///< extra shape bindings for dynamic models
  uint64_t seed = 1;               ///< input generator and random-binding seed
  double execTimeoutSeconds = 120; ///< limit for each dynqual-exec process
  /// Address-space limit of each dynqual-exec process, bytes (0 = none); a case that runs out of
  /// memory under it fails with "oom under the N MiB memory limit: ..." and the others still run.
  uint64_t memoryLimitBytes = exec::kDefaultChildMemoryBytes;
  std::filesystem::path execPath;  ///< the dynqual-exec binary
  std::filesystem::path workDir;   ///< artifacts, generated inputs and outputs go here
  compare::CompareOptions compare; ///< bitExact is set per model (data-movement graphs)
  /// When set, the executor replays each case through it instead of starting dynqual-exec
  /// (execPath is unused): device results carried from another machine (docs/commands/qualify.md).
  /// The case id is the data-set folder name ("test_data_set_0") or "binding_N" for the N-th
  /// generated binding.
  exec::ReplayFn replay;
};

/// One stored data set or one generated binding.
struct CaseResult {
  std::string name;    ///< "test_data_set_0" or "binding ones"
  std::string kind;    ///< "stored" or "binding"
  std::string binding; ///< "b=1 n=1" for bindings
  bool passed = false;
  bool skipped = false; ///< binding the reference rejects (not a legal shape for the model)
  std::string error;    ///< run or compare error, or the skip reason
  std::vector<std::vector<int64_t>> inputShapes;
  /// Compiled outputs vs the expected outputs (stored data, or the reference for bindings).
  std::optional<compare::Comparison> vsExpected;
  /// Compiled outputs vs the reference (stored data sets only).
  std::optional<compare::Comparison> vsReference;
  /// Reference vs stored outputs (stored data sets only); a failure is a reference defect.
  std::optional<compare::Comparison> referenceVsStored;
  std::vector<std::pair<std::string, uint64_t>> counters; ///< device counters of the run
  double executeMs = 0;
  /// The input_N.pb files the runtime process read (under RunConfig::workDir); empty when the
  /// case never reached the runtime. Timed repetitions reuse them.
  std::vector<std::filesystem::path> inputFiles;
};

enum class ModelStatus { Passed, Failed, Skipped };

/// Everything `dynqual run` learned about one model folder.
struct ModelResult {
  std::string name; ///< folder name
  std::filesystem::path dir;
  ModelStatus status = ModelStatus::Failed;
  std::optional<scope::SkipReason> skipReason;
  std::string detail; ///< skip detail or the failure line
  /// For an op_outside_supported_set skip: every op of the model outside the set (scope::missingOps).
  std::vector<std::string> missingOps;
  bool bitExact = false; ///< data-movement-only graph: float outputs compared bit for bit
  double compileMs = 0;
  /// The compiled artifact (.dqp, under RunConfig::workDir); empty when compilation failed.
  std::filesystem::path artifact;
  std::vector<std::string> outputNames;
  std::vector<CaseResult> cases;
};

/// Runs one model folder (model.onnx plus optional test_data_set_*). Never throws: every
/// problem becomes a Failed (or, for the fixed reasons, Skipped) result with a one-line detail.
ModelResult runModel(const std::filesystem::path& modelDir, const RunConfig& config, const CompileFn& compile);

/// Expands the DIR arguments of `dynqual run`: a folder holding model.onnx is one model; any
/// other folder contributes each sub-folder holding model.onnx (sorted by name). Throws
/// std::runtime_error naming the path when it does not exist or holds no model.
std::vector<std::filesystem::path> expandModelDirs(const std::vector<std::filesystem::path>& dirs);

const char* modelStatusName(ModelStatus s);

} // namespace dynqual::run
