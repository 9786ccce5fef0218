// The flags ab, gate and calibrate share, and the arms they name.
#include "AbFlags.h"
#include "Commands.h"

#include <string>

namespace dynqual::cli {

void addAbFlags(CLI::App* cmd, AbFlags& f) {
  cmd->add_option("suite", f.suites,
                  "model folders or folders of them (default: the perf suite: ../shared/models and "
                  "corpus/decoder_tiny)");
  cmd->add_option("--alpha", f.alpha, "suite-level false-positive rate, split over looks, Holm over models")
      ->check(CLI::Range(1e-6, 0.5))
      ->capture_default_str();
  cmd->add_option("--margin", f.margin, "relative change treated as no change (policy, e.g. 0.02 = 2%)")
      ->check(CLI::Range(0.0, 0.5))
      ->capture_default_str();
  cmd->add_option("--looks", f.looks,
                  "rounds at which the data is analysed, fixed in advance (default 12,16,24,32,48,64,96,128; "
                  "16,24,32,48,64,96,128,192,256 with --interleave sample)")
      ->delimiter(',');
  cmd->add_option("--budget", f.budget, "seconds of timed rounds; may only cut looks short")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--samples", f.samples, "samples per ABBA position (0 = 5, or 20 with --interleave sample)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--warmup", f.warmup, "discarded runs at the start of each position")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--min-sample-ms", f.minSampleMs,
                  "one sample batches runs lasting at least this long, ms (0 = 1, or 4 with --interleave sample)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--seed", f.seed, "bootstrap and generated-input seed")->capture_default_str();
  cmd->add_option("--bootstrap", f.bootstrap, "bootstrap resamples")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--inject-slowdown", f.inject,
                  "MODEL=SPEC: inject a change into the head arm of MODEL (self-test), sized from its base measured "
                  "before round 0: PCT or shift:PCT (every run PCT % slower), tail:FRAC:PCT (a random FRAC of the "
                  "runs PCT % slower), spread:FACTOR (the same mean, FACTOR times the spread); docs/commands/ab.md");
  cmd->add_option("--runner-config", f.runnerConfig, "JSON file declaring ext:NAME runners (docs/runners.md)");
  cmd->add_option("--work-dir", f.workDir, "keep artifacts, inputs and outputs here (default: a temp folder, removed)");
  cmd->add_option("--format", f.format, "stdout format")
      ->check(CLI::IsMember({"md", "json", "junit", "html"}))
      ->capture_default_str();
  cmd->add_option("--out", f.outDir, "also write report.md, report.json, junit.xml and report.html into this folder");
  cmd->add_option("--db", f.db, "results database (default: $DYNQUAL_DB, else ./dynqual.db)");
  cmd->add_flag("--no-db", f.noDb, "do not record the run");
  cmd->add_option("--clock", f.clock,
                  "clock of the timing samples: wall, thread-cpu (CPU time of the runtime thread; dq arms on "
                  "sim), process-cpu (CPU time of the runner process on one onnxruntime thread; runner arms of "
                  "runner protocol 2), or auto (thread-cpu when both arms are dq on sim, process-cpu when both "
                  "are runners of protocol 2, else wall); docs/metrics/gate-decision.md")
      ->check(CLI::IsMember({"auto", "wall", "thread-cpu", "process-cpu"}))
      ->capture_default_str();
  cmd->add_option("--interleave", f.interleave,
                  "process (each ABBA position is its own process), sample (one serving process per arm and "
                  "round, both on one CPU, sampled in alternation; runner arms of runner protocol 3), or auto "
                  "(sample when both arms can serve, else process); docs/metrics/gate-decision.md")
      ->check(CLI::IsMember({"auto", "process", "sample"}))
      ->capture_default_str();
  cmd->add_option("--round-value", f.roundValue,
                  "each arm's value in a round: min (the fastest sample), lower-half-mean (the mean of the "
                  "fastest half), or auto (lower-half-mean with --interleave sample, else min); "
                  "docs/metrics/round-value.md")
      ->check(CLI::IsMember({"auto", "min", "lower-half-mean", "mean", "median", "p90"}))
      ->capture_default_str();
  cmd->add_option("--tail-value", f.tailValue,
                  "the round value of a second comparison per model in the same Holm family, which sees the "
                  "runs the first misses: mean, median, p90, none, or auto (mean under --interleave process, none "
                  "under sample); a model improves only "
                  "when both improve; docs/metrics/gate-decision.md")
      ->check(CLI::IsMember({"auto", "none", "min", "lower-half-mean", "mean", "median", "p90"}))
      ->capture_default_str();
  cmd->add_option("--metric", f.metric,
                  "the metric that decides: measured (the timing samples on --clock) or modelled-device-time (the "
                  "sim's deterministic modelled device time per run, decided exactly after one round; dq arms on "
                  "sim); auto (gate's default): modelled-device-time where both arms are dq on sim, else measured; "
                  "the other is reported beside it; docs/metrics/modelled-device-time.md")
      ->check(CLI::IsMember({"auto", "measured", "modelled-device-time"}))
      ->capture_default_str();
  auto notEmpty =
      CLI::Validator([](std::string& v) { return v.empty() ? std::string("needs a folder") : std::string(); }, "DIR");
  cmd->add_option("--prepare-device", f.prepareDevice,
                  "compile both arms' plans into this new folder for a device machine without the compiler, and "
                  "stop (dq arms on one device; docs/commands/ab.md, \"On a GPU machine\")")
      ->check(notEmpty);
  cmd->add_option("--import-device", f.importDevice,
                  "analyse and record the folder device_ab.py wrote on the device machine (the suite, arms and "
                  "schedule come from its plan)")
      ->check(notEmpty);
  cmd->add_option("--pin-cpu", f.pinCpu,
                  "CPU both arms run on when interleaving samples: auto (the last CPU this process may use), "
                  "none, or a CPU number")
      ->capture_default_str();
  cmd->add_flag("--compile-time", f.compileTime,
                "also time compiles: each round compiles every model once per arm in fresh processes, and "
                "compile time goes through the same statistics (dq arms only)");
  cmd->add_option("--compile-timeout", f.compileTimeout, "seconds allowed for each compile")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--run-timeout", f.runTimeout, "seconds allowed for each run process")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

void addArmEnvFlags(CLI::App* cmd, std::vector<std::string>& baseEnv, std::vector<std::string>& headEnv) {
  auto envSetting = CLI::Validator(
      [](std::string& v) {
        auto eq = v.find('=');
        return eq == std::string::npos || eq == 0 ? std::string("expects NAME=VALUE") : std::string();
      },
      "NAME=VALUE");
  cmd->add_option("--a-env", baseEnv, "NAME=VALUE in the environment of the base arm's runs (repeatable)")
      ->check(envSetting);
  cmd->add_option("--b-env", headEnv, "NAME=VALUE in the environment of the head arm's runs (repeatable)")
      ->check(envSetting);
}

exec::Arm makeArm(const std::string& label, const std::string& text, const std::string& flag) {
  exec::Arm arm;
  arm.label = label;
  try {
    arm.variant = exec::parseVariant(text);
  } catch (const exec::VariantError& e) {
    throw UsageError(flag + ": " + e.what());
  }
  arm.binDir = exec::selfBinDir();
  return arm;
}

std::map<std::string, diff::SlowdownSpec> parseInjectSlowdown(const std::vector<std::string>& items) {
  std::map<std::string, diff::SlowdownSpec> out;
  for (const auto& s : items) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--inject-slowdown '" + s +
                       "': expected MODEL=SPEC (SPEC: PCT, shift:PCT, tail:FRAC:PCT or "
                       "spread:FACTOR)");
    try {
      out[s.substr(0, eq)] = diff::parseSlowdownSpec(s.substr(eq + 1));
    } catch (const std::invalid_argument& e) {
      throw UsageError("--inject-slowdown '" + s + "': " + e.what());
    }
  }
  return out;
}

} // namespace dynqual::cli
