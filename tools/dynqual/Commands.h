#pragma once
// Registration of the dynqual subcommands.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

namespace dynqual::store {
class Store;
} // namespace dynqual::store

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
/// `dynqual oracle`: dq, the CPU reference and ORT CPU compared pairwise on every data set.
void addOracleCommand(CLI::App& app);
/// `dynqual db init|info|query|export|import|merge [--db FILE]`
void addDbCommand(CLI::App& app);
/// `dynqual report RUN|latest [--db FILE] [--format md|json|html] [--base RUN] [-o FILE]`
void addReportCommand(CLI::App& app);
/// `dynqual ab [SUITE...] --a VARIANT --b VARIANT ...` (AbDriver.h lists the shared flags)
void addAbCommand(CLI::App& app);
/// `dynqual calibrate [SUITE...] [--variant V] ...`: A/A noise per machine and model, stored
void addCalibrateCommand(CLI::App& app);
/// `dynqual gate --base REV --head REV|WORKTREE [SUITE...]`, or `--reanalyze RUN`
void addGateCommand(CLI::App& app);
/// `dynqual bisect --good REV --bad REV [SUITE...]`: the commit that made a model slower
void addBisectCommand(CLI::App& app);
/// `dynqual bench stats [--calibration RUN] ...`: false-positive rate and power of the gate
void addBenchCommand(CLI::App& app);
/// `dynqual history [--model M] [--metric X] [--machine FP] [--confirm]`: stored results over
/// time with their change points (HistoryCommand.cpp)
void addHistoryCommand(CLI::App& app);
/// `dynqual fuzz ...` (campaign shard or --selftest) and the worker `dynqual fuzz-case --seed S ...`
void addFuzzCommand(CLI::App& app);
/// `dynqual fuzz-worker ...`: the persistent fuzz worker (case requests on stdin, reports on stdout)
void addFuzzWorkerCommand(CLI::App& app);
/// `dynqual corpus add FINDING_DIR` and `dynqual corpus check [DIR]`
void addCorpusCommand(CLI::App& app);
/// `dynqual bench fuzz`: fuzzer throughput and where the time goes (added under `bench`)
void addBenchFuzzCommand(CLI::App* bench);
/// `dynqual bench generate` (BenchGenerateCommand.cpp).
void addBenchGenerateCommand(CLI::App* bench);
/// `dynqual bench sidecar-recipe` (SidecarRecipe.cpp).
void addSidecarRecipeCommand(CLI::App* bench);
/// `dynqual bench changepoints`: precision and recall of the history's change points
/// (BenchChangePointsCommand.cpp).
void addBenchChangePointsCommand(CLI::App* bench);
/// A usage or input error (bad flag combination, unreadable input): exit code 2, where a failed
/// check is 1.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A fresh folder dynqual-KIND-XXXXXX under the system temp folder (mkdtemp) for a command's
/// work files. Throws std::runtime_error naming the temp folder when it cannot be created.
std::filesystem::path makeTempWorkDir(const std::string& kind);

/// Exit code set by the subcommand that ran (0 success, 1 a check failed, 2 usage/input error).
int exitCode();
void setExitCode(int code);

/// Records into the results store after a run began. The first store error (a lock held past the
/// busy timeout, a full disk) closes the store and is kept: recording stops, the run goes on, and
/// finishSuiteCommand reports it after the results.
class RecordGuard {
public:
  explicit RecordGuard(std::unique_ptr<store::Store>& db) : db_(db) {}
  /// Runs `write` unless the store is closed (not opened, or failed earlier). Never throws.
  void operator()(const std::function<void()>& write);
  const std::string& error() const { return error_; }

private:
  std::unique_ptr<store::Store>& db_;
  std::string error_;
};

/// Sets the exit code at the end of `run` and `qualify`: 1 when a model failed or no model was
/// tried, 0 otherwise; 2 when recording into the database failed after the run began (the error
/// goes to stderr after the printed results, which stay complete).
void finishSuiteCommand(const std::string& command, int tried, int failed, const std::string& recordError,
                        int64_t runId);

} // namespace dynqual::cli
