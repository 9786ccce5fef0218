// `dynqual bench fuzz`: throughput of the fuzzer on small graphs and where the time goes
// (docs/commands/bench.md).
#include "Commands.h"

#include "dynqual/exec/Executor.h"
#include "dynqual/fuzz/CaseRunner.h"
#include "dynqual/run/ChildProcess.h"

#include <fmt/format.h>

#include <chrono>
#include <iostream>

namespace fs = std::filesystem;

namespace dynqual::cli {

void addBenchFuzzCommand(CLI::App* bench) {
  auto* cmd = bench->add_subcommand(
      "fuzz", "Fuzzer throughput on one core: cases/s for graphs of at most --max-nodes nodes (generate +\n"
              "check + reference + compile + run K bindings + compare), and the share of each phase.");
  struct Opts {
    int cases = 50, bindings = 4, maxNodes = 12;
    uint64_t seed = 1;
    std::string variant = "dq:production@sim";
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--cases", o->cases, "cases to run")->capture_default_str();
  cmd->add_option("--bindings", o->bindings, "bindings per case (K)")->capture_default_str();
  cmd->add_option("--max-nodes", o->maxNodes, "generator node cap")->capture_default_str();
  cmd->add_option("--seed", o->seed, "campaign seed")->capture_default_str();
  cmd->add_option("--variant", o->variant, "variant")->capture_default_str();
  cmd->callback([o] {
    try {
      if (o->cases < 1)
        throw UsageError("--cases must be at least 1");
      fs::path work = makeTempWorkDir("bench-fuzz");
      fs::path bin = exec::selfBinDir();
      // Cost of one bare child process (fork + exec + exit of dynqual-exec), ms, median of 5.
      std::vector<double> spawn;
      for (int k = 0; k < 5; ++k)
        spawn.push_back(run::runChild({(bin / "dynqual-exec").string(), "--protocol-version"}, 30).wallMs);
      std::sort(spawn.begin(), spawn.end());
      double spawnMs = spawn[2];
      double gen = 0, check = 0, ref = 0, compile = 0, runMs = 0;
      int valid = 0, children = 0, findings = 0;
      auto t0 = std::chrono::steady_clock::now();
      for (int c = 0; c < o->cases; ++c) {
        fuzz::CaseRequest req;
        req.seed = fuzz::caseSeed(o->seed, static_cast<uint64_t>(c));
        req.bindings = o->bindings;
        req.generator.maxNodes = o->maxNodes;
        req.generator.maxSteps = 6;
        req.minimize = false;
        req.oracle.variants = {exec::parseVariant(o->variant)};
        req.oracle.binDir = bin;
        req.workDir = work / std::to_string(c);
        fuzz::CaseReport r = fuzz::runCase(req);
        std::error_code ec;
        fs::remove_all(req.workDir, ec);
        gen += r.generateMs;
        check += r.checkMs;
        ref += r.referenceMs;
        compile += r.compileMs;
        runMs += r.runMs;
        findings += static_cast<int>(r.findings.size());
        if (r.valid) {
          ++valid;
          children += 1 + o->bindings;
        }
      }
      double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::error_code ec;
      fs::remove_all(work, ec);
      double overhead = spawnMs * children;
      double other = wall - gen - check - ref - compile - runMs;
      std::cout << fmt::format("bench fuzz: {} cases ({} valid, {} findings), graphs <= {} nodes, K = {}, {}\n", o->cases,
                               valid, findings, o->maxNodes, o->bindings, o->variant);
      std::cout << fmt::format("throughput: {:.2f} cases/s/core (one case at a time, {:.0f} ms wall)\n",
                               o->cases / (wall / 1000.0), wall);
      auto row = [&](const char* what, double ms) {
        std::cout << fmt::format("  {:<34} {:>9.1f} ms/case {:>6.1f}%\n", what, ms / o->cases, 100.0 * ms / wall);
      };
      row("generate", gen);
      row("check (onnx checker + inference)", check);
      row("reference (K bindings)", ref);
      row("compile (child process)", compile);
      row("run K bindings (child processes)", runMs);
      row("  of which process start (est.)", overhead);
      row("other (files, compare)", other);
      std::cout << fmt::format("process start estimate: {:.2f} ms per child (median of 5 bare dynqual-exec)\n",
                               spawnMs);
      setExitCode(0);
    } catch (const UsageError& e) {
      std::cerr << "dynqual bench fuzz: " << e.what() << "\n";
      setExitCode(2);
    } catch (const std::exception& e) {
      std::cerr << "dynqual bench fuzz: " << e.what() << "\n";
      setExitCode(4);
    }
  });
}

} // namespace dynqual::cli
