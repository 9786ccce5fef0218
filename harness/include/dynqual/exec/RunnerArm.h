#pragma once
// The executor's door to runner arms (ort:cpu, ext:NAME): the runner protocol of
// harness/runners (docs/runners.md) mapped onto the executor's typed results and errors.
#include "dynqual/exec/Executor.h"

namespace dynqual::exec {

/// Throws ExecError with Stage::Infra when the arm's runner cannot be used here (node or
/// onnxruntime-node missing, ext:NAME not declared in `runnerConfig`, a bad config file).
void checkRunnerAvailable(const Arm& arm, const std::filesystem::path& runnerConfig);

/// The protocol the arm's runner speaks (runners::probeProtocol), and whether its argv passes
/// {clock}. Throws ExecError with Stage::Infra as checkRunnerAvailable, and when the version
/// command fails or prints a version this driver does not speak.
struct RunnerProtocol {
  int version = 1;
  bool passesClock = false;
  bool passesServe = false; ///< argv passes {serve} (serve mode needs version >= 3 as well)
};
RunnerProtocol probeRunnerArm(const Arm& arm, const std::filesystem::path& runnerConfig);

/// Runs a prepared runner arm speaking runner protocol `protocol`: correctness outputs always,
/// timing samples when timing.reps > 0 (a runner always takes at least one sample; it is dropped
/// when none was asked for). timing.clock must be Wall or ProcessCpu (the latter needs protocol >=
/// 2; Executor::execute checks); a result whose "clock" differs is a Stage::Run error.
/// Throws ExecError: Stage::Infra for an unavailable runner, Stage::Run for a crash, timeout,
/// reported error, malformed result or bad outputs (the message names the runner and the stage).
/// timing.busyWaitUs is not supported by runners: a non-zero value throws std::invalid_argument.
ExecResult executeRunner(const PreparedModel& model, const std::vector<std::filesystem::path>& inputFiles,
                         const TimingRequest& timing, const std::filesystem::path& outDir, const ExecConfig& config,
                         int protocol);

/// Starts a prepared runner arm in serve mode (runner protocol `protocol` >= 3) bound to `cpu`
/// (-1: not bound) and waits for it to be ready; the TimingSession's errors name the arm and
/// model. Throws std::invalid_argument for timing.busyWaitUs > 0 or the thread-cpu clock;
/// ExecError with Stage::Infra for an unavailable runner, Stage::Run when it fails to start.
std::unique_ptr<TimingSession> openRunnerSession(const PreparedModel& model,
                                                 const std::vector<std::filesystem::path>& inputFiles,
                                                 const TimingRequest& timing, const std::filesystem::path& outDir,
                                                 const ExecConfig& config, int protocol, int cpu);

} // namespace dynqual::exec
