// `dynqual bench stats`: the operating characteristics of the gate's statistics, by simulation
// over the residuals of a stored A/A calibration (docs/commands/bench.md).
#include "Commands.h"

#include "dynqual/diff/AbStore.h"
#include "dynqual/diff/Analysis.h"
#include "dynqual/diff/GateSimulation.h"
#include "dynqual/stats/Descriptive.h"
#include "dynqual/stats/HodgesLehmann.h"
#include "dynqual/stats/Simulation.h"
#include "dynqual/store/Store.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <iostream>

namespace fs = std::filesystem;

namespace dynqual::cli {

namespace {

std::string rate(const stats::RateEstimate& r) {
  return fmt::format("{:6.2f}% [{:5.2f}, {:5.2f}]", r.rate * 100, r.low * 100, r.high * 100);
}

struct StatsOpts {
  std::string db, calibration = "latest";
  int trials = 2000, suite = 20;
  double alpha = 0.05, margin = 0.02;
  std::vector<int> looks; ///< empty: the looks the calibration run itself planned
  std::vector<double> effects = {0.01, 0.02, 0.03, 0.05, 0.10};
  uint64_t seed = 1;
  double drift = 0, outlierRate = 0, outlierMagnitude = 0, tailDf = 0;
  /// Sample-level simulation of the whole suite per kind of change ("aa", or an --inject-slowdown
  /// SPEC), on model `changed` (default: the first model of the calibration).
  std::vector<std::string> modes;
  std::string changed, tailValue = "auto";
  bool keepBias = false;
  int modeTrials = 500;
};

/// The suite simulated on the calibration's own rounds, one block per mode: suite-level rates and
/// each model's verdicts (docs/commands/bench.md, "Kinds of change").
void benchModes(const StatsOpts& o, const diff::StoredAbRun& run, const std::vector<int>& looks) {
  diff::GateSimulationParams g;
  g.rounds = diff::calibrationRounds(run.samples);
  for (auto it = g.rounds.begin(); it != g.rounds.end();)
    it = it->second.size() < 2 ? g.rounds.erase(it) : std::next(it);
  if (g.rounds.empty())
    throw UsageError(fmt::format("calibration run {} has no model with 2 rounds", run.runId));
  g.policy = diff::policyFromParams(run.params);
  g.policy.alpha = o.alpha;
  g.policy.margin = o.margin;
  g.policy.looks = looks;
  g.policy.tailValue = o.tailValue == "none"   ? std::nullopt
                       : o.tailValue == "auto" ? std::optional(diff::RoundValue::Mean)
                                               : std::optional(diff::parseRoundValue(o.tailValue));
  g.keepBias = o.keepBias;
  g.trials = o.modeTrials;
  g.seed = o.seed;
  std::string changed = o.changed.empty() ? g.rounds.begin()->first : o.changed;
  if (!g.rounds.count(changed))
    throw UsageError("--changed-model " + changed + ": not a model of calibration run " + std::to_string(run.runId));
  std::cout << fmt::format("\nkinds of change, simulated on each model's own calibration rounds ({} models: ",
                           g.rounds.size());
  for (const auto& [m, r] : g.rounds)
    std::cout << fmt::format("{} {} rounds{}", m, r.size(), m == g.rounds.rbegin()->first ? "" : ", ");
  std::cout << fmt::format("), round values {} + {}, A/A bias {}, {} trials per mode\n",
                           diff::roundValueName(g.policy.roundValue),
                           g.policy.tailValue ? diff::roundValueName(*g.policy.tailValue) : "none",
                           o.keepBias ? "kept as measured" : "removed (arms swapped at random)", o.modeTrials);
  for (const auto& mode : o.modes) {
    diff::GateSimulationParams q = g;
    if (mode != "aa") {
      try {
        q.change = diff::parseSlowdownSpec(mode);
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--modes: ") + e.what());
      }
      q.changedModel = changed;
    }
    auto r = diff::simulateGateOnSamples(q);
    std::cout << fmt::format("\n{}{}:", mode, mode == "aa" ? "" : " on " + changed);
    if (mode != "aa")
      std::cout << fmt::format(" busy {:.1f} us (median {:.4g} ms, spread {:.3g} ms); detected {}; flagged "
                               "improvement {};",
                               r.busyUs, r.medianMs, r.spreadMs, rate(r.detected), rate(r.changedImprovement));
    std::cout << fmt::format(" other models flagged (suite) {}; mean rounds {:.1f}\n", rate(r.falsePositivePerSuite),
                             r.meanRounds);
    for (const auto& [m, nc] : r.noChange) {
      auto counts = [](const std::map<std::string, int>& v) {
        std::string s;
        for (const char* name : {"no-change", "inconclusive", "regression", "improvement"}) {
          auto it = v.find(name);
          s += fmt::format("{} {:4d}  ", name, it == v.end() ? 0 : it->second);
        }
        return s;
      };
      std::cout << fmt::format("  {:18s} both no change {}  first: {}", m, rate(nc), counts(r.firstVerdicts[m]));
      if (g.policy.tailValue)
        std::cout << " tail: " << counts(r.tailVerdicts[m]);
      std::cout << "\n";
    }
  }
}

void benchStats(const StatsOpts& o) {
  store::OpenOptions ro;
  ro.mode = store::OpenOptions::Mode::ReadOnly;
  store::Store db(o.db.empty() ? store::defaultDbPath() : fs::path(o.db), ro);
  int64_t runId = 0;
  if (o.calibration == "latest") {
    SQLite::Statement q(db.db(),
                        "SELECT id FROM runs WHERE kind = 'calibrate' ORDER BY started_at DESC, id DESC LIMIT 1");
    if (!q.executeStep())
      throw UsageError(db.path().string() + ": holds no calibrate run (run `dynqual calibrate` first)");
    runId = q.getColumn(0).getInt64();
  } else {
    runId = std::stoll(o.calibration);
  }
  diff::StoredAbRun run = diff::loadAbRun(db, runId);
  if (run.kind != "calibrate")
    throw UsageError(fmt::format("run {} is a {} run, not a calibration", runId, run.kind));
  // Residuals of every model pooled, each model centred on its own location first.
  std::vector<double> residuals;
  const diff::Policy calibrated = diff::policyFromParams(run.params);
  const std::vector<int> looks = o.looks.empty() ? calibrated.looks : o.looks;
  for (auto [model, r] : diff::logRatiosByModel(run.samples, calibrated.roundValue)) {
    if (r.size() < 2)
      continue;
    double centre = stats::hodgesLehmann(r);
    for (double x : r)
      residuals.push_back(x - centre);
  }
  if (residuals.size() < 2)
    throw UsageError(fmt::format("calibration run {} has fewer than 2 rounds of residuals", runId));

  stats::SimulationParams base;
  base.residuals = residuals;
  base.centre = false;
  base.trials = o.trials;
  base.alpha = o.alpha;
  base.margin = o.margin;
  base.schedule.rounds = looks;
  base.seed = o.seed;
  base.driftPerRound = o.drift;
  base.outlierRate = o.outlierRate;
  base.outlierMagnitude = o.outlierMagnitude;
  base.tailDf = o.tailDf;

  std::cout << fmt::format("dynqual bench stats: residuals of calibration run {} ({} per-round log ratios, scaled MAD "
                           "{:.3f}%)\n",
                           runId, residuals.size(), stats::scaledMad(residuals) * 100);
  std::cout << fmt::format("policy: alpha {} over the suite (Bonferroni over {} looks at rounds {}{}, Holm over the "
                           "models), margin {}%, round value {}, {} trials per point, seed {}\n",
                           o.alpha, looks.size(), fmt::join(looks, ","),
                           o.looks.empty() ? " as the calibration planned" : "", o.margin * 100,
                           diff::roundValueName(calibrated.roundValue), o.trials, o.seed);
  std::cout << fmt::format("perturbations: drift {} log/round, outlier rate {} x {} log, t tails df {}\n", o.drift,
                           o.outlierRate, o.outlierMagnitude, o.tailDf);
  std::cout << "rates with Clopper-Pearson 95% intervals, in %\n\n";

  auto t0 = std::chrono::steady_clock::now();
  for (int m : {1, o.suite}) {
    stats::SimulationParams p = base;
    p.comparisons = m;
    auto r = stats::simulateGate(p);
    std::cout << fmt::format("A/A, suite of {:2d}: false positives per comparison {}  per suite {}  no change {}  "
                             "mean rounds {:.1f}\n",
                             m, rate(r.falsePositivePerComparison), rate(r.falsePositivePerSuite), rate(r.noChange),
                             r.meanRounds);
  }
  std::cout << "\n";
  for (double e : o.effects) {
    stats::SimulationParams p = base;
    p.comparisons = 1;
    p.effect = e;
    auto r = stats::simulateGate(p);
    std::cout << fmt::format("slowdown {:5.1f}%: detected {}  wrong-direction flags {}  mean rounds {:.1f}\n", e * 100,
                             rate(r.detection), rate(r.falsePositivePerComparison), r.meanRounds);
  }
  if (!o.modes.empty())
    benchModes(o, run, looks);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << fmt::format("\n{:.1f} s\n", s);
}

} // namespace

void addBenchCommand(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmarks of dynqual itself.");
  bench->require_subcommand(1);
  addBenchFuzzCommand(bench);
  addBenchGenerateCommand(bench);
  addSidecarRecipeCommand(bench);
  addBenchChangePointsCommand(bench);
  auto* st = bench->add_subcommand(
      "stats", "Simulate the gate's sequential decision on the residuals of a stored A/A calibration (resampled\n"
               "with replacement, optionally with drift, outliers and heavy tails): false-positive rate per\n"
               "comparison and per suite, rate of 'no change' on A/A, and detection power per slowdown, each\n"
               "with a Clopper-Pearson 95% interval (docs/commands/bench.md).");
  auto o = std::make_shared<StatsOpts>();
  st->add_option("--db", o->db, "results database holding the calibration (default: $DYNQUAL_DB, else ./dynqual.db)");
  st->add_option("--calibration", o->calibration, "calibrate run id, or 'latest'")->capture_default_str();
  st->add_option("--trials", o->trials, "simulated gates per point")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  st->add_option("--suite", o->suite, "models per suite for the per-suite rate")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  st->add_option("--alpha", o->alpha, "suite-level alpha")->check(CLI::Range(1e-6, 0.5))->capture_default_str();
  st->add_option("--margin", o->margin, "no-change margin")->check(CLI::Range(0.0, 0.5))->capture_default_str();
  st->add_option("--looks", o->looks, "rounds at each look (default: the looks the calibration run planned)")
      ->delimiter(',');
  st->add_option("--effects", o->effects, "true slowdowns to simulate (0.03 = 3%)")
      ->delimiter(',')
      ->capture_default_str();
  st->add_option("--seed", o->seed, "simulation seed")->capture_default_str();
  st->add_option("--drift", o->drift, "log-ratio drift added per round")->capture_default_str();
  st->add_option("--outlier-rate", o->outlierRate, "probability of an outlier round")->check(CLI::Range(0.0, 1.0));
  st->add_option("--outlier-magnitude", o->outlierMagnitude, "log units an outlier round moves");
  st->add_option("--tail-df", o->tailDf, "t-type heavy tails with this many degrees of freedom (0 = off)");
  st->add_option("--modes", o->modes,
                 "also simulate the whole suite sample by sample for each kind of change: aa, or a SPEC of "
                 "--inject-slowdown (3 = shift:3, tail:0.3:25, spread:3), comma-separated")
      ->delimiter(',');
  st->add_option("--changed-model", o->changed, "the model --modes changes (default: the first of the calibration)");
  st->add_option("--tail-value", o->tailValue,
                 "the second round value of --modes: auto (mean), none, mean, median, p90")
      ->check(CLI::IsMember({"auto", "none", "mean", "median", "p90", "min", "lower-half-mean"}))
      ->capture_default_str();
  st->add_flag("--keep-bias", o->keepBias,
               "--modes keeps each model's A/A bias as measured (default: arms swapped at random per round)");
  st->add_option("--mode-trials", o->modeTrials, "simulated gates per mode")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  st->callback([o] {
    try {
      benchStats(*o);
    } catch (const std::exception& e) {
      std::cerr << "dynqual bench stats: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
