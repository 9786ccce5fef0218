#pragma once
// `dynqual qualify --prepare` and `--import-device-results`: qualification on a device whose
// machine cannot run dynqual (no MLIR there). Prepare compiles every model here and writes, per
// case, the .npy inputs dq-run reads, plus a manifest; the device machine runs dq-run on each case
// (compiler/runtime/tools/dq-run/device_check.py --manifest) and writes results.jsonl and the
// output .npy files; import replays the normal qualification here, taking each case's outputs,
// counters and timings from those results instead of a local dynqual-exec process.
// Folder layout and formats: docs/commands/qualify.md ("Devices on another machine").
#include "dynqual/qualify/QualifyModel.h"
#include "dynqual/run/ModelRun.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dynqual::qualify {

/// The manifest of a prepared folder (also copied into the device-results folder).
inline constexpr const char* kPlanManifest = "manifest.json";
/// One JSON line per dq-run invocation, written on the device machine.
inline constexpr const char* kDeviceResultsFile = "results.jsonl";
/// "format" of the manifest and its version.
inline constexpr const char* kPlanFormat = "dynqual-device-plan";
inline constexpr int kPlanVersion = 1;

/// Thrown by ModelPlanner's executor: the case was written for the device run, not run here.
class CasePlanned : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// sha256 (hex) of the .npy encoding (dq::rt::serializeNpy) of each input_K.pb file, in order.
/// Throws std::runtime_error naming the file for an unreadable file or a dtype without a .npy
/// encoding (bf16).
std::vector<std::string> npyInputHashes(const std::vector<std::filesystem::path>& inputFiles);

/// Prepare side, one model: collects the cases runModel hands to its executor.
class ModelPlanner {
public:
  /// Files go under `planDir` / "models" / `index` (runModel's work folder for this model).
  ModelPlanner(std::filesystem::path planDir, int index);

  /// The work folder to give runModel (RunConfig::workDir).
  std::filesystem::path workDir() const;

  /// A replay backend (exec::ExecConfig::replay) that writes input_K.npy beside each input_K.pb (the .pb is removed),
  /// records the case and throws CasePlanned. A case whose inputs have no .npy encoding (bf16) is recorded with an
  /// "unsupported: ..." reason instead, which import reports as that case's error.
  exec::ReplayFn executor();

  /// The manifest entry of the model: {"index", "name", "dir", "status" ("planned", "skip" or
  /// "FAIL"), "detail", "artifact" (relative to planDir; "" without one), "compile_ms",
  /// "passes" [{"pass","ms"}], "compiler_version", "pipeline_spec", "cases": [{"id",
  /// "inputs" [relative .npy paths], "inputs_sha256" [hex], "timed", "unsupported"}],
  /// "timed_case"}. The timed case is the first planned stored data set, else the first planned
  /// binding (qualify's own choice when every case passes).
  nlohmann::json entry(const ModelQualification& q) const;

private:
  struct Case {
    std::string id;
    std::vector<std::string> inputs, hashes;
    std::string unsupported;
  };
  std::filesystem::path planDir_;
  int index_;
  std::vector<Case> cases_;
};

/// The JSON object in `file`. Throws std::runtime_error naming the file when it cannot be read
/// or does not hold one object.
nlohmann::json readJsonObject(const std::filesystem::path& file);

/// Import side: a device-results folder (manifest.json and results.jsonl from the device run).
class DeviceResults {
public:
  /// Reads `dir`/manifest.json and `dir`/results.jsonl. Throws std::runtime_error naming the
  /// file and line for a missing file, malformed JSON, a manifest of another format or version,
  /// or a result line without "index", "set" and "rc".
  static DeviceResults load(const std::filesystem::path& dir);

  const nlohmann::json& manifest() const { return manifest_; }
  /// The manifest entry of model `index`. Throws std::out_of_range naming the index.
  const nlohmann::json& model(int index) const;
  /// Device description the runs reported ("gpu" of the first line that has one, else "").
  std::string deviceDescription() const;
  /// Device names the result lines report (one per distinct "device").
  std::vector<std::string> devicesSeen() const;

  /// The executor's replay backend for model `index`'s cases: checks the case was planned, that
  /// the inputs written here hash to the prepared ones, that the device run succeeded, and returns
  /// its outputs (read from the .npy files), counters and first executeMs. Throws
  /// std::runtime_error naming the case for each of those problems: the case then fails.
  exec::ReplayFn executor(int index) const;

  /// Timed repetitions of model `index` on case `timed` (its dq-run line with "timed": true):
  /// session_ms, first_infer_ms, latency = total_ms samples (one wall-clock sample per run, ms),
  /// cpu_percent and the counters of that process's first run. A missing or failed line is a
  /// PerfResult with `error` set.
  PerfResult timed(int index, const run::CaseResult& timed) const;

  /// The timed result line of model `index` (dq-run's JSON plus "index", "set", "timed", "rc",
  /// "output_dir"), or nullptr when the device run has none.
  const nlohmann::json* timedLine(int index) const;

private:
  std::filesystem::path dir_;
  nlohmann::json manifest_;
  /// (model index, case id, timed) -> result line
  std::map<std::tuple<int, std::string, bool>, nlohmann::json> lines_;
};

} // namespace dynqual::qualify
