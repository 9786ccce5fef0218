#pragma once
// Registration of the dynqual subcommands.
#include <CLI/CLI.hpp>

#include <stdexcept>

namespace dynqual::cli {

/// `dynqual compile MODEL --emit onnx|dq|memref|dqp -o FILE ...`
void addCompileCommand(CLI::App& app);
/// `dynqual run DIR... [--device sim] [--pipeline production|SPEC] [--bindings N] [--format text|json]`
void addRunCommand(CLI::App& app);
/// `dynqual qualify [SUITE...] [--device sim] [--pipeline ...] [--reps N] [--timeout S] [--db FILE]
/// [--format text|json]`, plus the hidden per-model `dynqual qualify-one MODEL --work-dir DIR`.
void addQualifyCommand(CLI::App& app);
/// `dynqual make-model decoder --layers L --hidden H --heads N --kv-heads K --vocab V --seed S -o DIR`
void addMakeModelCommand(CLI::App& app);
/// `dynqual db init|info|query|export|import|merge [--db FILE]`
void addDbCommand(CLI::App& app);
/// `dynqual report RUN|latest [--db FILE] [--format md|json|html] [--base RUN] [-o FILE]`
void addReportCommand(CLI::App& app);
/// A usage or input error (bad flag combination, unreadable input): exit code 2, where a failed
/// check is 1.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Exit code set by the subcommand that ran (0 success, 1 a check failed, 2 usage/input error).
int exitCode();
void setExitCode(int code);

} // namespace dynqual::cli
