// `dynqual gate`: builds two git revisions (or takes prebuilt binaries) and compares them with
// the A/B engine; `--reanalyze RUN` recomputes every verdict of a stored run from its samples.
#include "AbDriver.h"
#include "AbStoredRun.h"
#include "Commands.h"
#include "GateBuildFlags.h"

#include "dynqual/diff/AbStore.h"
#include "dynqual/gate/LayoutVariants.h"
#include "dynqual/gate/RevisionBuild.h"
#include "dynqual/store/Store.h"

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>

namespace fs = std::filesystem;

namespace dynqual::cli {

namespace {

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
  RebuiltAbRun run = rebuildAbRun(db, runId, StoredComparisons::Recomputed);
  run.context.command += " (reanalysed)";
  emitAbReport(f, run.result, run.context);
  if (!run.differences.empty()) {
    for (const auto& d : run.differences)
      std::cerr << "dynqual gate --reanalyze: differs: " << d << "\n";
    return 1;
  }
  std::cerr << fmt::format("dynqual gate --reanalyze: run {}: {} comparisons recomputed from {} samples, identical "
                           "to the stored verdicts\n",
                           runId, run.recomputed, run.result.samples.size());
  return diff::exitCodeFor(run.result);
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
    BuildCommandFlags buildCommands;
    std::string base, head, baseBin, headBin, baseSrc, headSrc, repo = ".", cacheDir, variant = "dq:production@sim",
                                                                reanalyze;
    std::vector<std::string> aEnv, bEnv;
    bool forceTiming = false;
    int layouts = 0;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--base", o->base, "base revision (any git revision)");
  cmd->add_option("--head", o->head, "head revision, or WORKTREE for the working tree as it is");
  cmd->add_option("--base-bin", o->baseBin, "prebuilt base binaries (folder with dynqual and dynqual-exec)");
  cmd->add_option("--head-bin", o->headBin, "prebuilt head binaries");
  cmd->add_option("--base-src", o->baseSrc,
                  "with --base-bin and --prepare-device: the source tree those binaries were built from, whose "
                  "runtime the device plan carries (a revision's own tree is used without it)");
  cmd->add_option("--head-src", o->headSrc, "with --head-bin and --prepare-device: as --base-src, for the head");
  cmd->add_option("--repo", o->repo, "the git repository to build from")->capture_default_str();
  cmd->add_option("--cache-dir", o->cacheDir, "build cache (default: $DYNQUAL_GATE_CACHE, else ~/.cache/dynqual/gate)");
  cmd->add_option("--variant", o->variant, "the dq variant both revisions run")->capture_default_str();
  cmd->add_option("--reanalyze", o->reanalyze, "recompute the verdicts of stored run RUN (an id or 'latest')");
  addBuildCommandFlags(cmd, o->buildCommands);
  cmd->add_flag("--force-timing", o->forceTiming,
                "time every model, also those whose runtime and program bytes are identical in both revisions\n"
                "(by default such a model gets the verdict 'identical' without timing rounds)");
  cmd->add_option(
         "--layouts", o->layouts,
         "relink each arm's dynqual-exec K ways that differ only in code layout (link order and a text\n"
         "offset) and time round r on layout r mod K, so layout noise counts as noise (docs/gate-layouts.md);\n"
         "0 = each arm's own binary")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  // The sim's modelled device time has no layout noise (docs/gate-layouts.md): a gate of two
  // builds decides on it where it can.
  o->flags.metric = "auto";
  addAbFlags(cmd, o->flags);
  addArmEnvFlags(cmd, o->aEnv, o->bEnv);
  cmd->callback([o] {
    try {
      if (!o->reanalyze.empty()) {
        setExitCode(reanalyze(o->reanalyze, o->flags));
        return;
      }
      if (!o->flags.importDevice.empty()) {
        // The builds and the device runs happened already: the arms are the plan's.
        if (!o->base.empty() || !o->head.empty() || !o->baseBin.empty() || !o->headBin.empty())
          throw UsageError("--import-device takes the revisions from its plan; give no --base, --head, --base-bin "
                           "or --head-bin");
        diff::AbOptions options;
        armsFromDevicePlan(o->flags.importDevice, "", "", options);
        setExitCode(runAbCommand("gate", o->flags, options));
        return;
      }
      if (o->base.empty() == o->baseBin.empty())
        throw UsageError("give exactly one of --base REV and --base-bin DIR");
      if (o->head.empty() == o->headBin.empty())
        throw UsageError("give exactly one of --head REV|WORKTREE and --head-bin DIR");
      if ((!o->baseSrc.empty() && o->baseBin.empty()) || (!o->headSrc.empty() && o->headBin.empty()))
        throw UsageError("--base-src and --head-src go with --base-bin and --head-bin (a built revision's source "
                         "tree is known)");
      diff::AbOptions options;
      options.base = makeArm("base", o->variant, "--variant");
      options.head = makeArm("head", o->variant, "--variant");
      options.base.env = o->aEnv;
      options.head.env = o->bEnv;
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
            applyBuildCommandFlags(o->buildCommands, req);
            req.progress = [&](const std::string& line) { std::cerr << "gate: " << label << ": " << line << "\n"; };
            b = gate::buildRevision(req);
          }
        } catch (const gate::RevisionError& e) {
          throw UsageError(e.what());
        }
        arm.binDir = b.binDir;
        // The source tree of the arm's binaries: a device plan carries its runtime from there.
        fs::path src = bin.empty() ? b.srcDir : fs::path(label == "base" ? o->baseSrc : o->headSrc);
        if (!src.empty())
          params[label + "_src"] = fs::absolute(src).lexically_normal().string();
        params[label + "_rev"] = b.sha.empty() ? (bin.empty() ? rev : bin) : b.sha;
        params[label + "_from_cache"] = b.fromCache ? "1" : "0";
        params[label + "_build_s"] = fmt::format("{:.1f}", b.buildSeconds);
        if (b.ccache.used) {
          params[label + "_ccache_hits"] = std::to_string(b.ccache.hits);
          params[label + "_ccache_compiles"] = std::to_string(b.ccache.compiles());
        }
        std::string how = !bin.empty()  ? "prebuilt"
                          : b.fromCache ? "cached build reused"
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
      if (o->layouts > 0) {
        if (!o->flags.prepareDevice.empty())
          throw UsageError(
              "--layouts relinks dynqual-exec for sim rounds; a device plan's dq-run is built on the device "
              "machine (scripts/layout-variants.py there, docs/gate-layouts.md)");
        auto relink = [&](const char* label, exec::Arm& arm, std::vector<fs::path>& into) {
          fs::path build = gate::ninjaBuildOf(arm.binDir);
          for (const auto& v : gate::relinkLayouts(arm.binDir, "dynqual-exec", o->layouts, build / "layout-variants")) {
            into.push_back(v.exec);
            params[fmt::format("{}_layout_sha256.L{}", label, v.k)] = v.sha256;
          }
          std::cerr << fmt::format("gate: {} runtime relinked in {} layouts under {}\n", label, o->layouts,
                                   (build / "layout-variants").string());
        };
        try {
          relink("base", options.base, options.baseLayouts);
          relink("head", options.head, options.headLayouts);
        } catch (const gate::GateError& e) {
          std::cerr << "dynqual gate: infrastructure error: " << e.what() << "\n";
          setExitCode(diff::kInfra);
          return;
        }
        params["layouts"] = std::to_string(o->layouts);
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
