#pragma once
// Serve mode of the runner protocol (version 3, docs/runners.md "Serve mode"): a runner started
// once per round and asked for one timing sample at a time, so that two runners can be sampled in
// alternation on one CPU.
#include "dynqual/process/ServedProcess.h"
#include "dynqual/runners/Runner.h"

#include <cstdint>

namespace dynqual::runners {

/// One runner process in serve mode.
class RunnerSession {
public:
  /// Starts `spec` for `request` (request.serve must be set; buildArgv checks the protocol and
  /// template) bound to `cpu` (-1: not bound), and waits for its ready line, at most
  /// `timeoutSeconds`: the same limit then applies to each later request. Throws RunnerUnavailable
  /// when the program cannot be found or started, RunnerConfigError / std::invalid_argument as
  /// buildArgv, and RunnerFailure (naming the runner) when it crashes, exits, times out, reports an
  /// error or prints something other than the protocol's lines.
  RunnerSession(const RunnerSpec& spec, const RunnerRequest& request, double timeoutSeconds, int cpu = -1);
  ~RunnerSession();
  RunnerSession(const RunnerSession&) = delete;
  RunnerSession& operator=(const RunnerSession&) = delete;

  /// k: the inferences one sample batches (from the ready line), >= 1.
  int64_t iterationsPerSample() const { return k_; }

  /// Takes one sample and returns its per-inference time, ms, on the request's clock (batch time
  /// / k). Throws RunnerFailure as the constructor.
  double sample();

  /// Asks the runner to write its outputs and result.json, and reads them as runRunner does (the
  /// samples taken so far; at least one is taken first when none was). Throws RunnerFailure.
  RunnerResult finish();

  /// Ends the session without outputs. Throws RunnerFailure when the runner does not end cleanly.
  void quit();

private:
  /// The next protocol line parsed as a JSON object holding `key`; throws RunnerFailure.
  std::string expectLine(const char* key, const char* command);
  [[noreturn]] void failEnded(const char* command);
  /// Ends the child (a grace of `graceSeconds` after its stdin closes, then SIGKILL) and says how:
  /// "" for exit status 0, "exited with status N", "killed by signal N (NAME)" or "did not end
  /// within S s (killed)". Idempotent.
  std::string endChild(double graceSeconds);

  RunnerSpec spec_;
  RunnerRequest request_;
  double timeoutSeconds_;
  process::ServedProcess child_;
  std::string end_;
  int64_t k_ = 1;
  int samples_ = 0;
  bool ended_ = false;
};

} // namespace dynqual::runners
