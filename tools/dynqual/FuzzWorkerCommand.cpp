// `dynqual fuzz-worker`: the persistent fuzz worker. Serves case after case over stdin/stdout,
// compiling and running in this process (docs/commands/fuzz.md, docs/fuzz/campaigns.md).
#include "Commands.h"
#include "FuzzCaseOptions.h"

#include "dynqual/fuzz/InProcessEngine.h"
#include "dynqual/fuzz/WorkerLoop.h"

#include <ext/stdio_filebuf.h>
#include <unistd.h>

#include <iostream>
#include <new>

namespace dynqual::cli {

void addFuzzWorkerCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "fuzz-worker", "Persistent fuzz worker: reads {\"seed\": S, \"work_dir\": DIR} lines on stdin and answers\n"
                     "each with the case report as one JSON line (as fuzz-case --json), compiling in a reused\n"
                     "MLIR context and running in process. Started by `dynqual fuzz` and `bench fuzz`.");
  struct WorkerOpts : FuzzCaseOpts {
    int compilesPerContext = 64, maxNodes = 0, maxSteps = 0;
  };
  auto o = std::make_shared<WorkerOpts>();
  addFuzzCaseOptions(cmd, *o);
  cmd->add_option("--compiles-per-context", o->compilesPerContext, "a fresh MLIR context after this many compiles")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-nodes", o->maxNodes, "generator node cap (0 = the generator's default)");
  cmd->add_option("--max-steps", o->maxSteps, "generator step cap (0 = the generator's default)");
  cmd->callback([o] {
    try {
      limitOwnMemory(o->memoryMb);
      fuzz::CaseRequest base = fuzzCaseRequest(*o);
      if (o->maxNodes > 0)
        base.generator.maxNodes = o->maxNodes;
      if (o->maxSteps > 0) {
        base.generator.maxSteps = o->maxSteps;
        base.generator.minSteps = std::min(base.generator.minSteps, o->maxSteps);
      }
      fuzz::InProcessEngineOptions eo;
      eo.compileTimeoutSeconds = o->compileTimeout;
      eo.runTimeoutSeconds = o->runTimeout;
      eo.compilesPerContext = o->compilesPerContext;
      base.oracle.engine = std::make_shared<fuzz::InProcessEngine>(eo);
      // Answers go to a private copy of stdout; fd 1 itself becomes stderr, so that nothing a
      // library prints can end up inside the protocol.
      std::cout.flush();
      int answers = dup(1);
      if (answers < 0 || dup2(2, 1) < 0)
        throw std::runtime_error("cannot set up the answer channel (dup)");
      __gnu_cxx::stdio_filebuf<char> buf(answers, std::ios::out);
      std::ostream out(&buf);
      fuzz::serveCases(std::cin, out, base);
      setExitCode(0);
    } catch (const UsageError& e) {
      std::cerr << "dynqual fuzz-worker: " << e.what() << "\n";
      setExitCode(2);
    } catch (const exec::VariantError& e) {
      std::cerr << "dynqual fuzz-worker: " << e.what() << "\n";
      setExitCode(2);
    } catch (const std::exception& e) {
      std::cerr << "dynqual fuzz-worker: " << e.what() << "\n";
      setExitCode(4);
    }
  });
}

} // namespace dynqual::cli
