#pragma once
// Runs a helper executable in its own process with a wall-clock limit, capturing its output.
#include <cstdint>
#include <string>
#include <vector>

namespace dynqual::run {

/// How a child process ended.
struct ChildResult {
  bool started = false;   ///< false when fork/exec failed (see error)
  bool timedOut = false;  ///< killed (SIGKILL) after the limit
  int exitCode = -1;      ///< exit status when it exited normally, else -1
  int signal = 0;         ///< terminating signal (SIGSEGV, SIGABRT, SIGKILL...), else 0
  double wallMs = 0;      ///< wall-clock milliseconds from start to reaping
  /// User + system CPU milliseconds of the child, all its threads and the descendants it waited
  /// for (wait4)
  double cpuMs = 0;
  std::string out;        ///< everything written to stdout
  std::string err;        ///< everything written to stderr
  std::string error;      ///< why it could not be started
  /// One line describing an abnormal end ("killed by signal 11 (SIGSEGV)", "timed out after
  /// 60 s"), or "" for a normal exit.
  std::string describeAbnormalEnd(double timeoutSeconds) const;
};

/// Runs argv[0] with arguments argv[1..] (no shell), stdin closed, stdout/stderr captured.
/// After `timeoutSeconds` the child's process group is killed with SIGKILL. With
/// `memoryLimitBytes` > 0 the child's address space is limited to that many bytes (RLIMIT_AS), so
/// an allocation beyond it fails inside the child (std::bad_alloc) instead of exhausting the
/// machine; in a build with AddressSanitizer, whose shadow memory needs a huge address space, the
/// limit is passed as ASAN_OPTIONS hard_rss_limit_mb instead. Never throws.
ChildResult runChild(const std::vector<std::string>& argv, double timeoutSeconds, uint64_t memoryLimitBytes = 0);

} // namespace dynqual::run
