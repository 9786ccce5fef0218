#pragma once
// The one typed path every command uses to run a case: case -> execute -> measure. Each compile
// and each run happens in a child process with a time limit, so a crash, hang or OOM becomes an
// ExecError naming the stage, never the end of the command. Correctness runs and timed
// repetitions go through the same execute() call.
#include "dynqual/exec/Variant.h"
#include "dynqual/tensor/Tensor.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dynqual::exec {

/// Where a case failed. Infra = the arm itself is unusable (binary missing, protocol mismatch,
/// runner not installed): the command reports an infrastructure error (exit 4), not a failure.
enum class Stage { Compile, Run, Infra };
const char* stageName(Stage s);

/// A failed compile or run. what() is one line: "<arm> <model>: <stage>: <why>"; detail() is
/// the <why> alone (what() when the thrower gave none), for callers that name the case themselves.
/// A child that ran out of memory under its limit says "oom under the N MiB memory limit: ..." in
/// detail() and outOfMemory() is true.
class ExecError : public std::runtime_error {
public:
  ExecError(Stage stage, const std::string& message, std::string detail = {}, bool outOfMemory = false)
      : std::runtime_error(message), stage_(stage), detail_(std::move(detail)), outOfMemory_(outOfMemory) {}
  Stage stage() const { return stage_; }
  std::string detail() const { return detail_.empty() ? what() : detail_; }
  bool outOfMemory() const { return outOfMemory_; }

private:
  Stage stage_;
  std::string detail_;
  bool outOfMemory_ = false;
};

/// One side of a comparison: a variant plus the folder of the binaries that implement it
/// (dq variants of a gate run each revision's own `dynqual` and `dynqual-exec`).
struct Arm {
  std::string label; ///< "base" / "head" (or "A" / "B")
  Variant variant;
  std::filesystem::path binDir; ///< folder holding dynqual and dynqual-exec
  /// The runtime binary of a dq arm when it is not binDir / "dynqual-exec" (`dynqual run --exec`).
  std::filesystem::path execPath;
  /// Extra environment for the arm's processes (NAME=VALUE), recorded with the run.
  std::vector<std::string> env;
};

struct ExecResult;

/// A replay backend: the result of case `caseId` (the data-set folder name, or "binding_N") on
/// `inputFiles` (TensorProto files just written for it), computed elsewhere. Throws
/// std::runtime_error with one line when the case has no result; execute() passes it on as it is.
using ReplayFn =
    std::function<ExecResult(const std::string& caseId, const std::vector<std::filesystem::path>& inputFiles)>;

/// Limits and places shared by every case.
/// Default address-space limit of a compile or dynqual-exec child: 8 GiB.
inline constexpr uint64_t kDefaultChildMemoryBytes = uint64_t{8} << 30;

struct ExecConfig {
  std::filesystem::path workDir; ///< artifacts and outputs go under here (per arm)
  double compileTimeoutSeconds = 600;
  double runTimeoutSeconds = 300;
  /// Memory limit of every compile and dynqual-exec child, bytes (0 = none; process::ProcessSpec says
  /// how it is applied). Runner children are not limited: their JIT and thread pools reserve
  /// address space far beyond what they use.
  uint64_t memoryLimitBytes = kDefaultChildMemoryBytes;
  std::filesystem::path runnerConfig; ///< JSON declaring ext:NAME runners (may be empty)
  /// Set: execute() starts no process and replays each case from results computed elsewhere
  /// (dq-run's outputs from a device on another machine, docs/commands/qualify.md).
  ReplayFn replay;
};

/// A model made ready for one arm: compiled (dq) or just located (ort, ext).
struct PreparedModel {
  Arm arm;
  std::string modelName;
  std::filesystem::path modelFile; ///< model.onnx
  std::filesystem::path artifact;  ///< .dqp for dq arms, else empty
  uint64_t artifactBytes = 0;      ///< .dqp plus its .dqp.bin sidecar, bytes
  double compileMs = 0;            ///< wall time of the compile child, ms
};

/// The clock a timed execution reads (docs/commands/exec.md, docs/runners.md). Wall is the
/// steady clock. The two CPU clocks leave out time the process spent preempted by other work on
/// the machine, each over the scope its kind of arm can read: ThreadCpu is the CPU time of the
/// runtime's thread (dq arms whose dynqual-exec speaks arm protocol 2), ProcessCpu the user +
/// system CPU time of the whole runner process (runner arms speaking runner protocol 2, run with
/// one onnxruntime thread). They are separate values, not one "CPU" clock, because their readings
/// are not comparable with each other: a process holds more than the thread that computes.
enum class TimingClock { Wall, ThreadCpu, ProcessCpu };

/// "wall", "thread-cpu" or "process-cpu".
const char* timingClockName(TimingClock c);

/// The clock named `name` (as timingClockName writes it). Throws std::invalid_argument for any
/// other name.
TimingClock parseTimingClock(const std::string& name);

/// True for ThreadCpu and ProcessCpu.
inline bool isCpuClock(TimingClock c) {
  return c != TimingClock::Wall;
}

/// What a timed execution asks for (the arm protocol's --reps/--warmup/--min-sample-ms/--clock).
struct TimingRequest {
  int reps = 0;             ///< samples after the checked run; 0 = correctness only
  int warmup = 1;           ///< discarded runs before the samples
  double minSampleMs = 1.0; ///< one sample batches k runs lasting at least this long, ms
  double busyWaitUs = 0;    ///< injected busy work per run (dq arms only), microseconds
  TimingClock clock = TimingClock::Wall;
  double busyFraction = 1.0; ///< < 1: only this random share of the timed runs gets the busy work (tail)
  bool busySpread = false;   ///< each sample's busy work per run drawn uniformly from [0, 2 busyWaitUs] (spread)
  uint64_t busySeed = 1;     ///< seed of those draws
};

/// Typed outcome of one execution.
struct ExecResult {
  std::vector<Tensor> outputs;                            ///< graph output order
  std::vector<std::pair<std::string, uint64_t>> counters; ///< device counters of the checked run
  std::vector<double> samplesMs;                          ///< per-run latency of each sample (batch time / k), ms
  /// Per-run modelled device time of each sample (its k runs' Counters::modelledDeviceNs / k / 1e6),
  /// ms; empty when the arm does not report it (runners; dynqual-exec of arm protocol < 3). 0 on a
  /// device that does not model it (hip).
  std::vector<double> modelledSamplesMs;
  int iterationsPerSample = 1; ///< k
  double sessionMs = 0;        ///< load program / create session, ms
  double firstInferMs = 0;     ///< the checked (first) run, ms
  double executeMs = 0;        ///< the checked run's program execution alone (RunResult::executeMs), ms
  double cpuPercent = 0;       ///< 100 * CPU s / wall s over the samples (dq arms; 0 for runners)
  std::string version;         ///< compiler or runner version the arm reported
};

/// One arm's process kept running through a round and asked for one timing sample at a time
/// (runner arms whose runner speaks serve mode, runner protocol 3: docs/runners.md), so that the
/// driver can alternate two arms sample by sample. The process is killed when the session is
/// destroyed without close().
class TimingSession {
public:
  virtual ~TimingSession() = default;
  /// k: runs batched into one sample, >= 1.
  virtual int iterationsPerSample() const = 0;
  /// One sample: per-run time in ms on the session's clock (batch / k). Throws ExecError
  /// (Stage::Run) naming the arm and model when the process crashes, hangs or answers wrongly.
  virtual double sample() = 0;
  /// Ends the process. Throws ExecError (Stage::Run) when it does not end cleanly.
  virtual void close() = 0;
};

/// Runs cases on arms in child processes.
class Executor {
public:
  explicit Executor(ExecConfig config);

  /// Compiles (dq) or locates (ort, ext) `modelDir`/model.onnx for `arm`. Throws ExecError with
  /// Stage::Compile for a compiler crash, timeout or error (its one-line message included), and
  /// Stage::Infra when the arm's binaries are missing or speak another protocol version.
  PreparedModel prepare(const Arm& arm, const std::filesystem::path& modelDir);

  /// Runs `model` on `inputFiles` (TensorProto files in graph input order) in a child process,
  /// writing outputs under `outDir`. Throws ExecError (Stage::Run) for a crash, a timeout, a
  /// runtime error, malformed JSON, or a sample count other than timing.reps; Stage::Infra when
  /// the runner is missing, or when the arm cannot read timing.clock (clockUnavailable).
  ExecResult execute(const PreparedModel& model, const std::vector<std::filesystem::path>& inputFiles,
                     const TimingRequest& timing, const std::filesystem::path& outDir);

  /// execute() of case `caseId`: with config().replay set, the replay backend's result for it
  /// (its exceptions pass through unchanged), else a child process as above.
  ExecResult execute(const PreparedModel& model, const std::string& caseId,
                     const std::vector<std::filesystem::path>& inputFiles, const TimingRequest& timing,
                     const std::filesystem::path& outDir);

  const ExecConfig& config() const { return config_; }

  /// True when `arm` can be sampled through openSession(): a runner arm whose runner speaks
  /// runner protocol >= 3 and whose argv passes {serve}. Throws ExecError (Stage::Infra) as
  /// runnerProtocol().
  bool canServe(const Arm& arm);

  /// Starts `model` in serve mode on `inputFiles` with timing.warmup / minSampleMs / clock (reps
  /// is ignored), bound to CPU `cpu` (-1: not bound), and waits until it is ready. Throws
  /// std::invalid_argument when !canServe(arm) or timing.busyWaitUs > 0; ExecError (Stage::Infra)
  /// when the runner is unavailable or cannot read timing.clock, (Stage::Run) when it fails to
  /// start.
  std::unique_ptr<TimingSession> openSession(const PreparedModel& model,
                                             const std::vector<std::filesystem::path>& inputFiles,
                                             const TimingRequest& timing, const std::filesystem::path& outDir, int cpu);

  /// Compiles `model` again, exactly as prepare() did, into `artifact` (a scratch path; the
  /// prepared artifact is left alone) and returns that compile child's time in ms on `clock`: wall
  /// time, or for ThreadCpu the child's user + system CPU time (the compiler is one process).
  /// Throws ExecError (Stage::Compile) as prepare(); std::invalid_argument for a runner arm.
  double timeCompile(const PreparedModel& model, const std::filesystem::path& artifact, TimingClock clock);

  /// Why `arm` cannot report the modelled device time, or "" when it can: a dq arm on sim whose
  /// dynqual-exec speaks arm protocol >= 3 (docs/metrics/modelled-device-time.md).
  std::string modelledUnavailable(const Arm& arm);

  /// The arm protocol version `arm`'s dynqual-exec speaks (1 to 3); 0 for runner arms. Throws
  /// ExecError (Stage::Infra) when the binaries are missing or speak no version this driver knows.
  int armProtocol(const Arm& arm);

  /// The runner protocol version `arm`'s runner speaks (runners::probeProtocol; 1 for an ext:
  /// runner declared without protocol_version_argv); 0 for dq arms. Asked once per variant.
  /// Throws ExecError (Stage::Infra) when the runner is unavailable or speaks no version this
  /// driver knows.
  int runnerProtocol(const Arm& arm);

  /// Why `arm` cannot read `clock`, or "" when it can: Wall always; ThreadCpu needs a dq arm of
  /// arm protocol >= 2; ProcessCpu a runner arm of runner protocol >= 2 whose argv passes {clock}.
  /// An arm whose binaries or runner are unusable cannot read a CPU clock (the message says why).
  std::string clockUnavailable(const Arm& arm, TimingClock clock);

private:
  ExecConfig config_;
  std::map<std::string, int> protocolByBinDir_;
  struct RunnerAbilities {
    int protocol = 1;
    bool passesClock = false, passesServe = false;
  };
  /// variant -> what its runner speaks, probed once.
  std::map<std::string, RunnerAbilities> protocolByRunner_;
};

/// Compiles `modelFile` with `pipeline` into `artifact` (.dqp and .dqp.bin) by running
/// `<binDir>/dynqual compile` in a child process limited to `timeoutSeconds`. Returns the child's
/// wall time in ms, and its user + system CPU time in ms through `cpuMs` when given. The child's
/// memory is limited to `memoryLimitBytes` (0 = unlimited); running out is a compile error. Throws
/// ExecError (Stage::Compile) naming `label` and `model` for a crash, a timeout or a compile error
/// (the compiler's last stderr line); an empty `label` leaves the "<label> <model>: compile: "
/// prefix out, for callers that add their own.
double compileInChild(const std::filesystem::path& binDir, const std::filesystem::path& modelFile,
                      const std::string& pipeline, const std::filesystem::path& artifact, double timeoutSeconds,
                      const std::string& label, const std::string& model, const std::vector<std::string>& env = {},
                      double* cpuMs = nullptr, uint64_t memoryLimitBytes = kDefaultChildMemoryBytes);

/// The folder of the running executable (/proc/self/exe's parent). Throws std::runtime_error
/// when it cannot be read.
std::filesystem::path selfBinDir();

} // namespace dynqual::exec
