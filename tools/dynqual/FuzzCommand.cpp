// `dynqual fuzz` (a campaign shard, or --selftest over the inject knobs), the worker
// `dynqual fuzz-case`, and `dynqual bench fuzz` (docs/commands/fuzz.md).
#include "Commands.h"
#include "NightlyCommands.h"
#include "FuzzCaseOptions.h"

#include "dq/Pipeline/InjectKnobs.h"
#include "dynqual/exec/Executor.h"
#include "dynqual/fuzz/Campaign.h"
#include "dynqual/fuzz/CaseRunner.h"
#include "dynqual/fuzz/Coverage.h"
#include "dynqual/modelgen/GraphBuilder.h"
#include "dynqual/stats/Descriptive.h"
#include "dynqual/store/Fingerprint.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>

namespace fs = std::filesystem;

namespace dynqual::cli {

namespace {

constexpr int kExitInfra = 4;
constexpr int kExitSkip = 77;

std::string percent(int64_t a, int64_t b) {
  return fmt::format("{:.1f}%", b ? 100.0 * a / b : 0.0);
}

void printSummary(const fuzz::CampaignSummary& s, int jobs, std::ostream& out) {
  out << "fuzz campaign: " << s.campaign << "\n";
  out << fmt::format("cases {} (valid {}, {}), {:.2f} cases/s over {:.1f} s with {} job(s){}\n", s.cases, s.valid,
                     percent(s.valid, s.cases), s.cases / std::max(s.wallSeconds, 1e-3), s.wallSeconds, jobs,
                     s.skipped ? fmt::format(", {} skipped (--resume)", s.skipped) : "");
  for (const auto& [why, n] : s.invalidReasons)
    out << fmt::format("  invalid: {} x {}\n", n, why);
  if (!s.sizes.empty()) {
    std::vector<double> sz(s.sizes.begin(), s.sizes.end());
    out << fmt::format("graph size (nodes per valid case): median {:.0f}, p10 {:.0f}, p90 {:.0f}, max {:.0f}\n",
                       stats::median(sz), stats::quantile(sz, 0.1), stats::quantile(sz, 0.9),
                       *std::max_element(sz.begin(), sz.end()));
  }
  std::string ops;
  for (const auto& [op, n] : s.opCounts)
    ops += fmt::format(" {} {}", op, n);
  out << "op kinds:" << ops << "\n";
  std::string paths;
  for (const auto& [c, n] : s.counters)
    paths += fmt::format(" {} {}", c, n);
  out << "compiler paths (device counters, summed):" << (paths.empty() ? " none reported" : paths) << "\n";
  out << fmt::format("feature coverage (valid cases that exercised each feature, of {}):\n", s.valid)
      << fuzz::coverageMarkdown(fuzz::coverageTable(s.features, s.valid));
  out << fmt::format("findings: {} ({} new), {} distinct signatures, {} bucket(s)\n", s.findings.size(), s.newFindings,
                     s.signatures.size(), s.buckets.size());
  for (const auto& [hash, key] : s.buckets) {
    int hits = 0;
    for (const auto& f : s.findings)
      hits += f.bucketHash == hash;
    out << fmt::format("  bucket {} x{}: {}\n", hash.substr(0, 12), hits, key);
  }
  for (size_t k = 0; k < s.findings.size(); ++k) {
    const auto& f = s.findings[k];
    out << fmt::format("  [{}] {} (bucket {}) at {:.1f} s: {} on {}{} nodes {} -> {}, input elements {} -> {}{}\n",
                       s.states[k], f.signature, f.bucketHash.substr(0, 12), s.findingSeconds[k], f.finding.variant,
                       f.finding.bindingText.empty() ? "compile" : "binding " + f.finding.bindingText, "",
                       f.nodesBefore, f.nodesAfter, f.elementsBefore, f.elementsAfter,
                       f.binding.empty() ? "" : " (" + f.binding + ")");
    out << "      " << f.finding.detail.substr(0, 300) << "\n";
    out << "      repro: " << f.reproducer << "\n";
    if (!f.caseDir.empty())
      out << "      case: " << f.caseDir << "\n";
  }
  out << fmt::format(
      "time (ms, summed over cases): generate {:.0f}, check {:.0f}, reference {:.0f}, compile {:.0f}, "
      "run {:.0f}, minimize {:.0f} (of which buckets {:.0f}), coverage {:.0f}, worker processes {:.0f}\n",
      s.generateMs, s.checkMs, s.referenceMs, s.compileMs, s.runMs, s.minimizeMs, s.bucketMs, s.coverageMs, s.workerMs);
  if (s.persistentWorkers)
    out << fmt::format("persistent workers: {} started, {} case(s) they could not answer rerun one-shot\n",
                       s.workerStarts, s.workerFailures);
  else
    out << "workers: one-shot (a process per case)\n";
  if (!s.infraError.empty())
    out << "stopped on an infrastructure error: " << s.infraError << "\n";
}

/// The summary for machines (`dynqual fuzz --format json`): the same numbers as printSummary.
nlohmann::json summaryJson(const fuzz::CampaignSummary& s, int jobs) {
  nlohmann::json coverage = nlohmann::json::array();
  for (const auto& r : fuzz::coverageTable(s.features, s.valid))
    coverage.push_back({{"op", r.op}, {"feature", r.feature}, {"valid_cases", r.cases}, {"percent", r.percent}});
  nlohmann::json findings = nlohmann::json::array();
  for (size_t k = 0; k < s.findings.size(); ++k) {
    const auto& f = s.findings[k];
    findings.push_back({{"state", s.states[k]},
                        {"signature", f.signature},
                        {"bucket", f.bucketHash},
                        {"at_seconds", s.findingSeconds[k]},
                        {"variant", f.finding.variant},
                        {"binding", f.finding.bindingText},
                        {"nodes_before", f.nodesBefore},
                        {"nodes_after", f.nodesAfter},
                        {"detail", f.finding.detail},
                        {"reproducer", f.reproducer}});
  }
  return {{"campaign", s.campaign},
          {"generator", fuzz::kGeneratorVersion},
          {"cases", s.cases},
          {"valid", s.valid},
          {"skipped", s.skipped},
          {"jobs", jobs},
          {"wall_seconds", s.wallSeconds},
          {"cases_per_second", s.cases / std::max(s.wallSeconds, 1e-3)},
          {"invalid", s.invalidReasons},
          {"op_counts", s.opCounts},
          {"counters", s.counters},
          {"coverage", coverage},
          {"findings", findings},
          {"new_findings", s.newFindings},
          {"ms", fuzz::phaseMillis(s)},
          {"infra_error", s.infraError}};
}

struct FuzzOpts {
  std::string time = "60s", inject, oracle, target = "dq", db, corpusOut, shard = "0/1", format = "text";
  int64_t cases = -1;
  int jobs = 1, bindings = 4;
  uint64_t seed = 1, memoryMb = 4096;
  double caseTimeout = 300, compileTimeout = 60, runTimeout = 20;
  double referenceTimeout = fuzz::kReferenceSecondsLimit;
  int64_t referenceMaxElements = fuzz::kReferenceElementLimit;
  std::vector<std::string> variants;
  bool resume = false, selftest = false, noMinimize = false, oneShot = false;
  int compilesPerContext = 64;
  std::vector<std::string> knobs; ///< --selftest: only these knobs (default all)
  std::string night;
};

fuzz::CampaignOptions campaignOptions(const FuzzOpts& o) {
  fuzz::CampaignOptions c;
  c.seed = o.seed;
  c.jobs = o.jobs;
  c.cases = o.cases;
  if (o.cases < 0)
    c.seconds = fuzz::parseDuration(o.time);
  auto slash = o.shard.find('/');
  try {
    if (slash == std::string::npos)
      throw std::invalid_argument("");
    c.shardIndex = std::stoi(o.shard.substr(0, slash));
    c.shardCount = std::stoi(o.shard.substr(slash + 1));
  } catch (const std::exception&) {
    throw UsageError("--shard '" + o.shard + "' is not i/N");
  }
  if (c.shardCount < 1 || c.shardIndex < 0 || c.shardIndex >= c.shardCount)
    throw UsageError("--shard " + o.shard + ": need 0 <= i < N");
  if (o.jobs < 1)
    throw UsageError("--jobs must be at least 1");
  if (o.bindings < 1)
    throw UsageError("--bindings must be at least 1");
  if (o.resume && o.db.empty())
    throw UsageError("--resume needs --db FILE (the finished cases are read from it)");
  c.resume = o.resume;
  c.db = o.db;
  c.corpusOut = o.corpusOut;
  c.bindings = o.bindings;
  c.knob = o.inject;
  c.ortOracle = o.oracle == "ort";
  c.minimize = !o.noMinimize;
  c.memoryMb = o.memoryMb;
  c.oneShot = o.oneShot;
  c.compilesPerContext = o.compilesPerContext;
  c.caseTimeoutSeconds = o.caseTimeout;
  c.compileTimeoutSeconds = o.compileTimeout;
  c.runTimeoutSeconds = o.runTimeout;
  c.referenceSeconds = o.referenceTimeout;
  c.referenceMaxElements = o.referenceMaxElements;
  c.binDir = exec::selfBinDir();
  std::vector<std::string> variants = o.variants;
  if (o.target == "ort") {
    if (!variants.empty() || !o.inject.empty())
      throw UsageError("--target ort fuzzes onnxruntime itself: it takes no --variant or --inject");
    variants = {"ort:cpu"};
  } else if (variants.empty()) {
    variants = {"dq:production@sim"};
  }
  c.variants.clear();
  for (const auto& v : variants) {
    try {
      c.variants.push_back(fuzzVariantWithKnob(v, o.inject));
    } catch (const exec::VariantError& e) {
      throw UsageError(e.what());
    }
  }
  c.progress = isatty(2);
  c.night = o.night.empty() ? store::utcNow().substr(0, 10) : o.night;
  if (!o.db.empty())
    c.revision = store::probeBuild(DYNQUAL_SOURCE_DIR, "", {}).revision;
  return c;
}

int runSelftest(const FuzzOpts& o) {
  double perKnob = o.cases < 0 ? std::min(60.0, fuzz::parseDuration(o.time)) : 60.0;
  fs::path work = makeTempWorkDir("selftest");
  int missed = 0, skipped = 0;
  std::cout << fmt::format("{:<34} {:>6} {:>9} {:>9} {:>9} {:>13} {:<18} {}\n", "knob", "cases", "found (s)", "min (s)",
                           "nodes", "input elems", "binding", "signature");
  for (const auto& [knob, name] : dq::kInjectKnobs) {
    if (!o.knobs.empty() && std::find(o.knobs.begin(), o.knobs.end(), std::string(name)) == o.knobs.end())
      continue;
    std::string why;
    if (!fuzz::compilerAcceptsKnob(exec::selfBinDir(), std::string(name), work / "probe", why)) {
      std::cout << fmt::format("{:<34} skipped: the compiler rejects inject={}: {}\n", name, name, why);
      ++skipped;
      continue;
    }
    FuzzOpts k = o;
    k.time = fmt::format("{}s", perKnob);
    k.db.clear();
    k.variants.clear();
    fuzz::CampaignOptions c = campaignOptions(k);
    // Production is the control: a finding counts for the knob only when production does not
    // show the same symptom on that case.
    std::string knobVariant = fuzz::variantWithKnob("dq:production@sim", std::string(name));
    c.variants = {"dq:production@sim", knobVariant};
    c.knob = std::string(name);
    c.stopAtFirstFinding = true;
    c.stopOnlyOnVariant = knobVariant;
    c.progress = false;
    c.workDir = work / std::string(name);
    fuzz::CampaignSummary s = fuzz::runCampaign(c);
    if (!s.infraError.empty()) {
      std::cerr << "dynqual fuzz --selftest: " << name << ": " << s.infraError << "\n";
      return kExitInfra;
    }
    if (s.firstOwnFinding < 0) {
      ++missed;
      std::cout << fmt::format("{:<34} {:>6} not found within {:.0f} s\n", name, s.cases, perKnob);
    } else {
      const auto k = static_cast<size_t>(s.firstOwnFinding);
      const auto& f = s.findings[k];
      // Found = when its case was done, less the minimization that worker did before reporting.
      std::cout << fmt::format("{:<34} {:>6} {:>9.1f} {:>9.1f} {:>9} {:>13} {:<18} {}\n", name, s.cases,
                               s.findingSeconds[k] - s.findingMinimizeSeconds[k], s.findingMinimizeSeconds[k],
                               fmt::format("{}->{}", f.nodesBefore, f.nodesAfter),
                               fmt::format("{}->{}", f.elementsBefore, f.elementsAfter),
                               f.binding.empty() ? "-" : f.binding, f.signature);
    }
  }
  std::error_code ec;
  fs::remove_all(work, ec);
  if (skipped > 0) {
    std::cout << "selftest skipped: the compiler does not accept " << skipped << " of " << dq::kInjectKnobs.size()
              << " inject knobs (build it with the inject options)\n";
    return missed > 0 ? 1 : kExitSkip;
  }
  return missed > 0 ? 1 : 0;
}

} // namespace

void addFuzzCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "fuzz", "Shape-fuzzing campaign: random dynamic reshape/slice/expand graphs, each compiled once per\n"
              "variant and run on K shape bindings against the CPU reference; findings minimized, stored\n"
              "and written as corpus cases. Exit: 0 no new finding, 1 new findings, 2 usage, 4 infrastructure.");
  auto o = std::make_shared<FuzzOpts>();
  cmd->add_option("--time", o->time, "wall-clock bound, e.g. 60s, 10m (ignored with --cases)")->capture_default_str();
  cmd->add_option("--cases", o->cases, "number of cases of this shard (idempotent when rerun)");
  cmd->add_option("--jobs", o->jobs, "worker processes at a time")->capture_default_str();
  cmd->add_option("--seed", o->seed, "campaign seed; case seeds derive from it")->capture_default_str();
  cmd->add_option("--inject", o->inject, "apply inject=KNOB to the dq:production variants (a known-unsound behaviour)");
  cmd->add_option("--variant", o->variants, "variant to check, repeatable (default dq:production@sim)");
  cmd->add_option("--oracle", o->oracle, "'ort': also run onnxruntime; reference vs ORT differences are findings")
      ->check(CLI::IsMember({"ort"}));
  cmd->add_option("--target", o->target, "dq (default) or ort (fuzz onnxruntime itself)")
      ->check(CLI::IsMember({"dq", "ort"}));
  cmd->add_option("--db", o->db, "SQLite store for cases and findings (new/known)");
  cmd->add_option("--corpus-out", o->corpusOut, "folder for minimized finding cases (one per shard)");
  cmd->add_option("--shard", o->shard, "this shard, i/N: case c has global index c*N+i")->capture_default_str();
  cmd->add_flag("--resume", o->resume, "skip the cases this shard already recorded in --db");
  cmd->add_option("--bindings", o->bindings, "shape bindings per case (K)")->capture_default_str();
  cmd->add_option("--case-timeout", o->caseTimeout, "seconds a worker may take (incl. minimization)")
      ->capture_default_str();
  cmd->add_option("--compile-timeout", o->compileTimeout, "seconds per compile (past it: compile-hang)")
      ->capture_default_str();
  cmd->add_option("--run-timeout", o->runTimeout, "seconds per run of one binding (past it: run-hang)")
      ->capture_default_str();
  cmd->add_option("--memory-mb", o->memoryMb, "address-space limit of each worker, MiB (0 = none)")
      ->capture_default_str();
  addReferenceLimitOptions(cmd, o->referenceTimeout, o->referenceMaxElements);
  cmd->add_flag("--no-minimize", o->noMinimize, "keep findings as generated");
  cmd->add_flag("--one-shot", o->oneShot,
                "a worker process per case that compiles and runs in child processes (default: one\n"
                "persistent worker per job, compiling and running in process; docs/fuzz/campaigns.md)");
  cmd->add_option("--compiles-per-context", o->compilesPerContext,
                  "persistent workers: a fresh MLIR context after this many compiles")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--selftest", o->selftest,
                "a campaign per inject knob (at most 60 s each, stops at the first finding): time to first\n"
                "finding and minimized size; exit 77 when the compiler rejects the inject options");
  cmd->add_option("--knobs", o->knobs, "--selftest: only these knobs (repeatable; default every knob)");
  cmd->add_option("--format", o->format, "text (a summary with Markdown tables) or json (the same numbers)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--night", o->night, "label grouping the shards of one nightly campaign (default: today, UTC)");
  addFuzzTriageCommand(cmd);
  cmd->callback([o, cmd] {
    if (cmd->get_subcommands().size() > 0 && cmd->get_subcommands()[0]->parsed())
      return; // `dynqual fuzz triage` ran
    try {
      checkInjectKnob(o->inject);
      for (const auto& k : o->knobs)
        checkInjectKnob(k);
      if (o->selftest) {
        setExitCode(runSelftest(*o));
        return;
      }
      fuzz::CampaignOptions c = campaignOptions(*o);
      fs::path work = makeTempWorkDir("fuzz");
      c.workDir = work;
      if (!c.corpusOut.empty())
        fs::create_directories(c.corpusOut);
      fuzz::CampaignSummary s = fuzz::runCampaign(c);
      std::error_code ec;
      fs::remove_all(work, ec);
      if (o->format == "json")
        std::cout << summaryJson(s, c.jobs).dump(2) << "\n";
      else
        printSummary(s, c.jobs, std::cout);
      if (!s.infraError.empty()) {
        std::cerr << "dynqual fuzz: " << s.infraError << "\n";
        setExitCode(kExitInfra);
      } else {
        setExitCode(s.newFindings > 0 ? 1 : 0);
      }
    } catch (const UsageError& e) {
      std::cerr << "dynqual fuzz: " << e.what() << "\n";
      setExitCode(2);
    } catch (const std::invalid_argument& e) {
      std::cerr << "dynqual fuzz: " << e.what() << "\n";
      setExitCode(2);
    } catch (const std::exception& e) {
      std::cerr << "dynqual fuzz: " << e.what() << "\n";
      setExitCode(kExitInfra);
    }
  });

  auto* one =
      app.add_subcommand("fuzz-case", "Run one fuzz case by seed (the campaign's worker; also the reproducer).");
  struct CaseOpts : FuzzCaseOpts {
    uint64_t seed = 0;
    std::string workDir, printModel;
    bool json = false;
  };
  auto co = std::make_shared<CaseOpts>();
  one->add_option("--seed", co->seed, "case seed")->required();
  addFuzzCaseOptions(one, *co);
  one->add_option("--work-dir", co->workDir, "scratch folder (default: a fresh temp folder, removed)");
  one->add_option("--print-model", co->printModel, "also write the generated model.onnx to FILE");
  one->add_flag("--json", co->json, "print the case report as JSON");
  one->callback([co] {
    try {
      checkInjectKnob(co->inject);
      limitOwnMemory(co->memoryMb);
      fuzz::CaseRequest req = fuzzCaseRequest(*co);
      req.seed = co->seed;
      bool temp = co->workDir.empty();
      req.workDir = temp ? makeTempWorkDir("fuzz-case") : fs::path(co->workDir);
      if (!co->printModel.empty())
        modelgen::writeModel(fuzz::generate(co->seed).model, co->printModel);
      fuzz::CaseReport r = fuzz::runCase(req);
      if (temp) {
        std::error_code ec;
        fs::remove_all(req.workDir, ec);
      }
      if (co->json) {
        std::cout << fuzz::toJson(r).dump() << "\n";
      } else {
        std::cout << fmt::format("seed {} ({}): {} nodes, {}\n", r.seed, fuzz::kGeneratorVersion, r.nodes,
                                 r.valid ? "valid" : "invalid: " + r.invalidReason);
        for (const auto& f : r.findings)
          std::cout << fmt::format(
              "  {} on {}{}: {}\n    minimized {} -> {} nodes, input elements {} -> {}{}{}\n", f.signature,
              f.finding.variant, f.finding.bindingText.empty() ? "" : " binding " + f.finding.bindingText,
              f.finding.detail, f.nodesBefore, f.nodesAfter, f.elementsBefore, f.elementsAfter,
              f.binding.empty() ? "" : " on " + f.binding, f.caseDir.empty() ? "" : ", case " + f.caseDir);
        if (r.valid && r.findings.empty())
          std::cout << "  no finding\n";
      }
      setExitCode(r.findings.empty() ? 0 : 1);
    } catch (const exec::ExecError& e) {
      if (co->json)
        std::cout << nlohmann::json{{"infra", e.what()}}.dump() << "\n";
      std::cerr << "dynqual fuzz-case: " << e.what() << "\n";
      setExitCode(kExitInfra);
    } catch (const UsageError& e) {
      std::cerr << "dynqual fuzz-case: " << e.what() << "\n";
      setExitCode(2);
    } catch (const exec::VariantError& e) {
      std::cerr << "dynqual fuzz-case: " << e.what() << "\n";
      setExitCode(2);
    } catch (const std::exception& e) {
      // A harness error on this case (I/O, the reference itself): the campaign records it as a
      // crashed case with this line.
      std::cerr << "dynqual fuzz-case: seed " << co->seed << ": " << e.what() << "\n";
      setExitCode(3);
    }
  });
}

} // namespace dynqual::cli
