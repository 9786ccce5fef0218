#pragma once
// The campaign's side of one persistent fuzz worker (`dynqual fuzz-worker`): started on first
// use, sent one case at a time, killed and started afresh after a crash, hang or bad answer.
#include "dynqual/process/ServedProcess.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace dynqual::fuzz {

/// What one case got from the worker.
struct WorkerOutcome {
  enum class Kind {
    Report, ///< `reply` holds the case report (toJson(CaseReport))
    Infra,  ///< `reply` holds {"infra": MESSAGE}
    Failed, ///< no usable answer: `failure` says how the worker ended (it has been killed)
  };
  Kind kind = Kind::Failed;
  nlohmann::json reply;
  process::ProcessResult failure; ///< Failed: exit status or signal, timedOut, stderr of the case
  std::string why;                ///< Failed: one line ("worker killed by signal 6 (Aborted)", ...)
  double wallMs = 0;              ///< request to answer (or to giving up), ms
};

/// One persistent worker process. Not thread-safe: one per campaign thread.
class PersistentWorker {
public:
  /// `argv`: the worker command line (argv[0] the dynqual binary). `memoryLimitBytes` as
  /// process::ServedProcess::start.
  PersistentWorker(std::vector<std::string> argv, uint64_t memoryLimitBytes);

  /// Runs case `seed` with scratch folder `workDir`, starting the worker first when none is
  /// running. Waits at most `timeoutSeconds` (the per-case limit); past it, or when the worker
  /// dies, answers something that is not a report, or answers {"case_error": ...}, the worker is
  /// killed and the outcome is Failed. Never throws.
  WorkerOutcome runCase(uint64_t seed, const std::filesystem::path& workDir, double timeoutSeconds);

  /// Ends the running worker by closing its stdin (it finishes its loop and exits; killed when it
  /// does not within a second). Returns how it ended, with its CPU time (cpuMs); `started` is
  /// false when none was running.
  process::ProcessResult finish();

  /// Worker processes started so far.
  int starts() const { return starts_; }

private:
  std::vector<std::string> argv_;
  uint64_t memoryLimitBytes_;
  process::ServedProcess child_;
  int starts_ = 0;
};

} // namespace dynqual::fuzz
