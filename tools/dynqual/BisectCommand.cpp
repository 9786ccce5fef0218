// `dynqual bisect --good REV --bad REV [SUITE...]`: which commit of a range made a model slower.
// The search is dynqual::bisect; each revision is built by the gate's builder and each step is
// one interleaved A/B of the A/B engine with the gate's policy and sequential looks.
#include "AbFlags.h"
#include "AbMeasurementChoice.h"
#include "Commands.h"
#include "GateBuildFlags.h"

#include "dynqual/bisect/Bisection.h"
#include "dynqual/diff/AbStore.h"
#include "dynqual/diff/Engine.h"
#include "dynqual/exec/Executor.h"
#include "dynqual/gate/RevisionBuild.h"
#include "dynqual/qualify/Suite.h"
#include "dynqual/run/ModelRun.h"
#include "dynqual/store/RunRecording.h"
#include "dynqual/store/Store.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <map>

namespace fs = std::filesystem;

namespace dynqual::cli {

namespace {

struct BisectOpts {
  std::string good, bad, repo = ".", cacheDir, variant = "dq:production@sim", metric = "auto";
  std::vector<std::string> suites, models;
  BuildCommandFlags buildCommands;
  double alpha = 0.05, margin = 0.02, budget = 600, minSampleMs = 0;
  std::vector<int> looks;
  int samples = 0, warmup = 2, bootstrap = 2000;
  uint64_t seed = 1;
  bool noVerify = false, noImprovements = false, noDb = false;
  std::string format = "md", outDir, db, workDir;
};

/// The model folders of the suite, narrowed to --model names. Throws UsageError for an empty
/// suite or a --model the suite does not hold.
std::vector<fs::path> bisectModels(const BisectOpts& o) {
  std::vector<fs::path> all;
  try {
    all = o.suites.empty() ? qualify::perfSuite(exec::selfBinDir() / "dynqual")
                           : run::expandModelDirs(std::vector<fs::path>(o.suites.begin(), o.suites.end()));
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  if (all.empty())
    throw UsageError("the suite holds no model (pass SUITE folders holding model.onnx)");
  if (o.models.empty())
    return all;
  std::vector<fs::path> picked;
  for (const auto& m : o.models) {
    auto it = std::find_if(all.begin(), all.end(), [&](const fs::path& p) { return p.filename() == m; });
    if (it == all.end()) {
      std::string names;
      for (const auto& p : all)
        names += (names.empty() ? "" : ", ") + p.filename().string();
      throw UsageError("--model " + m + ": not in the suite (it holds " + names + ")");
    }
    picked.push_back(*it);
  }
  return picked;
}

/// The clock --metric names: cpu_time -> thread-cpu, latency -> wall, auto -> the gate's choice.
std::string clockChoice(const std::string& metric) {
  return metric == "cpu_time" ? "thread-cpu" : metric == "latency" ? "wall" : "auto";
}

/// One bisection: the builds it made, the A/B of each step through the engine, the store records.
class Bisector {
public:
  Bisector(const BisectOpts& o, std::vector<bisect::Revision> revs, std::vector<fs::path> models, store::Store* db,
           exec::Executor& executor, std::string bisectKey)
      : o_(o), revs_(std::move(revs)), models_(std::move(models)), db_(db), executor_(executor),
        bisectKey_(std::move(bisectKey)) {}

  /// Builds revision i through the gate's cache; "" or why it failed.
  std::string build(size_t i) {
    gate::BuildRequest req;
    req.repo = o_.repo;
    req.rev = revs_[i].sha;
    if (!o_.cacheDir.empty())
      req.cacheRoot = o_.cacheDir;
    applyBuildCommandFlags(o_.buildCommands, req);
    std::string label = revs_[i].sha.substr(0, 12);
    req.progress = [&](const std::string& line) { std::cerr << "bisect: build " << label << ": " << line << "\n"; };
    try {
      gate::BuiltRevision b = gate::buildRevision(req);
      binDirs_[i] = b.binDir;
      std::cerr << fmt::format("bisect: {} {} ({:.1f} s{})\n", label, revs_[i].subject, b.buildSeconds,
                               b.fromCache ? ", cached" : "");
      return "";
    } catch (const gate::BuildFailed& e) {
      std::cerr << "bisect: " << e.what() << "\n" << e.logTail();
      return e.what();
    } catch (const gate::GateError& e) {
      return e.what();
    }
  }

  /// One interleaved A/B of revision `head` against revision `base` on the named models.
  bisect::Measured measure(size_t base, size_t head, const std::vector<std::string>& names) {
    diff::AbOptions ab;
    for (const auto& n : names)
      for (const auto& m : models_)
        if (m.filename() == n)
          ab.models.push_back(m);
    ab.base = makeArm("base", o_.variant, "--variant");
    ab.head = makeArm("head", o_.variant, "--variant");
    ab.base.binDir = binDirs_.at(base);
    ab.head.binDir = binDirs_.at(head);
    ab.policy.alpha = o_.alpha;
    ab.policy.margin = o_.margin;
    ab.policy.bootstrapResamples = o_.bootstrap;
    ab.policy.seed = o_.seed;
    ab.measure.warmup = o_.warmup;
    ab.measure.budgetSeconds = o_.budget;
    ab.measure.clock = resolveClock(clockChoice(o_.metric), ab.base, ab.head, executor_);
    ab.measure.interleave = resolveInterleave("auto", ab.base, ab.head, executor_);
    bool sample = ab.measure.interleave == diff::Interleave::Sample;
    ab.measure.cpu = sample ? resolvePinCpu("auto") : -1;
    ab.measure.samplesPerPosition = o_.samples != 0 ? o_.samples : sample ? 20 : 5;
    ab.measure.minSampleMs = o_.minSampleMs != 0 ? o_.minSampleMs : sample ? 4.0 : 1.0;
    ab.policy.looks = !o_.looks.empty() ? o_.looks
                      : sample          ? stats::kSampleInterleaveLookRounds
                                        : stats::kDefaultLookRounds;
    ab.policy.roundValue = sample ? diff::RoundValue::LowerHalfMean : diff::RoundValue::Min;
    ab.progress = isatty(STDERR_FILENO);

    std::cerr << fmt::format("bisect: comparing {} ({}) against {} ({}) on {}\n", revs_[head].sha.substr(0, 12), head,
                             revs_[base].sha.substr(0, 12), base, fmt::join(names, ", "));
    int64_t runId = 0;
    std::map<std::string, std::string> params = diff::policyParams(ab.policy, ab.measure);
    params["base"] = ab.base.variant.text();
    params["head"] = ab.head.variant.text();
    params["base_rev"] = revs_[base].sha;
    params["head_rev"] = revs_[head].sha;
    params["base_bin"] = ab.base.binDir.string();
    params["head_bin"] = ab.head.binDir.string();
    params["bisect_key"] = bisectKey_;
    if (db_) {
      store::RunRecord header = store::newRunHeader("bisect-step", ab.head.variant.device, ab.head.variant.text(),
                                                    {ab.head.binDir / "dynqual"}, params);
      runId = db_->beginRun(header);
    }
    diff::AbResult r = diff::runAb(ab, executor_, [&](const std::string& line) {
      if (ab.progress)
        std::cerr << "\r\033[K" << line << std::flush;
    });
    if (ab.progress)
      std::cerr << "\r\033[K";
    if (db_) {
      try {
        diff::recordAbResult(*db_, runId, r);
        db_->finishRun(runId);
      } catch (const std::exception& e) {
        std::cerr << "bisect: recording the step into the store failed (the bisection goes on): " << e.what() << "\n";
      }
    }
    std::cerr << "bisect:   " << diff::verdictLine(r) << "\n";

    bisect::Measured m;
    m.runId = runId;
    m.rounds = r.rounds;
    m.seconds = r.wallSeconds;
    m.processRuns = r.rounds * (sample ? 2 : 4) * static_cast<int>(ab.models.size());
    for (const auto& e : r.infraErrors)
      m.error += (m.error.empty() ? "" : "; ") + e;
    for (const auto& c : r.checks)
      if (!c.passed)
        m.error += (m.error.empty() ? "" : "; ") + c.model + " failed its accuracy check: " + c.detail;
    std::string timed = diff::timingMetric(ab.measure.clock);
    for (const auto& c : r.comparisons) {
      if (c.metric != timed)
        continue;
      bisect::ModelChange mc;
      mc.model = c.model;
      mc.metric = c.metric;
      mc.verdict = c.verdict;
      mc.ratio = c.ratio;
      mc.ciLow = c.ciLow;
      mc.ciHigh = c.ciHigh;
      mc.p = c.p;
      mc.rounds = c.rounds;
      mc.decidedAtRounds = c.decidedAtRounds;
      m.changes.push_back(mc);
    }
    return m;
  }

private:
  const BisectOpts& o_;
  std::vector<bisect::Revision> revs_;
  std::vector<fs::path> models_;
  store::Store* db_;
  exec::Executor& executor_;
  std::string bisectKey_;
  std::map<size_t, fs::path> binDirs_;
};

int runBisect(const BisectOpts& o) {
  if (o.variant.rfind("dq", 0) != 0)
    throw UsageError("--variant: a bisection compares builds of this compiler, so it takes a dq variant");
  makeArm("base", o.variant, "--variant"); // a variant that does not parse fails here, before any build
  std::vector<fs::path> models = bisectModels(o);
  std::vector<bisect::Revision> revs;
  try {
    revs = bisect::revisionRange(o.repo, o.good, o.bad);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  if (!o.outDir.empty()) {
    std::error_code ec;
    fs::create_directories(o.outDir, ec);
    if (!std::ofstream(fs::path(o.outDir) / "bisect.md"))
      throw UsageError("--out " + o.outDir + ": cannot write there");
  }
  std::cerr << fmt::format("bisect: {} revisions from {} to {}, {} models\n", revs.size(),
                           revs.front().sha.substr(0, 12), revs.back().sha.substr(0, 12), models.size());

  std::unique_ptr<store::Store> db;
  if (!o.noDb)
    db = std::make_unique<store::Store>(o.db.empty() ? store::defaultDbPath() : fs::path(o.db));
  bool tempWork = o.workDir.empty();
  fs::path work = tempWork ? makeTempWorkDir("bisect") : fs::path(o.workDir);
  fs::create_directories(work);
  exec::ExecConfig ec;
  ec.workDir = work;
  exec::Executor executor(ec);

  std::map<std::string, std::string> params = {{"good", o.good},
                                               {"bad", o.bad},
                                               {"good_rev", revs.front().sha},
                                               {"bad_rev", revs.back().sha},
                                               {"repo", fs::absolute(o.repo).lexically_normal().string()},
                                               {"variant", o.variant},
                                               {"metric", o.metric},
                                               {"alpha", fmt::format("{}", o.alpha)},
                                               {"margin", fmt::format("{}", o.margin)}};
  store::RunRecord header = store::newRunHeader("bisect", makeArm("head", o.variant, "--variant").variant.device,
                                                o.variant, {exec::selfBinDir() / "dynqual"}, params);

  Bisector bisector(o, revs, models, db.get(), executor, header.key);
  std::vector<std::string> names;
  for (const auto& m : models)
    names.push_back(m.filename().string());
  bisect::Options opt;
  opt.verify = !o.noVerify;
  opt.trackImprovements = !o.noImprovements;
  bisect::Outcome out = bisect::runBisection(
      revs, names, [&](size_t i) { return bisector.build(i); },
      [&](size_t b, size_t h, const std::vector<std::string>& ms) { return bisector.measure(b, h, ms); }, opt);
  if (tempWork)
    fs::remove_all(work);

  std::vector<std::string> context = {
      fmt::format("range: `{}` ({}) .. `{}` ({}) in {}", revs.front().sha.substr(0, 12), o.good,
                  revs.back().sha.substr(0, 12), o.bad, params["repo"]),
      fmt::format("variant {}, metric {}, alpha {}, margin {:.1f}%", o.variant, o.metric, o.alpha, o.margin * 100)};
  std::string md = bisect::renderMarkdown(out, context);
  std::string js = bisect::renderJson(
      out, {{"good", o.good}, {"bad", o.bad}, {"repo", params["repo"]}, {"variant", o.variant}, {"metric", o.metric}});
  int code = out.exitCode;
  if (db) {
    // The bisection itself: its outcome in the run's parameters, steps linked by bisect_key.
    header.params["exit_code"] = std::to_string(out.exitCode);
    header.params["summary"] = out.summary;
    header.params["report_json"] = js;
    header.params["total_rounds"] = std::to_string(out.totalRounds);
    header.params["builds"] = std::to_string(out.built.size());
    try {
      int64_t id = db->beginRun(header);
      db->finishRun(id);
      std::cerr << "bisect: recorded as run " << id << " in " << db->path().string() << "\n";
    } catch (const std::exception& e) {
      std::cerr << "bisect: recording into the store failed (the report below is complete): " << e.what() << "\n";
      code = std::max(code, 2);
    }
  }
  std::cout << (o.format == "json" ? js : md);
  if (!o.outDir.empty()) {
    std::ofstream(fs::path(o.outDir) / "bisect.md") << md;
    std::ofstream(fs::path(o.outDir) / "bisect.json") << js;
  }
  std::cerr << "dynqual bisect: " << out.summary << "\n";
  return code;
}

} // namespace

void addBisectCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bisect", "Find the commit between --good and --bad that made a model slower, on this machine: each revision\n"
                "is built by the gate's builder (cached by commit) and each step is one interleaved A/B with the\n"
                "gate's statistics, closing at the first look that decides (docs/commands/bisect.md).\n"
                "Exit: 0 every regression located and confirmed, 2 usage or input error, 3 no regression between\n"
                "the endpoints or a culprit left ambiguous or unconfirmed, 4 an endpoint does not build.");
  auto o = std::make_shared<BisectOpts>();
  cmd->add_option("--good", o->good, "a revision without the regression")->required();
  cmd->add_option("--bad", o->bad, "a later revision with it (good must be its ancestor)")->required();
  cmd->add_option("suite", o->suites, "model folders or folders of them (default: the perf suite)");
  cmd->add_option("--model", o->models, "bisect only these models of the suite (repeatable)");
  cmd->add_option("--metric", o->metric,
                  "cpu_time (thread CPU time, dq on sim), latency (wall time), or auto (the gate's choice)")
      ->check(CLI::IsMember({"auto", "cpu_time", "latency"}))
      ->capture_default_str();
  cmd->add_option("--repo", o->repo, "the git repository to build from")->capture_default_str();
  cmd->add_option("--cache-dir", o->cacheDir, "build cache (default: $DYNQUAL_GATE_CACHE, else ~/.cache/dynqual/gate)");
  addBuildCommandFlags(cmd, o->buildCommands);
  cmd->add_option("--variant", o->variant, "the dq variant every revision runs")->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "false-positive rate of each comparison, split over looks, Holm over models")
      ->check(CLI::Range(1e-6, 0.5))
      ->capture_default_str();
  cmd->add_option("--margin", o->margin, "relative change treated as no change (e.g. 0.02 = 2%)")
      ->check(CLI::Range(0.0, 0.5))
      ->capture_default_str();
  cmd->add_option("--looks", o->looks, "rounds at which each comparison is analysed (default: the gate's)")
      ->delimiter(',');
  cmd->add_option("--budget", o->budget, "seconds of timed rounds per comparison; may only cut looks short")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--samples", o->samples, "samples per ABBA position (0 = the gate's default)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "discarded runs at the start of each position")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--min-sample-ms", o->minSampleMs, "shortest batch one sample times, ms (0 = the gate's default)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o->seed, "bootstrap and generated-input seed")->capture_default_str();
  cmd->add_flag("--no-verify", o->noVerify, "skip the final A/B of each culprit against its parent");
  cmd->add_flag("--no-improvements", o->noImprovements, "locate regressions only, not improvements in the range");
  cmd->add_option("--format", o->format, "stdout format")->check(CLI::IsMember({"md", "json"}))->capture_default_str();
  cmd->add_option("--out", o->outDir, "also write bisect.md and bisect.json into this folder");
  cmd->add_option("--db", o->db, "results database (default: $DYNQUAL_DB, else ./dynqual.db)");
  cmd->add_flag("--no-db", o->noDb, "do not record the bisection");
  cmd->add_option("--work-dir", o->workDir, "keep artifacts here (default: a temp folder, removed)");
  cmd->callback([o] {
    try {
      setExitCode(runBisect(*o));
    } catch (const UsageError& e) {
      std::cerr << "dynqual bisect: " << e.what() << "\n";
      setExitCode(2);
    } catch (const std::exception& e) {
      std::cerr << "dynqual bisect: infrastructure error: " << e.what() << "\n";
      setExitCode(4);
    }
  });
}

} // namespace dynqual::cli
