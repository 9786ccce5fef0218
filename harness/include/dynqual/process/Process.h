#pragma once
// The ground floor of every child process this project starts (harness/lib/process, no other
// dependency). runProcess: a child that runs to its end: no shell, stdin from /dev/null, stdout
// and stderr captured or appended to a log, an optional wall-clock limit that kills the child's
// process group, an optional address-space limit, CPU pinning, working folder and environment
// changes; runChild is its short form. ServedProcess (ServedProcess.h) is the same spec for a
// child that answers a line per request. Neither throws: failures are in the result.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dynqual::process {

/// What to run and under which limits.
struct ProcessSpec {
  std::vector<std::string> argv; ///< argv[0] is a path, or with searchPath a name looked up in PATH
  bool searchPath = false;       ///< look argv[0] up in PATH when it holds no '/'
  std::filesystem::path cwd;     ///< empty: the caller's
  /// Variables to set (a value) or remove (nullopt) on top of the caller's environment.
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
  std::filesystem::path appendTo; ///< non-empty: stdout and stderr appended here, else captured
  /// Wall-clock limit in seconds; 0: none. A limited child runs in its own process group, which is
  /// killed with SIGKILL at the limit; an unlimited one stays in ours (and gets the terminal's
  /// Ctrl-C with us).
  double timeoutSeconds = 0;
  /// Address-space limit in bytes (RLIMIT_AS), 0: none; an allocation beyond it fails inside the
  /// child. In a build with AddressSanitizer, whose shadow memory needs a huge address space, it is
  /// passed as ASAN_OPTIONS hard_rss_limit_mb instead.
  uint64_t memoryLimitBytes = 0;
  /// CPU to bind the child to (sched_setaffinity before exec), -1: not bound. A CPU this process
  /// may not use is a start failure ("cannot bind to CPU N: ...").
  int cpu = -1;
};

/// How a child process ended.
struct ProcessResult {
  bool started = false;  ///< false when a pipe, the log file, fork, chdir or exec failed (see error)
  std::string error;     ///< why it could not start ("/no/such: No such file or directory")
  bool timedOut = false; ///< killed (SIGKILL) at the limit; then signal = SIGKILL, exitCode = -1
  int exitCode = -1;     ///< exit status of a normal exit, else -1
  int signal = 0;        ///< terminating signal, else 0
  double wallMs = 0;     ///< wall-clock milliseconds from start to reaping
  /// User + system CPU milliseconds of the child, all its threads and the descendants it waited
  /// for (wait4).
  double cpuMs = 0;
  std::string out, err; ///< captured stdout and stderr (empty with appendTo)

  /// One line for an abnormal end: "could not start: ...", "timed out after 60 s", "killed by
  /// signal 11 (Segmentation fault)"; "" for a normal exit, whatever its status.
  std::string describeAbnormalEnd(double timeoutSeconds) const;
  /// describeAbnormalEnd, or "exited with status N" for a normal exit.
  std::string describe(double timeoutSeconds) const;
  /// Started, ran to its end within the limit and exited with status 0.
  bool ok() const { return started && !timedOut && signal == 0 && exitCode == 0; }
};

/// Runs spec.argv to its end (or its limit). Never throws.
ProcessResult runProcess(const ProcessSpec& spec);

/// Short form of runProcess: argv[0] a path (no PATH lookup), arguments argv[1..], output
/// captured, a wall limit of `timeoutSeconds` (0: none) and an address-space limit of
/// `memoryLimitBytes` (0: none). Never throws.
ProcessResult runChild(const std::vector<std::string>& argv, double timeoutSeconds, uint64_t memoryLimitBytes = 0);

/// The CPU a pinned timing session uses by default: the highest-numbered CPU this process may run
/// on (sched_getaffinity), or -1 when that cannot be read.
int lastAllowedCpu();

} // namespace dynqual::process
