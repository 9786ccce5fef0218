#pragma once
// The flags ab, gate and calibrate share (statistics, measurement, outputs, the device split)
// and the arms they name.
#include "dynqual/diff/AbTypes.h"
#include "dynqual/diff/Slowdown.h"
#include "dynqual/exec/Variant.h"
#include "dynqual/exec/Executor.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dynqual::cli {

struct AbFlags {
  std::vector<std::string> suites;
  double alpha = 0.05, margin = 0.02;
  std::vector<int> looks; ///< empty: stats::kDefaultLookRounds, or kSampleInterleaveLookRounds
  double budget = 600;
  int samples = 0, warmup = 2, bootstrap = 2000; ///< samples 0: 5, or 20 when interleaving samples
  double minSampleMs = 0;                        ///< 0: 1 ms, or 4 ms when interleaving samples
  uint64_t seed = 1;
  std::vector<std::string> inject; ///< MODEL=SPEC (diff::parseSlowdownSpec)
  std::string runnerConfig, workDir, format = "md", outDir, db;
  std::string clock = "auto";      ///< auto | wall | thread-cpu | process-cpu
  std::string interleave = "auto"; ///< auto | process | sample
  std::string pinCpu = "auto";     ///< auto | none | CPU number (sample interleaving only)
  std::string roundValue = "auto"; ///< auto | min | lower-half-mean | mean | median | p90
  std::string tailValue = "auto";  ///< auto | none | a round value: the second comparison per model
  /// measured | modelled-device-time: the metric that decides (diff::DecisionMetric)
  std::string metric = diff::decisionMetricName(diff::kDefaultDecisionMetric);
  bool noDb = false;
  bool compileTime = false;
  std::string prepareDevice; ///< --prepare-device DIR: compile both arms' plans for a device machine, run nothing
  std::string importDevice;  ///< --import-device OUT: analyse and record what device_ab.py brought back
  double compileTimeout = 600, runTimeout = 300;
};

/// Adds the shared flags (suite positional, --alpha, --margin, --looks, --budget, --samples,
/// --warmup, --min-sample-ms, --seed, --bootstrap, --inject-slowdown, --runner-config, --work-dir,
/// --format, --out, --db, --no-db, --compile-timeout, --run-timeout, --clock, --interleave,
/// --pin-cpu, --round-value, --tail-value, --metric, --prepare-device, --import-device).
void addAbFlags(CLI::App* cmd, AbFlags& f);

/// Adds --a-env and --b-env (NAME=VALUE in the environment of the base and head arm's runs,
/// repeatable), shared by ab and gate.
void addArmEnvFlags(CLI::App* cmd, std::vector<std::string>& baseEnv, std::vector<std::string>& headEnv);

/// A variant for an arm; throws UsageError naming the flag for a variant that does not parse.
exec::Arm makeArm(const std::string& label, const std::string& variantText, const std::string& flag);

/// --inject-slowdown items MODEL=SPEC as a map from model to spec (diff::parseSlowdownSpec: PCT,
/// shift:PCT, tail:FRAC:PCT, spread:FACTOR). Throws UsageError for an item without a model,
/// without '=' or with a SPEC that does not parse.
std::map<std::string, diff::SlowdownSpec> parseInjectSlowdown(const std::vector<std::string>& items);

} // namespace dynqual::cli
