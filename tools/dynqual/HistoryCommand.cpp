// `dynqual history`: one metric of the stored runs over time, per model and machine, with its
// change points (stats::detectChangePoints); `--confirm` re-measures each change point with the
// gate (docs/commands/history.md).
#include "AbDriver.h"
#include "Commands.h"

#include "dynqual/exec/Executor.h"
#include "dynqual/gate/RevisionBuild.h"
#include "dynqual/qualify/Suite.h"
#include "dynqual/reports/Report.h"
#include "dynqual/run/ModelRun.h"
#include "dynqual/stats/ChangePoints.h"
#include "dynqual/stats/Descriptive.h"
#include "dynqual/store/History.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>
#include <map>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace dynqual::cli {

namespace {

struct HistoryOpts {
  std::string model, metric = "latency_ms", machine, db, format = "md", method = "pelt";
  std::vector<std::string> kinds = {"qualify"};
  int limit = 0;
  stats::ChangePointOptions cp;
  bool confirm = false;
  // --confirm: where the revisions and models come from, and how the gate measures.
  std::string repo = ".", cacheDir, variant = "dq:production@sim";
  std::vector<std::string> suites, binFor, inject;
  int looks = 0, samples = 0, warmup = 2;
  double budget = 300;
};

/// Metrics where a higher value is better (docs/store.md); every other one is a time or a size.
bool higherIsBetter(const std::string& metric) {
  auto ends = [&](const std::string& s) {
    return metric.size() >= s.size() && metric.compare(metric.size() - s.size(), s.size(), s) == 0;
  };
  return metric == "qps" || metric == "tps" || metric == "fraction_of_binding" || ends("_gbps") || ends("_tps");
}

/// What the gate said about one change point.
struct Confirmation {
  std::string status = "unconfirmed"; ///< regression | improvement | no-change | inconclusive | unconfirmed
  std::string detail;
  int64_t gateRun = 0;
  std::string metric;
  double ratio = NAN, ciLow = NAN, ciHigh = NAN, p = NAN;
};

struct Point {
  store::HistoryPoint stored;
  double value = 0; ///< median of the run's samples
};

struct Series {
  std::string model, modelHash, machine, unit;
  std::vector<Point> points;
  std::vector<stats::ChangePoint> changes;
  std::vector<Confirmation> confirmations; ///< one per change, with --confirm
  std::string skipped;                     ///< why no change points were looked for
};

std::string shortRev(const store::HistoryPoint& p) {
  if (p.revision.empty() || p.revision == "unknown")
    return "?";
  return p.revision.substr(0, 8) + (p.dirty ? "+" : "");
}

/// A regression in the direction the metric counts as worse.
bool slower(const stats::ChangePoint& c, const std::string& metric) {
  return higherIsBetter(metric) ? c.change < 0 : c.change > 0;
}

std::vector<Series> buildSeries(const std::vector<store::HistoryPoint>& points, int limit) {
  std::map<std::pair<std::string, std::string>, Series> by;
  for (const auto& p : points) {
    Series& s = by[{p.model, p.machine}];
    s.model = p.model;
    s.machine = p.machine;
    if (s.modelHash.empty())
      s.modelHash = p.modelHash;
    s.unit = p.unit;
    s.points.push_back({p, stats::median(p.values)});
  }
  std::vector<Series> out;
  for (auto& [key, s] : by) {
    if (limit > 0 && static_cast<int>(s.points.size()) > limit)
      s.points.erase(s.points.begin(), s.points.end() - limit);
    out.push_back(std::move(s));
  }
  return out;
}

void detect(Series& s, stats::ChangePointOptions o) {
  std::vector<double> x;
  bool positive = true;
  for (const auto& p : s.points) {
    x.push_back(p.value);
    positive = positive && p.value > 0;
  }
  o.logScale = positive; // a metric that can be 0 (cpu_percent) is compared on its own scale
  if (static_cast<int>(x.size()) < 2 * o.minSegment) {
    s.skipped = fmt::format("{} runs: change points need at least {} (two segments of --min-segment {})", x.size(),
                            2 * o.minSegment, o.minSegment);
    return;
  }
  s.changes = stats::detectChangePoints(x, o);
}

/// std::cout goes to a string while alive: runAbCommand prints the gate's own report, which is not
/// this command's output.
class CaptureStdout {
public:
  CaptureStdout() : old_(std::cout.rdbuf(buf_.rdbuf())) {}
  ~CaptureStdout() { std::cout.rdbuf(old_); }

private:
  std::ostringstream buf_;
  std::streambuf* old_;
};

/// The model folder named `model` in the suites (default: the embedded qualify suite).
fs::path findModel(const std::string& model, const std::vector<std::string>& suites) {
  std::vector<fs::path> roots(suites.begin(), suites.end());
  if (roots.empty())
    roots = qualify::embeddedSuite(exec::selfBinDir() / "dynqual");
  for (const auto& dir : run::expandModelDirs(roots))
    if (dir.filename() == model)
      return dir;
  return {};
}

/// Re-measures change `c` of `s` with the gate: both revisions built through the gate's cache
/// (or taken from --bin-for), then one interleaved A/B of the model, recorded as a gate run.
Confirmation confirmOne(const Series& s, const stats::ChangePoint& c, const HistoryOpts& o, const fs::path& db) {
  Confirmation r;
  const store::HistoryPoint& before = s.points[static_cast<size_t>(c.index) - 1].stored;
  const store::HistoryPoint& after = s.points[static_cast<size_t>(c.index)].stored;
  for (const auto* p : {&before, &after}) {
    if (p->revision.empty() || p->revision == "unknown") {
      r.detail = fmt::format("run {} has no git commit recorded: its revision cannot be rebuilt", p->runId);
      return r;
    }
    if (p->dirty) {
      r.detail = fmt::format("run {} was built from a work tree with uncommitted changes ({}): it cannot be rebuilt",
                             p->runId, shortRev(*p));
      return r;
    }
  }
  if (before.revision == after.revision) {
    r.detail = fmt::format("both sides ran commit {}: the change is not in the code (machine, environment or "
                           "data); nothing to rebuild",
                           shortRev(before));
    return r;
  }
  fs::path modelDir = findModel(s.model, o.suites);
  if (modelDir.empty()) {
    r.detail = "no model folder named '" + s.model + "' in the suite; pass --suite DIR";
    return r;
  }
  std::map<std::string, std::string> prebuilt;
  for (const auto& b : o.binFor)
    prebuilt[b.substr(0, b.find('='))] = b.substr(b.find('=') + 1);
  auto build = [&](const std::string& rev) {
    for (const auto& [prefix, dir] : prebuilt)
      if (!prefix.empty() && rev.compare(0, prefix.size(), prefix) == 0)
        return gate::useBinDir(dir);
    gate::BuildRequest req;
    req.repo = o.repo;
    req.rev = rev;
    if (!o.cacheDir.empty())
      req.cacheRoot = o.cacheDir;
    req.progress = [&](const std::string& line) {
      std::cerr << "history: " << rev.substr(0, 12) << ": " << line << "\n";
    };
    return gate::buildRevision(req);
  };
  diff::AbOptions ab;
  std::map<std::string, std::string> params;
  auto side = [&](const char* label, const std::string& rev, exec::Arm& arm) {
    arm = makeArm(label, o.variant, "--variant");
    try {
      arm.binDir = build(rev).binDir;
    } catch (const std::exception& e) {
      r.detail = fmt::format("cannot build {}: {}", rev.substr(0, 12), e.what());
      return false;
    }
    params[std::string(label) + "_rev"] = rev;
    return true;
  };
  if (!side("base", before.revision, ab.base) || !side("head", after.revision, ab.head))
    return r;
  params["confirms"] = fmt::format("{} change point at run {} ({} -> {})", s.model, after.runId,
                                   before.revision.substr(0, 12), after.revision.substr(0, 12));
  AbFlags f;
  f.suites = {modelDir.string()};
  f.db = db.string();
  f.budget = o.budget;
  f.samples = o.samples;
  f.warmup = o.warmup;
  f.inject = o.inject;
  if (o.looks > 0)
    f.looks = {o.looks};
  diff::AbResult got;
  int code = 0;
  try {
    CaptureStdout quiet;
    code = runAbCommand("gate", f, ab, params, [&](int64_t runId, const diff::AbResult& res, const std::string&) {
      r.gateRun = runId;
      got = res;
    });
  } catch (const std::exception& e) {
    r.detail = std::string("the gate could not run: ") + e.what();
    return r;
  }
  for (const auto& chk : got.checks)
    if (!chk.passed) {
      r.detail = "the gate's correctness check failed: " + chk.detail;
      return r;
    }
  for (const auto& cmp : got.comparisons)
    if (cmp.model == s.model) {
      r.status = stats::verdictName(cmp.verdict);
      r.metric = cmp.metric;
      r.ratio = cmp.ratio;
      r.ciLow = cmp.ciLow;
      r.ciHigh = cmp.ciHigh;
      r.p = cmp.p;
      r.detail =
          fmt::format("gate run {}: {} {:+.1f}% [{:+.1f}%, {:+.1f}%], p {:.2g}, {} rounds", r.gateRun, cmp.metric,
                      (cmp.ratio - 1) * 100, (cmp.ciLow - 1) * 100, (cmp.ciHigh - 1) * 100, cmp.p, cmp.rounds);
      return r;
    }
  r.detail = fmt::format("the gate gave no comparison of {} (exit {}{})", s.model, code,
                         got.infraErrors.empty() ? "" : ": " + got.infraErrors.front());
  return r;
}

std::string num(double v) {
  return std::isfinite(v) ? fmt::format("{:.4g}", v) : "-";
}

json jnum(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json toJson(const std::vector<Series>& all, const HistoryOpts& o, int confirmed) {
  json series = json::array();
  for (const auto& s : all) {
    json pts = json::array();
    for (size_t i = 0; i < s.points.size(); ++i) {
      const auto& p = s.points[i].stored;
      pts.push_back({{"index", i},
                     {"run", p.runId},
                     {"run_key", p.runKey},
                     {"kind", p.kind},
                     {"started_at", p.startedAt},
                     {"commit", p.revision},
                     {"dirty", p.dirty},
                     {"device", p.device},
                     {"value", jnum(s.points[i].value)},
                     {"samples", p.values.size()}});
    }
    json cps = json::array();
    for (size_t k = 0; k < s.changes.size(); ++k) {
      const auto& c = s.changes[k];
      const auto& b = s.points[static_cast<size_t>(c.index) - 1].stored;
      const auto& a = s.points[static_cast<size_t>(c.index)].stored;
      json j = {{"index", c.index},
                {"run_before", b.runId},
                {"run_after", a.runId},
                {"commit_before", b.revision},
                {"commit_after", a.revision},
                {"before", jnum(c.before)},
                {"after", jnum(c.after)},
                {"change_percent", jnum(c.change * 100)},
                {"p", c.p},
                {"segment_start", c.segmentStart},
                {"segment_end", c.segmentEnd},
                {"direction", slower(c, o.metric) ? "worse" : "better"}};
      if (k < s.confirmations.size()) {
        const auto& r = s.confirmations[k];
        j["confirmation"] = {{"status", r.status},        {"detail", r.detail},     {"gate_run", r.gateRun},
                             {"metric", r.metric},        {"ratio", jnum(r.ratio)}, {"ci_low", jnum(r.ciLow)},
                             {"ci_high", jnum(r.ciHigh)}, {"p", jnum(r.p)}};
      }
      cps.push_back(j);
    }
    json js = {{"model", s.model}, {"model_hash", s.modelHash}, {"machine", s.machine}, {"unit", s.unit},
               {"points", pts},    {"change_points", cps}};
    if (!s.skipped.empty())
      js["skipped"] = s.skipped;
    series.push_back(js);
  }
  return {{"format", "dynqual-history"},
          {"version", 1},
          {"metric", o.metric},
          {"kinds", o.kinds},
          {"method", stats::changePointMethodName(o.cp)},
          {"settings",
           {{"max_p", o.cp.maxP},
            {"min_segment", o.cp.minSegment},
            {"window", o.cp.window},
            {"min_magnitude", o.cp.minMagnitude}}},
          {"confirmed", o.confirm},
          {"confirmed_regressions", confirmed},
          {"series", series}};
}

void renderMarkdown(std::ostream& os, const std::vector<Series>& all, const HistoryOpts& o, int confirmed) {
  os << fmt::format("# History of {} (median per run; runs of kind {})\n\n", o.metric, fmt::join(o.kinds, ", "));
  os << fmt::format("Change points: {}, p <= {}, segments of at least {} runs{}.{}\n",
                    stats::changePointMethodName(o.cp), o.cp.maxP, o.cp.minSegment,
                    o.cp.minMagnitude > 0 ? fmt::format(", |change| > {}%", o.cp.minMagnitude * 100) : "",
                    o.confirm ? "" : " Not confirmed: `--confirm` re-measures each with the gate.");
  os << "\n";
  if (all.empty())
    os << "No stored run matches.\n";
  for (const auto& s : all) {
    os << fmt::format("## {} on machine {}\n\n", reports::escapeMarkdown(s.model), s.machine.substr(0, 12));
    os << fmt::format("{} runs, {} change point{}{}\n\n", s.points.size(), s.changes.size(),
                      s.changes.size() == 1 ? "" : "s", s.skipped.empty() ? "" : " (" + s.skipped + ")");
    if (!s.changes.empty()) {
      os << "| # | commit before → after | runs | " << o.metric << " before → after (" << s.unit << ") | change | p |"
         << (o.confirm ? " gate |" : "") << "\n";
      os << "|---:|---|---|---|---:|---:|" << (o.confirm ? "---|" : "") << "\n";
      for (size_t k = 0; k < s.changes.size(); ++k) {
        const auto& c = s.changes[k];
        const auto& b = s.points[static_cast<size_t>(c.index) - 1].stored;
        const auto& a = s.points[static_cast<size_t>(c.index)].stored;
        os << fmt::format("| {} | {} → {} | {} → {} | {} → {} | {:+.1f}% ({}) | {:.2g} |", c.index, shortRev(b),
                          shortRev(a), b.runId, a.runId, num(c.before), num(c.after), c.change * 100,
                          slower(c, o.metric) ? "worse" : "better", c.p);
        if (k < s.confirmations.size())
          os << " " << s.confirmations[k].status << ": " << reports::escapeMarkdown(s.confirmations[k].detail) << " |";
        os << "\n";
      }
      os << "\n";
    }
    os << "| # | run | started (UTC) | commit | " << o.metric << " (" << s.unit << ") | samples | |\n";
    os << "|---:|---:|---|---|---:|---:|---|\n";
    size_t next = 0;
    for (size_t i = 0; i < s.points.size(); ++i) {
      const auto& p = s.points[i].stored;
      std::string mark;
      if (next < s.changes.size() && s.changes[next].index == static_cast<int>(i))
        mark = fmt::format("change point {:+.1f}%", s.changes[next++].change * 100);
      os << fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", i, p.runId, p.startedAt, shortRev(p),
                        num(s.points[i].value), p.values.size(), mark);
    }
    os << "\n";
  }
  if (o.confirm)
    os << fmt::format("{} confirmed regression{}.\n", confirmed, confirmed == 1 ? "" : "s");
}

int runHistory(const HistoryOpts& o) {
  fs::path dbPath = o.db.empty() ? store::defaultDbPath() : fs::path(o.db);
  if (!fs::exists(dbPath))
    throw UsageError("--db " + dbPath.string() + ": no such database (record runs with `dynqual qualify --db " +
                     dbPath.string() + "`)");
  for (const auto& b : o.binFor)
    if (b.find('=') == std::string::npos || b.front() == '=' || b.back() == '=')
      throw UsageError("--bin-for '" + b + "': expected COMMIT=DIR");
  stats::ChangePointOptions cp = o.cp;
  if (o.method == "pelt") {
    cp.method = stats::ChangePointMethod::Pelt;
  } else {
    cp.method = stats::ChangePointMethod::EDivisive;
    cp.test =
        o.method == "e-divisive-permutation" ? stats::ChangePointTest::Permutation : stats::ChangePointTest::TTest;
  }
  if (cp.window < 2 * cp.minSegment)
    throw UsageError(fmt::format("--window {} must hold two segments of --min-segment {}", cp.window, cp.minSegment));
  HistoryOpts opts = o;
  opts.cp = cp;

  std::vector<Series> all;
  {
    store::OpenOptions ro;
    ro.mode = store::OpenOptions::Mode::ReadOnly;
    store::Store db(dbPath, ro);
    store::HistoryQuery q;
    q.metric = o.metric;
    q.model = o.model;
    q.machine = o.machine;
    q.kinds = o.kinds;
    all = buildSeries(store::metricHistory(db, q), o.limit);
  } // closed: --confirm records gate runs into the same file
  for (auto& s : all)
    detect(s, cp);
  int confirmed = 0;
  if (o.confirm) {
    for (auto& s : all)
      for (const auto& c : s.changes) {
        std::cerr << fmt::format("history: confirming {} change point {} ({:+.1f}%)\n", s.model, c.index,
                                 c.change * 100);
        s.confirmations.push_back(confirmOne(s, c, opts, dbPath));
        confirmed += s.confirmations.back().status == "regression";
      }
  }
  if (o.format == "json")
    std::cout << toJson(all, opts, confirmed).dump(2) << "\n";
  else
    renderMarkdown(std::cout, all, opts, confirmed);
  return confirmed > 0 ? 1 : 0;
}

} // namespace

void addHistoryCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "history",
      "One metric of the stored runs over time (qualify runs by default: the nightly job records those), per\n"
      "model and machine, with its change points (PELT, E-divisive: docs/metrics/change-points.md). --confirm\n"
      "re-measures each change point with the gate: both commits built in the gate's cache, one interleaved\n"
      "A/B of the model; only a gate verdict of regression counts as a regression (docs/commands/history.md).\n"
      "Exit: 0 no confirmed regression, 1 a confirmed regression, 2 usage or input error.");
  auto o = std::make_shared<HistoryOpts>();
  cmd->add_option("--model", o->model, "only this model (its folder name)");
  cmd->add_option("--metric", o->metric, "stored metric (docs/store.md): latency_ms, qps, cpu_percent, ...")
      ->capture_default_str();
  cmd->add_option("--machine", o->machine, "only the machine whose fingerprint starts with this");
  cmd->add_option("--kind", o->kinds, "run kinds to read (repeatable)")->capture_default_str();
  cmd->add_option("--db", o->db, "results database (default: $DYNQUAL_DB, else ./dynqual.db)");
  cmd->add_option("--format", o->format, "stdout format")->check(CLI::IsMember({"md", "json"}))->capture_default_str();
  cmd->add_option("--limit", o->limit, "only the newest N runs of each series (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--method", o->method, "change-point method")
      ->check(CLI::IsMember({"pelt", "e-divisive", "e-divisive-permutation"}))
      ->capture_default_str();
  cmd->add_option("--max-p", o->cp.maxP, "keep a change point when Welch's test between its segments gives p <= this")
      ->check(CLI::Range(1e-12, 1.0))
      ->capture_default_str();
  cmd->add_option("--min-segment", o->cp.minSegment, "runs each segment holds at least")
      ->check(CLI::Range(2, 100000))
      ->capture_default_str();
  cmd->add_option("--min-magnitude", o->cp.minMagnitude, "also drop changes of at most this relative size (0.02 = 2%)")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  cmd->add_option("--window", o->cp.window, "E-divisive: points per sliding window")
      ->check(CLI::Range(4, 100000))
      ->capture_default_str();
  cmd->add_option("--permutations", o->cp.permutations, "e-divisive-permutation: permutations per test")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_flag("--confirm", o->confirm, "re-measure each change point with the gate (builds both commits)");
  cmd->add_option("--repo", o->repo, "--confirm: the git repository the commits are in")->capture_default_str();
  cmd->add_option("--cache-dir", o->cacheDir, "--confirm: the gate's build cache (default as dynqual gate)");
  cmd->add_option("--bin-for", o->binFor,
                  "--confirm: COMMIT=DIR, binaries already built for a commit (prefix of its sha)");
  cmd->add_option("--variant", o->variant, "--confirm: the dq variant both commits run")->capture_default_str();
  cmd->add_option("--suite", o->suites, "--confirm: folders holding the model folders (default: the qualify suite)");
  cmd->add_option("--looks", o->looks, "--confirm: one look at this many rounds (default: the gate's schedule)")
      ->check(CLI::Range(2, 100000));
  cmd->add_option("--samples", o->samples, "--confirm: samples per ABBA position (0: the gate's default)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "--confirm: discarded runs at the start of each position")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--budget", o->budget, "--confirm: seconds of timed rounds per change point")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--inject-slowdown", o->inject, "--confirm self-test: MODEL=PERCENT slows the later commit's arm");
  cmd->callback([o] {
    try {
      setExitCode(runHistory(*o));
    } catch (const std::exception& e) {
      std::cerr << "dynqual history: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
