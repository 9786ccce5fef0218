#pragma once
// What ab, gate and calibrate share: their statistics and measurement flags, the suite, the
// outputs (Markdown, JSON, JUnit, --out DIR), progress, and recording into the store.
#include "dynqual/diff/AbTypes.h"
#include "dynqual/reports/GateReport.h"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace dynqual::cli {

struct AbFlags {
  std::vector<std::string> suites;
  double alpha = 0.05, margin = 0.02;
  std::vector<int> looks;  ///< empty: stats::kDefaultLookRounds, or kSampleInterleaveLookRounds
  double budget = 600;
  int samples = 0, warmup = 2, bootstrap = 2000;  ///< samples 0: 5, or 20 when interleaving samples
  double minSampleMs = 0;                          ///< 0: 1 ms, or 4 ms when interleaving samples
  uint64_t seed = 1;
  std::vector<std::string> inject;  ///< MODEL=PERCENT
  std::string runnerConfig, workDir, format = "md", outDir, db;
  std::string clock = "auto";  ///< auto | wall | thread-cpu | process-cpu
  std::string interleave = "auto";  ///< auto | process | sample
  std::string pinCpu = "auto";      ///< auto | none | CPU number (sample interleaving only)
  std::string roundValue = "auto";  ///< auto | min | lower-half-mean
  bool noDb = false;
  bool compileTime = false;
  std::string prepareDevice;  ///< --prepare-device DIR: compile both arms' plans for a device machine, run nothing
  std::string importDevice;   ///< --import-device OUT: analyse and record what device_ab.py brought back
  double compileTimeout = 600, runTimeout = 300;
};

/// Adds the shared flags (suite positional, --alpha, --margin, --looks, --budget, --samples,
/// --warmup, --min-sample-ms, --seed, --bootstrap, --inject-slowdown, --runner-config, --work-dir,
/// --format, --out, --db, --no-db, --compile-timeout, --run-timeout, --clock, --interleave,
/// --pin-cpu, --round-value, --prepare-device, --import-device).
void addAbFlags(CLI::App* cmd, AbFlags& f);

/// Runs one A/B comparison of `base` against `head` with the flags, prints the report in
/// --format on stdout, writes --out files, records into the store unless --no-db, and returns
/// the exit code (diff::exitCodeFor; 2 when recording failed). `kind` is "ab", "gate" or
/// "calibrate"; `extraParams` are stored with the run. Throws for usage errors before any work.
int runAbCommand(const std::string& kind, const AbFlags& f, diff::AbOptions options,
                 const std::map<std::string, std::string>& extraParams = {},
                 const std::function<void(int64_t runId, const diff::AbResult&, const std::string& machine)>& afterRecord = {});

/// The arms of a device import: the plan's variants (`dir`/ab.json). `a` and `b` are the variants
/// given on the command line ("" when absent); a given one that differs from the plan's is a
/// UsageError naming both.
void armsFromDevicePlan(const std::string& dir, const std::string& a, const std::string& b, diff::AbOptions& o,
                        const char* flagA = "--a", const char* flagB = "--b");

/// Writes the report of `r` in --format to stdout and the three files of --out.
void emitAbReport(const AbFlags& f, const diff::AbResult& r, const reports::GateContext& ctx);

/// A variant for an arm; throws UsageError naming the flag for a variant that does not parse.
exec::Arm makeArm(const std::string& label, const std::string& variantText, const std::string& flag);

} // namespace dynqual::cli
