#pragma once
// Running a runner (docs/runners.md, protocols 1 and 2) in a child process and reading its result.

#include "dynqual/runners/RunnerConfig.h"
#include "dynqual/tensor/Tensor.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace dynqual::runners {

/// What a runner's samples read (protocol 2's --clock). Wall: elapsed time. ProcessCpu: user +
/// system CPU time of the whole runner process (every thread), which leaves out time the process
/// waited for a core but counts every thread's work, so it is only a per-inference cost when the
/// runner computes on one thread (docs/runners.md).
enum class RunnerClock { Wall, ProcessCpu };

/// "wall" or "process-cpu" (the --clock value and the result's "clock").
const char* runnerClockName(RunnerClock clock);

/// One invocation: a model, its inputs and the timing plan.
struct RunnerRequest {
  std::filesystem::path model;               ///< MODEL.onnx (external data beside it)
  std::vector<std::filesystem::path> inputs; ///< TensorProto files, graph input order
  std::filesystem::path outputDir;           ///< where result.json and output_K.pb go
  int reps = 1;                              ///< timed samples, >= 1
  int warmup = 1;                            ///< discarded inferences before sampling, >= 0
  double minSampleMs = 0;                    ///< each sample's batch lasts at least this, ms, >= 0
  int protocol = 1;                          ///< the version to speak (probeProtocol), {protocol}
  RunnerClock clock = RunnerClock::Wall;     ///< {clock}; other than Wall needs protocol >= 2
  bool serve = false;                        ///< {serve} -> --serve; needs protocol >= 3 (RunnerSession)
};

/// One output the runner wrote: output_K.pb, K in graph output order.
struct RunnerOutput {
  std::string name;           ///< the TensorProto's name (the graph output name)
  std::filesystem::path file; ///< outputDir/output_K.pb
  Tensor tensor;              ///< its value (the last inference)
};

/// A successful run, from result.json and the output files.
struct RunnerResult {
  std::string runner;                       ///< result.json "runner", e.g. "ort-node"
  std::string version;                      ///< e.g. "onnxruntime-node 1.30.0"
  std::vector<double> samplesMs;            ///< per-inference time of each sample, ms (batch / k)
  int64_t iterationsPerSample = 1;          ///< k, inferences per timed batch, >= 1
  double sessionMs = 0;                     ///< session creation (load + optimize), ms
  double firstInferMs = 0;                  ///< the first inference alone, ms
  std::map<std::string, uint64_t> counters; ///< runner-defined counters (may be empty)
  std::vector<RunnerOutput> outputs;        ///< output_0.pb .. output_{K-1}.pb
  int protocol = 1;                         ///< result.json "protocol"
  RunnerClock clock = RunnerClock::Wall;    ///< clock of samplesMs (protocol 1: always wall)
  std::string threads;                      ///< protocol 2 "threads" as compact JSON; "" when absent
  double childWallMs = 0;                   ///< wall time of the whole child process, ms (runRunner)
};

/// Why a run produced no result.
enum class FailureKind {
  Crashed,         ///< killed by a signal
  TimedOut,        ///< killed after the time limit
  Exited,          ///< non-zero exit without a usable result.json
  ReportedError,   ///< result.json says ok=false; the message carries the runner's error
  MalformedResult, ///< result.json missing, not JSON, wrong protocol, bad or missing fields
  BadOutputs,      ///< output files missing, out of sequence, unreadable or not as expected
};

/// Short name of a kind: "crashed", "timed out", "exited", "reported an error",
/// "malformed result", "bad outputs".
const char* failureKindName(FailureKind kind);

/// A run that produced no result. what() is one line "runner NAME: STAGE: DETAIL" (without
/// "runner NAME: " when the runner is not known, as from parseRunnerResult alone).
class RunnerFailure : public std::runtime_error {
public:
  RunnerFailure(FailureKind kind, std::string runner, std::string detail);
  FailureKind kind() const { return kind_; }
  const std::string& runner() const { return runner_; }
  /// The message without the runner and stage prefix.
  const std::string& detail() const { return detail_; }

private:
  FailureKind kind_;
  std::string runner_;
  std::string detail_;
};

/// Expands spec.argv for one request. Placeholders: {protocol} -> request.protocol, {model},
/// {output_dir}, {reps}, {warmup}, {min_sample_ms} (shortest decimal form, e.g. "10" or "0.5"),
/// {clock} -> runnerClockName(request.clock), the whole element {inputs} -> "--input" F for
/// each input file (nothing when there are none), and the whole element {serve} -> "--serve"
/// when request.serve (nothing otherwise). "{{" and "}}" give literal braces. argv[0] is
/// left as written (runRunner looks it up on PATH). Throws RunnerConfigError on an invalid
/// template (validateArgvTemplate), a template passing {clock} for a protocol 1 request, or a
/// clock other than wall asked of a template without {clock}; std::invalid_argument when reps <
/// 1, warmup < 0, minSampleMs is negative or not finite, protocol is outside
/// kOldestProtocolVersion..kProtocolVersion, or protocol 1 is asked for a clock other than wall;
/// RunnerConfigError for serve asked of a runner below protocol 3 or of a template without {serve}.
std::vector<std::string> buildArgv(const RunnerSpec& spec, const RunnerRequest& request);

/// What parseRunnerResult checks beyond the protocol itself.
struct ResultExpectations {
  int reps = -1;                         ///< samples_ms must have this many entries (-1: any >= 1)
  std::vector<std::string> outputNames;  ///< outputs must be exactly these, in order (empty: any >= 1)
  int protocol = 1;                      ///< "protocol" must be this (the version the runner was asked for)
  RunnerClock clock = RunnerClock::Wall; ///< protocol 2: "clock" must name this
};

/// Reads outputDir/result.json and output_K.pb after the child exited with `childExitCode`.
/// A success needs exit 0, {"protocol":expect.protocol,"ok":true}, a string "runner" and
/// "version", under protocol 2 a "clock" equal to expect.clock and "threads" an object when present, samples_ms
/// of finite numbers >= 0 (expect.reps of them when given), an integer iterations_per_sample >=
/// 1, finite session_ms and first_infer_ms >= 0, counters an object of unsigned integers (may be
/// absent), and output_0.pb .. output_{K-1}.pb with K >= 1, no gaps, readable by readTensorFile
/// (names and count as expect.outputNames when given). Throws RunnerFailure (runner unnamed):
/// ReportedError for ok=false (with the runner's error), Exited for a non-zero exit without a
/// result.json saying ok=false, MalformedResult and BadOutputs as described on FailureKind.
RunnerResult parseRunnerResult(const std::filesystem::path& outputDir, int childExitCode,
                               const ResultExpectations& expect = {});

/// The argv of one invocation, with argv[0] resolved to a path (findProgram), after creating
/// request.outputDir and removing any result.json or output_K.pb left in it. Throws as buildArgv,
/// and RunnerUnavailable when the program cannot be found or the folder cannot be created.
std::vector<std::string> prepareInvocation(const RunnerSpec& spec, const RunnerRequest& request);

/// Runs `spec` for `request` in a child process (no shell) limited to `timeoutSeconds` of wall
/// time, and parses its result with expect.reps, expect.protocol and expect.clock taken from
/// `request`. The output folder is created when
/// missing; a result.json or output_K.pb already in it is removed first. Throws RunnerUnavailable
/// when argv[0] cannot be found or started, RunnerFailure (naming the runner and the stage, with
/// the last line of the child's stderr where it helps) on a crash, a timeout, a failed run or a
/// malformed result.
RunnerResult runRunner(const RunnerSpec& spec, const RunnerRequest& request, double timeoutSeconds,
                       const ResultExpectations& expect = {});

} // namespace dynqual::runners
