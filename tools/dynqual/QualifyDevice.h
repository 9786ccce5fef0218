#pragma once
// The device-on-another-machine steps of `dynqual qualify` (docs/commands/qualify.md, "Devices on
// another machine"): --prepare DIR (compile here, write inputs and a manifest for dq-run) and the
// per-model halves of --prepare and --import-device-results that run in `qualify-one` children.
#include "dynqual/qualify/QualifyModel.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace dynqual::cli {

/// Settings of one qualification, as `qualify` passes them to each `qualify-one` child.
struct QualifySettings {
  std::string device = "sim", pipeline = "production";
  int reps = 10, warmup = 1, bindings = 4;
  uint64_t seed = 1;
  double execTimeout = 120;  ///< seconds per dynqual-exec process
  double modelTimeout = 600; ///< seconds per model process
};

/// The settings as `qualify-one` flags, with `exec` the dynqual-exec binary.
std::vector<std::string> qualifyOneArgs(const QualifySettings& s, const std::filesystem::path& exec);

/// The compiler as qualify calls it: `pipeline` to a .dqp artifact, per-pass times in ms.
qualify::TimedCompileFn timedCompile();

/// qualify-one --prepare: compiles `model` and writes its cases into `planDir`/models/`index`;
/// returns the model's manifest entry (qualify::ModelPlanner::entry). Never throws for a model
/// problem (it becomes the entry's status and detail).
nlohmann::json prepareOne(const std::filesystem::path& model, const QualifySettings& s, int index,
                          const std::filesystem::path& planDir);

/// qualify-one --replay: qualifies `model` (manifest entry `index`) with the outputs, counters
/// and timings of the device-results folder `resultsDir` and returns the qualify-one JSON
/// (qualify::toJson). Throws std::runtime_error when the folder cannot be read.
nlohmann::json replayOne(const std::filesystem::path& model, const QualifySettings& s, int index,
                         const std::filesystem::path& workDir, const std::filesystem::path& resultsDir);

/// qualify --prepare: runs `self qualify-one --prepare` for each model (its own process, limit
/// s.modelTimeout), writes `planDir`/manifest.json and prints a summary to stdout. Throws
/// std::runtime_error when `planDir` exists and is not empty, or cannot be written. Returns the
/// number of models that failed to prepare (compile errors, crashes). `printNext`: end the
/// summary with the qualify steps that follow. `env`: NAME=VALUE settings for the model processes.
int prepareSuite(const std::filesystem::path& self, const std::vector<std::filesystem::path>& suites,
                 const std::vector<std::filesystem::path>& models, const QualifySettings& s,
                 const std::filesystem::path& planDir, bool printNext = true, const std::vector<std::string>& env = {});

/// The settings a device plan was prepared with (manifest "device", "pipeline", "settings").
/// Throws std::runtime_error naming the missing field.
QualifySettings settingsOfPlan(const nlohmann::json& manifest);

} // namespace dynqual::cli
