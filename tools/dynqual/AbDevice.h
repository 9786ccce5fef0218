#pragma once
// The device-on-another-machine halves of `dynqual ab` and `dynqual calibrate` (docs/commands/ab.md,
// "On a GPU machine"): --prepare-device DIR compiles each arm's plan here, the MLIR-free
// device_ab.py runs correctness and the ABBA rounds there, and --import-device OUT turns what it
// brought back into the AbResult the statistics, store and reports take.
#include "dynqual/diff/AbTypes.h"
#include "dynqual/store/Records.h"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace dynqual::cli {

/// ab.json of a device plan (format "dynqual-device-ab", version 1).
struct DeviceAbPlan {
  std::string kind;                          ///< "ab" or "calibrate"
  std::string base, head, device;            ///< variant texts; the device both arms run on
  std::vector<std::filesystem::path> models; ///< model folders as prepared here (suite order)
  std::vector<int> looks;                    ///< rounds at which the import analyses the samples
  int samples = 5, warmup = 2;               ///< per ABBA position, as dq-run --reps / --warmup
  double budgetSeconds = 600;                ///< timed rounds on the device
  std::map<std::string, diff::SlowdownSpec>
      injectSlowdown;            ///< "inject_slowdown" (shift PCT) and "inject_slowdown_spec"
  std::filesystem::path planDir; ///< the plan folder (absolute, on this machine)
  /// Sample: one dq-run process per round and model holds both programs and alternates them
  /// (dq-run --alternate); Process: a fresh dq-run per ABBA position.
  diff::Interleave interleave = diff::Interleave::Sample;
  int cpu = -1; ///< the CPU the device run bound dq-run to (device-ab.json), -1 when unbound or unknown
  std::vector<std::string> baseEnv, headEnv; ///< NAME=VALUE settings of each arm's dq-run (ab --a-env/--b-env)
  /// The analysis fixed at --prepare-device, before any data ("analysis" in ab.json): alpha,
  /// margin and round value (the looks above). False for a plan written before it was fixed there.
  bool analysisFixed = false;
  double alpha = 0.05, margin = 0.02;
  diff::RoundValue roundValue = diff::RoundValue::Min;
  std::optional<diff::RoundValue> tailValue; ///< "tail_value" ("none": no second comparison)
};

/// Reads `dir`/ab.json, and `dir`/device-ab.json's "cpu" and "budget_s" when the folder holds a
/// device run.
/// Throws std::runtime_error naming the file and field.
DeviceAbPlan readDeviceAbPlan(const std::filesystem::path& dir);

/// --prepare-device: writes `dir`/base and `dir`/head (one `qualify --prepare` plan per arm,
/// compiled by that arm's dynqual with its pipeline) and `dir`/ab.json. Both arms must be dq on
/// the same device. Throws std::runtime_error for an arm that is not dq, arms on two devices, arms
/// with different environments under sample interleaving (one process runs both), or a `dir` that
/// exists and is not empty. `runtimeSources` maps an arm label ("base", "head") to the source
/// tree its binaries were built from (a gate revision): that tree's compiler/runtime is copied into
/// `dir`/ARM/runtime-src and recorded in ab.json ("runtime_src"), so the device machine builds the
/// arm's own dq-run. Returns the number of models that failed to prepare.
int prepareAbDevice(const std::string& kind, const diff::AbOptions& o, const std::vector<std::string>& suites,
                    const std::filesystem::path& dir,
                    const std::map<std::string, std::filesystem::path>& runtimeSources = {});

/// --import-device: the AbResult of the device run in `out` (device_ab.py's folder) for the plan
/// it names. Correctness: each arm's outputs are compared with the CPU reference here, as `qualify
/// --import-device-results` does (relative L2 gate, bit-exact for data-movement graphs); a model
/// passes when both arms pass every case. Head is not compared with base directly on this path.
/// Timing: the samples of samples.jsonl (latency_ms, wall clock, one run per sample) through
/// diff::analyze at the plan's looks. Throws std::runtime_error naming the file for a missing or
/// malformed result.
diff::AbResult importAbDevice(const std::filesystem::path& out, const DeviceAbPlan& plan, const diff::AbOptions& o,
                              const std::filesystem::path& workDir);

/// The machine the device run reported (CPU, GPU and driver), fingerprint filled, so calibrations
/// and history are kept per device machine.
store::Machine deviceAbMachine(const std::filesystem::path& out);

} // namespace dynqual::cli
