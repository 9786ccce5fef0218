// `dynqual bench changepoints`: precision and recall of the history's change-point detection on
// synthetic histories with known shifts, the noise drawn from a stored calibration
// (docs/metrics/change-points.md).
#include "Commands.h"

#include "dynqual/diff/AbStore.h"
#include "dynqual/stats/ChangePointSimulation.h"
#include "dynqual/stats/Descriptive.h"
#include "dynqual/stats/HodgesLehmann.h"
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

struct CpBenchOpts {
  std::string db, calibration = "latest", model, method = "pelt";
  double sigma = 0.0135, noiseScale = 0.70710678118654752; // 1/sqrt(2): one run of a two-run log ratio
  int trials = 200, length = 200, tolerance = 5, minSpacing = 20;
  std::vector<double> sizes = {0.03, 0.05, 0.07, 0.10};
  std::vector<int> counts = {0, 1, 2, 3};
  stats::ChangePointOptions cp;
  uint64_t seed = 1;
};

/// The centred per-round log ratios of a stored calibration (one model, or every model pooled,
/// each centred on its own Hodges-Lehmann estimate, as `bench stats` does); empty when the
/// database holds no calibration and none was named.
std::vector<double> calibrationResiduals(const CpBenchOpts& o, std::string& source) {
  if (o.calibration == "none")
    return {};
  fs::path path = o.db.empty() ? store::defaultDbPath() : fs::path(o.db);
  if (!fs::exists(path)) {
    if (o.calibration != "latest")
      throw UsageError("--db " + path.string() + ": no such database");
    return {};
  }
  store::OpenOptions ro;
  ro.mode = store::OpenOptions::Mode::ReadOnly;
  store::Store db(path, ro);
  int64_t runId = 0;
  if (o.calibration == "latest") {
    SQLite::Statement q(db.db(), "SELECT id FROM runs WHERE kind = 'calibrate' AND status = 'finished' "
                                 "ORDER BY started_at DESC, id DESC LIMIT 1");
    if (!q.executeStep())
      return {};
    runId = q.getColumn(0).getInt64();
  } else {
    try {
      runId = std::stoll(o.calibration);
    } catch (const std::exception&) {
      throw UsageError("--calibration '" + o.calibration + "': expected a run id, 'latest' or 'none'");
    }
  }
  diff::StoredAbRun run = diff::loadAbRun(db, runId);
  if (run.kind != "calibrate")
    throw UsageError(fmt::format("run {} is a {} run, not a calibration", runId, run.kind));
  std::vector<double> residuals;
  std::vector<std::string> used;
  for (auto [model, r] : diff::logRatiosByModel(run.samples, diff::policyFromParams(run.params).roundValue)) {
    if (r.size() < 2 || (!o.model.empty() && model != o.model))
      continue;
    double centre = stats::hodgesLehmann(r);
    for (double x : r)
      residuals.push_back(x - centre);
    used.push_back(fmt::format("{} {:.2f}%", model, stats::scaledMad(r) * 100));
  }
  if (residuals.size() < 2)
    throw UsageError(fmt::format("calibration run {} has fewer than 2 rounds of residuals{}", runId,
                                 o.model.empty() ? "" : " for model " + o.model));
  source = fmt::format("residuals of calibration run {} ({}; {} per-round log ratios, scaled MAD {:.3f}%)", runId,
                       fmt::join(used, ", "), residuals.size(), stats::scaledMad(residuals) * 100);
  return residuals;
}

std::string pct(const stats::RateEstimate& r) {
  if (r.total == 0)
    return "-";
  return fmt::format("{:.3f}", r.rate);
}

void benchChangePoints(const CpBenchOpts& o) {
  stats::ChangePointOptions cp = o.cp;
  cp.method = o.method == "pelt" ? stats::ChangePointMethod::Pelt : stats::ChangePointMethod::EDivisive;
  cp.test = o.method == "e-divisive-permutation" ? stats::ChangePointTest::Permutation : stats::ChangePointTest::TTest;
  std::string source;
  std::vector<double> residuals = calibrationResiduals(o, source);
  if (residuals.empty())
    source = fmt::format("normal noise, sigma {:.3f}% (no calibration used; --sigma)", o.sigma * 100);
  std::cout << fmt::format("dynqual bench changepoints: {}; each point's noise is that times {:.4g}\n", source,
                           o.noiseScale);
  std::cout << fmt::format(
      "method {}, p <= {}, minimum segment {}{}; {} histories of {} points per cell, shifts "
      "at least {} points apart, a detection within {} points of a shift matches it, seed {}\n\n",
      stats::changePointMethodName(cp), cp.maxP, cp.minSegment,
      cp.method == stats::ChangePointMethod::Pelt
          ? fmt::format(", penalty {} ln n", cp.peltPenalty > 0 ? cp.peltPenalty : stats::kDefaultPeltPenalty)
          : fmt::format(", window {}", cp.window),
      o.trials, o.length, o.minSpacing, o.tolerance, o.seed);
  std::cout << "| shift | shifts per history | true | found | false | missed | precision | recall | histories with a "
               "false one |\n";
  std::cout << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  auto t0 = std::chrono::steady_clock::now();
  std::int64_t tp = 0, fp = 0, fn = 0, hist = 0, histFalse = 0;
  for (double size : o.sizes)
    for (int k : o.counts) {
      stats::ChangePointSimParams p;
      p.residuals = residuals;
      p.sigma = o.sigma;
      p.noiseScale = o.noiseScale;
      p.length = o.length;
      p.shifts = k;
      p.shiftSize = size;
      p.minSpacing = o.minSpacing;
      p.tolerance = o.tolerance;
      p.trials = o.trials;
      p.options = cp;
      p.seed = o.seed + static_cast<uint64_t>(k) * 1000 + static_cast<uint64_t>(std::lround(size * 1000));
      auto r = stats::simulateChangePoints(p);
      tp += r.truePositives;
      fp += r.falsePositives;
      fn += r.falseNegatives;
      hist += o.trials;
      histFalse += r.historiesWithFalse;
      std::cout << fmt::format("| {:.0f}% | {} | {} | {} | {} | {} | {} | {} | {} |\n", size * 100, k,
                               r.truePositives + r.falseNegatives, r.truePositives + r.falsePositives, r.falsePositives,
                               r.falseNegatives, pct(r.precision), pct(r.recall), r.historiesWithFalse);
    }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stats::ProportionInterval precision = stats::clopperPearson(tp, std::max<std::int64_t>(1, tp + fp));
  stats::ProportionInterval recall = stats::clopperPearson(tp, std::max<std::int64_t>(1, tp + fn));
  std::cout << fmt::format("\noverall: precision {:.4f} [{:.4f}, {:.4f}] ({} of {} detections true), recall {:.4f} "
                           "[{:.4f}, {:.4f}] ({} of {} shifts found), false positive rate {:.2f}% of detections, "
                           "missed {:.2f}% of shifts; {} of {} histories with a false detection; Clopper-Pearson 95%\n",
                           precision.estimate, precision.low, precision.high, tp, tp + fp, recall.estimate, recall.low,
                           recall.high, tp, tp + fn, tp + fp ? 100.0 * fp / (tp + fp) : 0.0,
                           tp + fn ? 100.0 * fn / (tp + fn) : 0.0, histFalse, hist);
  std::cout << fmt::format("{:.1f} s\n", s);
}

} // namespace

void addBenchChangePointsCommand(CLI::App* bench) {
  auto* cmd = bench->add_subcommand(
      "changepoints",
      "Precision and recall of `dynqual history`'s change points on synthetic histories: known shifts of each\n"
      "size and count, noise resampled from a stored calibration (or normal with --sigma when the database\n"
      "holds none), detection at the given settings (docs/metrics/change-points.md).");
  auto o = std::make_shared<CpBenchOpts>();
  cmd->add_option("--db", o->db, "database holding the calibration (default: $DYNQUAL_DB, else ./dynqual.db)");
  cmd->add_option("--calibration", o->calibration, "calibrate run id, 'latest', or 'none' for --sigma")
      ->capture_default_str();
  cmd->add_option("--model", o->model, "only this model's residuals (default: every model's, pooled)");
  cmd->add_option("--sigma", o->sigma, "standard deviation of normal noise in log units when no calibration is used")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--noise-scale", o->noiseScale,
                  "multiplies the noise: 0.7071 (1/sqrt 2) turns a residual, the log ratio of two runs, into one run's "
                  "noise; 1 keeps the ratio's")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--trials", o->trials, "histories per cell")->check(CLI::Range(1, 1000000))->capture_default_str();
  cmd->add_option("--length", o->length, "points per history")->check(CLI::Range(10, 100000))->capture_default_str();
  cmd->add_option("--sizes", o->sizes, "shift sizes (0.05 = 5%)")->delimiter(',')->capture_default_str();
  cmd->add_option("--counts", o->counts, "shifts per history")->delimiter(',')->capture_default_str();
  cmd->add_option("--tolerance", o->tolerance, "points between a detection and the shift it matches, at most")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--min-spacing", o->minSpacing, "points between shifts and from either end, at least")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--method", o->method, "change-point method")
      ->check(CLI::IsMember({"pelt", "e-divisive", "e-divisive-permutation"}))
      ->capture_default_str();
  cmd->add_option("--max-p", o->cp.maxP, "p threshold of the merge step")
      ->check(CLI::Range(1e-12, 1.0))
      ->capture_default_str();
  cmd->add_option("--min-segment", o->cp.minSegment, "points per segment, at least")
      ->check(CLI::Range(2, 100000))
      ->capture_default_str();
  cmd->add_option("--window", o->cp.window, "E-divisive window")->check(CLI::Range(4, 100000))->capture_default_str();
  cmd->add_option("--penalty", o->cp.peltPenalty, "PELT penalty per change in units of ln n (0: the default)")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  cmd->add_option("--permutations", o->cp.permutations, "e-divisive-permutation: permutations per test")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "simulation seed")->capture_default_str();
  cmd->callback([o] {
    try {
      for (double s : o->sizes)
        if (!(s > 0))
          throw UsageError("--sizes: every shift size must be > 0");
      for (int k : o->counts)
        if (k < 0)
          throw UsageError("--counts: every count must be >= 0");
      benchChangePoints(*o);
    } catch (const std::exception& e) {
      std::cerr << "dynqual bench changepoints: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
