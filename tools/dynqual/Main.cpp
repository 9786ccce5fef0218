// dynqual: qualification of the dq compiler under test. Subcommands live in *Command.cpp.
#include "Commands.h"
#include "NightlyCommands.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <new>

int main(int argc, char** argv) {
  CLI::App app{"dynqual: checks a dynamic-shape ONNX compiler against an independent CPU reference.\n"
               "Exit codes: 0 success, 1 a check failed, 2 usage or input error; ab, gate and calibrate also\n"
               "use 3 (inconclusive within budget) and 4 (infrastructure error); fuzz exits 1 on new findings."};
  app.require_subcommand(1);
  // An unknown word is reported as such, not as a missing subcommand.
  app.allow_extras(false);
  dynqual::cli::addCompileCommand(app);
  dynqual::cli::addRunCommand(app);
  dynqual::cli::addQualifyCommand(app);
  dynqual::cli::addMakeModelCommand(app);
  dynqual::cli::addOracleCommand(app);
  dynqual::cli::addDbCommand(app);
  dynqual::cli::addReportCommand(app);
  dynqual::cli::addAbCommand(app);
  dynqual::cli::addGateCommand(app);
  dynqual::cli::addBisectCommand(app);
  dynqual::cli::addCalibrateCommand(app);
  dynqual::cli::addBenchCommand(app);
  dynqual::cli::addHistoryCommand(app);
  dynqual::cli::addFuzzCommand(app);
  dynqual::cli::addFuzzWorkerCommand(app);
  dynqual::cli::addCorpusCommand(app);
  dynqual::cli::addCampaignCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    auto known = app.get_subcommands([&](const CLI::App* sub) { return argc > 1 && sub->get_name() == argv[1]; });
    if (argc > 1 && argv[1][0] != '-' && known.empty()) {
      std::cerr << "dynqual: unknown command '" << argv[1]
                << "' (commands: compile, run, qualify, make-model, db, report, ab, gate, calibrate, bench, history, "
                   "bisect, fuzz, corpus, campaign; see --help)\n";
      return 2;
    }
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "dynqual: out of memory (the sizes asked for are too large for this machine)\n";
    return 2;
  }
  return dynqual::cli::exitCode();
}
