// `dynqual ab` (two variants on one binary) and `dynqual calibrate` (A/A noise per machine and model).
#include "AbDriver.h"
#include "Commands.h"

#include "dynqual/diff/AbStore.h"
#include "dynqual/stats/Descriptive.h"
#include "dynqual/store/Store.h"

#include <fmt/format.h>

#include <iostream>

namespace dynqual::cli {

namespace {

const char* kExitCodes = "Exit: 0 pass, 1 regression or accuracy failure, 2 usage or input error, 3 inconclusive "
                         "within budget, 4 infrastructure error (1 wins over 4, 4 over 3).";

} // namespace

void addAbCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "ab", std::string("Compare two variants on this binary: correctness against the CPU reference first, then\n"
                        "interleaved ABBA timing rounds with a Wilcoxon signed-rank test per model, Holm over the\n"
                        "suite, and a verdict per model (docs/commands/ab.md). Variants: dq[:PIPELINE][@sim|@hip],\n"
                        "ort:cpu, ext:NAME. ") +
                kExitCodes);
  struct Opts {
    AbFlags flags;
    std::string a, b;
    std::vector<std::string> aEnv, bEnv;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--a,--base", o->a, "base variant (required, except with --import-device: the plan's)");
  cmd->add_option("--b,--head", o->b, "head variant (required, except with --import-device: the plan's)");
  addArmEnvFlags(cmd, o->aEnv, o->bEnv);
  addAbFlags(cmd, o->flags);
  cmd->callback([o] {
    try {
      diff::AbOptions options;
      if (!o->flags.importDevice.empty()) {
        if (!o->aEnv.empty() || !o->bEnv.empty())
          throw UsageError("--import-device takes the arms' environments from its plan; give no --a-env or --b-env");
        armsFromDevicePlan(o->flags.importDevice, o->a, o->b, options);
      } else {
        if (o->a.empty() || o->b.empty())
          throw UsageError("--a and --b are required (the base and head variants)");
        options.base = makeArm("base", o->a, "--a");
        options.head = makeArm("head", o->b, "--b");
        options.base.env = o->aEnv;
        options.head.env = o->bEnv;
      }
      setExitCode(runAbCommand("ab", o->flags, options));
    } catch (const std::exception& e) {
      std::cerr << "dynqual ab: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

void addCalibrateCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "calibrate", std::string("Run an A/A comparison (the same variant on both arms) and store the noise of each\n"
                               "model on this machine: the scaled MAD and standard deviation of the per-round log\n"
                               "ratios (docs/metrics/noise.md). Warns when the machine is noisier than its history.\n"
                               "The noise sizes rounds; it never moves the margin. ") +
                       kExitCodes);
  struct Opts {
    AbFlags flags;
    std::string variant = "dq:production@sim";
    bool variantGiven = false;
  };
  auto o = std::make_shared<Opts>();
  auto* variant = cmd->add_option("--variant", o->variant, "the variant run on both arms")->capture_default_str();
  addAbFlags(cmd, o->flags);
  cmd->callback([o, variant] {
    o->variantGiven = variant->count() > 0;
    try {
      if (o->flags.noDb)
        throw UsageError("calibrate stores its noise: --no-db makes no sense here");
      if (o->flags.metric != "measured")
        throw UsageError("calibrate measures noise, and the modelled device time has none (every run of a program "
                         "has one value): give no --metric");
      diff::AbOptions options;
      if (!o->flags.importDevice.empty()) {
        const std::string given = o->variantGiven ? o->variant : "";
        armsFromDevicePlan(o->flags.importDevice, given, given, options, "--variant", "--variant");
        if (options.base.variant.text() != options.head.variant.text())
          throw UsageError(o->flags.importDevice + ": the plan compares two variants; import it with dynqual ab");
      } else {
        options.base = makeArm("base", o->variant, "--variant");
        options.head = makeArm("head", o->variant, "--variant");
      }
      auto after = [&](int64_t runId, const diff::AbResult& r, const std::string& machine) {
        auto noise = diff::estimateNoise(r.samples, r.roundValue);
        store::Store db(o->flags.db.empty() ? store::defaultDbPath() : std::filesystem::path(o->flags.db));
        for (const auto& n : noise) {
          auto history = diff::noiseHistory(db, machine, n.model, diff::timingMetric(r.clock));
          std::cerr << fmt::format("calibrate: {} noise {:.3f}% (scaled MAD of per-round log ratios over {} rounds)",
                                   n.model, n.scaledMad * 100, n.rounds);
          if (!history.empty()) {
            std::vector<double> past;
            for (const auto& h : history)
              past.push_back(h.scaledMad);
            double typical = stats::median(past);
            std::cerr << fmt::format(", history median {:.3f}% over {} runs", typical * 100, past.size());
            if (n.scaledMad > 2 * typical)
              std::cerr << " -- WARNING: noisier than its history on this machine";
          }
          std::cerr << "\n";
        }
        diff::recordNoise(db, runId, noise, diff::timingMetric(r.clock));
      };
      setExitCode(runAbCommand("calibrate", o->flags, options, {}, after));
    } catch (const std::exception& e) {
      std::cerr << "dynqual calibrate: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
