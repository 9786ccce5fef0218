// `dynqual bench fuzz`: throughput of the fuzzer on small graphs and where the time goes
// (docs/commands/bench.md).
#include "Commands.h"

#include "dynqual/exec/Executor.h"
#include "dynqual/fuzz/CaseRunner.h"
#include "dynqual/fuzz/PersistentWorker.h"
#include "dynqual/process/Process.h"

#include <fmt/format.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <iostream>

namespace fs = std::filesystem;

namespace dynqual::cli {

namespace {

struct BenchOpts {
  int cases = 50, bindings = 4, maxNodes = 12;
  uint64_t seed = 1;
  std::string variant = "dq:production@sim";
  bool oneShot = false;
};

/// Generator steps per case in the benchmark (with --max-nodes, keeps graphs small).
constexpr int kBenchMaxSteps = 6;

/// Totals over the benchmark's cases, ms.
struct BenchTotals {
  double wall = 0, cpu = 0, gen = 0, check = 0, ref = 0, compile = 0, run = 0;
  int valid = 0, findings = 0;
  /// Extra rows: what, ms in total.
  std::vector<std::pair<std::string, double>> rows;
  std::vector<std::string> notes;
};

void add(BenchTotals& t, const fuzz::CaseReport& r) {
  t.gen += r.generateMs;
  t.check += r.checkMs;
  t.ref += r.referenceMs;
  t.compile += r.compileMs;
  t.run += r.runMs;
  t.findings += static_cast<int>(r.findings.size());
  t.valid += r.valid ? 1 : 0;
}

double phases(const fuzz::CaseReport& r) {
  return r.generateMs + r.checkMs + r.referenceMs + r.compileMs + r.runMs;
}

/// User + system CPU ms of this process (`children` false) or of its reaped children (true).
double cpuMs(bool children) {
  rusage u{};
  getrusage(children ? RUSAGE_CHILDREN : RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

/// One-shot: runCase in this process, a compile child and K dynqual-exec children per case.
BenchTotals benchOneShot(const BenchOpts& o, const fs::path& work, const fs::path& bin) {
  BenchTotals t;
  // Cost of one bare child process (fork + exec + exit of dynqual-exec), ms, median of 5.
  std::vector<double> spawn;
  for (int k = 0; k < 5; ++k)
    spawn.push_back(process::runChild({(bin / "dynqual-exec").string(), "--protocol-version"}, 30).wallMs);
  std::sort(spawn.begin(), spawn.end());
  double spawnMs = spawn[2];
  int children = 0;
  double cpu0 = cpuMs(false) + cpuMs(true);
  auto t0 = std::chrono::steady_clock::now();
  for (int c = 0; c < o.cases; ++c) {
    fuzz::CaseRequest req;
    req.seed = fuzz::caseSeed(o.seed, static_cast<uint64_t>(c));
    req.bindings = o.bindings;
    req.generator.maxNodes = o.maxNodes;
    req.generator.maxSteps = kBenchMaxSteps;
    req.minimize = false;
    req.oracle.variants = {exec::parseVariant(o.variant)};
    req.oracle.binDir = bin;
    req.workDir = work / std::to_string(c);
    fuzz::CaseReport r = fuzz::runCase(req);
    std::error_code ec;
    fs::remove_all(req.workDir, ec);
    add(t, r);
    if (r.valid)
      children += 1 + o.bindings;
  }
  t.wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  t.cpu = cpuMs(false) + cpuMs(true) - cpu0;
  t.rows = {{"compile (child process)", t.compile},
            {"run K bindings (child processes)", t.run},
            {"  of which process start (est.)", spawnMs * children},
            {"other (files, compare)", t.wall - t.gen - t.check - t.ref - t.compile - t.run}};
  t.notes.push_back(
      fmt::format("process start estimate: {:.2f} ms per child (median of 5 bare dynqual-exec)", spawnMs));
  return t;
}

/// Persistent: one `dynqual fuzz-worker` serves every case over its pipe, as a campaign job does.
BenchTotals benchPersistent(const BenchOpts& o, const fs::path& work, const fs::path& bin) {
  BenchTotals t;
  std::vector<std::string> argv = {(bin / "dynqual").string(),
                                   "fuzz-worker",
                                   "--bindings",
                                   std::to_string(o.bindings),
                                   "--variant",
                                   o.variant,
                                   "--no-minimize",
                                   "--max-nodes",
                                   std::to_string(o.maxNodes),
                                   "--max-steps",
                                   std::to_string(kBenchMaxSteps)};
  fuzz::PersistentWorker worker(argv, uint64_t{4096} << 20);
  std::vector<double> overhead; // per case: wall - the phases the worker timed
  double firstOverhead = 0;
  double cpu0 = cpuMs(false);
  auto t0 = std::chrono::steady_clock::now();
  for (int c = 0; c < o.cases; ++c) {
    fs::path dir = work / std::to_string(c);
    fuzz::WorkerOutcome w = worker.runCase(fuzz::caseSeed(o.seed, static_cast<uint64_t>(c)), dir, 300);
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (w.kind == fuzz::WorkerOutcome::Kind::Infra)
      throw std::runtime_error(w.reply.at("infra").get<std::string>());
    if (w.kind != fuzz::WorkerOutcome::Kind::Report)
      throw std::runtime_error("case " + std::to_string(c) + ": " + w.why + " (run `dynqual fuzz-case --seed " +
                               std::to_string(fuzz::caseSeed(o.seed, static_cast<uint64_t>(c))) + "` to see it)");
    fuzz::CaseReport r = fuzz::caseReportFromJson(w.reply);
    add(t, r);
    if (c == 0)
      firstOverhead = w.wallMs - phases(r);
    else
      overhead.push_back(w.wallMs - phases(r));
  }
  t.wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  process::ProcessResult end = worker.finish();
  // The worker's CPU time (wait4) plus this process's, which feeds it.
  t.cpu = end.cpuMs + cpuMs(false) - cpu0;
  std::sort(overhead.begin(), overhead.end());
  double typical = overhead.empty() ? 0 : overhead[overhead.size() / 2];
  double startUp = std::max(0.0, firstOverhead - typical);
  t.rows = {{"compile (in process, reused MLIR context)", t.compile},
            {"run K bindings (in process)", t.run},
            {"worker start-up, once (est.)", startUp},
            {"other (compare, JSON, pipe)", t.wall - t.gen - t.check - t.ref - t.compile - t.run - startUp}};
  t.notes.push_back(fmt::format("worker start-up estimate: first case's time outside the timed phases less the "
                                "median of the others ({:.2f} ms)",
                                typical));
  return t;
}

} // namespace

void addBenchFuzzCommand(CLI::App* bench) {
  auto* cmd = bench->add_subcommand(
      "fuzz", "Fuzzer throughput on one core: cases/s for graphs of at most --max-nodes nodes (generate +\n"
              "check + reference + compile + run K bindings + compare), and the share of each phase.");
  auto o = std::make_shared<BenchOpts>();
  cmd->add_option("--cases", o->cases, "cases to run")->capture_default_str();
  cmd->add_option("--bindings", o->bindings, "bindings per case (K)")->capture_default_str();
  cmd->add_option("--max-nodes", o->maxNodes, "generator node cap")->capture_default_str();
  cmd->add_option("--seed", o->seed, "campaign seed")->capture_default_str();
  cmd->add_option("--variant", o->variant, "variant")->capture_default_str();
  cmd->add_flag("--one-shot", o->oneShot,
                "compile and run each case in child processes, as `dynqual fuzz --one-shot` (default: one\n"
                "persistent `dynqual fuzz-worker`, as `dynqual fuzz`)");
  cmd->callback([o] {
    try {
      if (o->cases < 1)
        throw UsageError("--cases must be at least 1");
      exec::parseVariant(o->variant);
      fs::path work = makeTempWorkDir("bench-fuzz");
      fs::path bin = exec::selfBinDir();
      BenchTotals t;
      try {
        t = o->oneShot ? benchOneShot(*o, work, bin) : benchPersistent(*o, work, bin);
      } catch (...) {
        std::error_code ec;
        fs::remove_all(work, ec);
        throw;
      }
      std::error_code ec;
      fs::remove_all(work, ec);
      std::cout << fmt::format("bench fuzz: {} cases ({} valid, {} findings), graphs <= {} nodes, K = {}, {}, {}\n",
                               o->cases, t.valid, t.findings, o->maxNodes, o->bindings, o->variant,
                               o->oneShot ? "one-shot (child processes)" : "persistent worker");
      std::cout << fmt::format("throughput: {:.2f} cases/s/core (one case at a time, {:.0f} ms wall); "
                               "{:.2f} cases per CPU second ({:.0f} ms user+system, every process involved)\n",
                               o->cases / (t.wall / 1000.0), t.wall, t.cpu > 0 ? o->cases / (t.cpu / 1000.0) : 0.0,
                               t.cpu);
      auto row = [&](const std::string& what, double ms) {
        std::cout << fmt::format("  {:<42} {:>9.2f} ms/case {:>6.1f}%\n", what, ms / o->cases, 100.0 * ms / t.wall);
      };
      row("generate", t.gen);
      row("check (onnx checker + inference)", t.check);
      row("reference (K bindings)", t.ref);
      for (const auto& [what, ms] : t.rows)
        row(what, ms);
      for (const auto& n : t.notes)
        std::cout << n << "\n";
      setExitCode(0);
    } catch (const UsageError& e) {
      std::cerr << "dynqual bench fuzz: " << e.what() << "\n";
      setExitCode(2);
    } catch (const exec::VariantError& e) {
      std::cerr << "dynqual bench fuzz: " << e.what() << "\n";
      setExitCode(2);
    } catch (const std::exception& e) {
      std::cerr << "dynqual bench fuzz: " << e.what() << "\n";
      setExitCode(4);
    }
  });
}

} // namespace dynqual::cli
