// `dynqual gate`: builds two git revisions (or takes prebuilt binaries) and compares them with
// the A/B engine; `--reanalyze RUN` recomputes every verdict of a stored run from its samples.
#include "AbDriver.h"
#include "Commands.h"

#include "dynqual/diff/AbStore.h"
#include "dynqual/diff/Analysis.h"
#include "dynqual/diff/Engine.h"
#include "dynqual/diff/Identical.h"
#include "dynqual/gate/RevisionBuild.h"
#include "dynqual/store/Store.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <iostream>

namespace fs = std::filesystem;

namespace dynqual::cli {

namespace {

bool sameNumber(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b || (std::isinf(a) && std::isinf(b) && (a > 0) == (b > 0));
}

/// Recomputes the verdicts of stored run `which` and prints the report; exit 1 when a stored
/// verdict differs from the recomputed one (the stored numbers are then not reproducible).
int reanalyze(const std::string& which, const AbFlags& f) {
  store::OpenOptions ro;
  ro.mode = store::OpenOptions::Mode::ReadOnly;
  store::Store db(f.db.empty() ? store::defaultDbPath() : fs::path(f.db), ro);
  int64_t runId = 0;
  if (which == "latest") {
    runId = diff::latestAbRun(db);
  } else {
    try {
      runId = std::stoll(which);
    } catch (const std::exception&) {
      throw UsageError("--reanalyze '" + which + "': expected a run id or 'latest'");
    }
  }
  diff::StoredAbRun stored = diff::loadAbRun(db, runId);
  diff::Policy policy = diff::policyFromParams(stored.params);
  std::string timed = diff::timingMetricFromParams(stored.params);
  std::vector<std::string> timedModels;  // the compile rows, if any, follow for the same models
  std::vector<diff::MetricComparison> identical;  // decided by hashes, not samples: kept, last
  for (const auto& c : stored.comparisons)
    if (c.verdict == diff::Verdict::Identical)
      identical.push_back(c);
    else if (c.metric == timed)
      timedModels.push_back(c.model);
  diff::AnalysisOutcome again = diff::analyze(stored.samples, timedModels, policy, timed,
                                              stored.compileSamples, diff::compileMetricFromParams(stored.params));
  again.comparisons.insert(again.comparisons.end(), identical.begin(), identical.end());
  std::vector<std::string> differences;
  for (size_t i = 0; i < stored.comparisons.size(); ++i) {
    const auto& s = stored.comparisons[i];
    if (i >= again.comparisons.size()) {
      differences.push_back(s.model + ": no recomputed comparison");
      continue;
    }
    const auto& a = again.comparisons[i];
    if (s.verdict != a.verdict || !sameNumber(s.p, a.p) || !sameNumber(s.ratio, a.ratio) ||
        !sameNumber(s.ciLow, a.ciLow) || !sameNumber(s.ciHigh, a.ciHigh) || s.rounds != a.rounds)
      differences.push_back(fmt::format("{}: stored {} ratio {} p {}, recomputed {} ratio {} p {}", s.model,
                                        stats::verdictName(s.verdict), s.ratio, s.p, stats::verdictName(a.verdict),
                                        a.ratio, a.p));
  }
  diff::AbResult r;
  r.checks = stored.checks;
  r.samples = stored.samples;
  r.compileSamples = stored.compileSamples;
  r.comparisons = again.comparisons;
  r.counterChanges = diff::counterChanges(r.checks);
  diff::hashesFromParams(stored.params, r);
  r.looksDone = again.looksDone;
  for (const auto& s : r.samples)
    r.rounds = std::max(r.rounds, s.round + 1);
  if (auto it = stored.params.find("clock"); it != stored.params.end())
    r.clock = exec::parseTimingClock(it->second);  // runs before --clock have none: wall
  diff::Measurement m;
  m.clock = r.clock;
  if (auto it = stored.params.find("interleave"); it != stored.params.end() && it->second == "sample")
    m.interleave = diff::Interleave::Sample;
  reports::GateContext ctx{stored.kind + " (reanalysed)", stored.params["base"], stored.params["head"], policy, m, runId};
  for (const char* k : {"base_build", "head_build"})
    if (auto it = stored.params.find(k); it != stored.params.end())
      ctx.notes.push_back(it->second);
  emitAbReport(f, r, ctx);
  if (!differences.empty()) {
    for (const auto& d : differences)
      std::cerr << "dynqual gate --reanalyze: differs: " << d << "\n";
    return 1;
  }
  std::cerr << fmt::format("dynqual gate --reanalyze: run {}: {} comparisons recomputed from {} samples, identical "
                           "to the stored verdicts\n",
                           runId, again.comparisons.size(), r.samples.size());
  return diff::exitCodeFor(r);
}

} // namespace

void addGateCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "gate", "Build two git revisions of this project in their own worktrees (cached by commit and toolchain) and\n"
              "compare them with the A/B engine: each revision compiles and runs with its own binaries\n"
              "(docs/commands/gate.md). --head WORKTREE takes the working tree as it is. --reanalyze RUN\n"
              "recomputes every verdict of a stored run from its samples. A model whose runtime and compiled\n"
              "program are byte-identical in both revisions gets the verdict 'identical' (a pass) without\n"
              "timing rounds; --force-timing times it anyway.\n"
              "Exit: 0 pass, 1 regression or accuracy failure, 2 usage or input error, 3 inconclusive within\n"
              "budget, 4 infrastructure error such as a failed build (1 wins over 4, 4 over 3).");
  struct Opts {
    AbFlags flags;
    std::string base, head, baseBin, headBin, repo = ".", cacheDir, variant = "dq:production@sim", reanalyze;
    bool forceTiming = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--base", o->base, "base revision (any git revision)");
  cmd->add_option("--head", o->head, "head revision, or WORKTREE for the working tree as it is");
  cmd->add_option("--base-bin", o->baseBin, "prebuilt base binaries (folder with dynqual and dynqual-exec)");
  cmd->add_option("--head-bin", o->headBin, "prebuilt head binaries");
  cmd->add_option("--repo", o->repo, "the git repository to build from")->capture_default_str();
  cmd->add_option("--cache-dir", o->cacheDir, "build cache (default: $DYNQUAL_GATE_CACHE, else ~/.cache/dynqual/gate)");
  cmd->add_option("--variant", o->variant, "the dq variant both revisions run")->capture_default_str();
  cmd->add_option("--reanalyze", o->reanalyze, "recompute the verdicts of stored run RUN (an id or 'latest')");
  cmd->add_flag("--force-timing", o->forceTiming,
                "time every model, also those whose runtime and program bytes are identical in both revisions\n"
                "(by default such a model gets the verdict 'identical' without timing rounds)");
  addAbFlags(cmd, o->flags);
  cmd->callback([o] {
    try {
      if (!o->reanalyze.empty()) {
        setExitCode(reanalyze(o->reanalyze, o->flags));
        return;
      }
      if (o->base.empty() == o->baseBin.empty())
        throw UsageError("give exactly one of --base REV and --base-bin DIR");
      if (o->head.empty() == o->headBin.empty())
        throw UsageError("give exactly one of --head REV|WORKTREE and --head-bin DIR");
      diff::AbOptions options;
      options.base = makeArm("base", o->variant, "--variant");
      options.head = makeArm("head", o->variant, "--variant");
      options.skipIdentical = !o->forceTiming;
      if (options.base.variant.kind != exec::Variant::Kind::Dq)
        throw UsageError("--variant: a gate compares builds of this compiler, so it takes a dq variant");
      std::map<std::string, std::string> params;
      auto side = [&](const std::string& label, const std::string& rev, const std::string& bin, exec::Arm& arm) {
        gate::BuiltRevision b;
        try {
          if (!bin.empty()) {
            b = gate::useBinDir(bin);
          } else {
            gate::BuildRequest req;
            req.repo = o->repo;
            req.rev = rev;
            if (!o->cacheDir.empty())
              req.cacheRoot = o->cacheDir;
            req.progress = [&](const std::string& line) { std::cerr << "gate: " << label << ": " << line << "\n"; };
            b = gate::buildRevision(req);
          }
        } catch (const gate::RevisionError& e) {
          throw UsageError(e.what());
        }
        arm.binDir = b.binDir;
        params[label + "_rev"] = b.sha.empty() ? (bin.empty() ? rev : bin) : b.sha;
        params[label + "_from_cache"] = b.fromCache ? "1" : "0";
        params[label + "_build_s"] = fmt::format("{:.1f}", b.buildSeconds);
        if (b.ccache.used) {
          params[label + "_ccache_hits"] = std::to_string(b.ccache.hits);
          params[label + "_ccache_compiles"] = std::to_string(b.ccache.compiles());
        }
        std::string how = !bin.empty()     ? "prebuilt"
                          : b.fromCache    ? "cached build reused"
                                           : fmt::format("built in {:.1f} s, {}", b.buildSeconds, b.ccache.summary());
        params[label + "_build"] = fmt::format("{} {}{}: {}", label, rev.empty() ? bin : rev,
                                               b.sha.empty() ? "" : " (" + b.sha.substr(0, 12) + ")", how);
        std::cerr << "gate: " << params[label + "_build"] << "\n";
        if (b.ccache.misses > 0 && b.ccache.misses <= 20) {
          std::string missed;
          for (const auto& m : b.ccache.missed)
            missed += (missed.empty() ? "" : ", ") + m;
          std::cerr << "gate: " << label << " ccache misses: " << missed << "\n";
        }
      };
      try {
        side("base", o->base, o->baseBin, options.base);
        side("head", o->head, o->headBin, options.head);
      } catch (const gate::GateError& e) {
        std::cerr << "dynqual gate: infrastructure error: " << e.what() << "\n";
        setExitCode(diff::kInfra);
        return;
      }
      params["force_timing"] = o->forceTiming ? "1" : "0";
      setExitCode(runAbCommand("gate", o->flags, options, params));
    } catch (const std::exception& e) {
      std::cerr << "dynqual gate: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
