// dynqual: qualification of the dq compiler under test. Subcommands live in *Command.cpp.
#include "Commands.h"

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"dynqual: checks a dynamic-shape ONNX compiler against an independent CPU reference.\n"
               "Exit codes: 0 success, 1 a check failed, 2 usage or input error."};
  app.require_subcommand(1);
  dynqual::cli::addCompileCommand(app);
  dynqual::cli::addRunCommand(app);
  dynqual::cli::addQualifyCommand(app);
  dynqual::cli::addMakeModelCommand(app);
  dynqual::cli::addDbCommand(app);
  dynqual::cli::addReportCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return dynqual::cli::exitCode();
}
