#pragma once
// A helper executable kept running and talked to one line at a time over its stdin and stdout
// (the runner protocol's serve mode, docs/runners.md).
#include <string>
#include <vector>

#include <sys/types.h>

namespace dynqual::run {

/// A child process with a pipe to its stdin and one from its stdout; its stderr is kept (the last
/// 64 KiB) for error messages. The child runs in its own process group, which the destructor kills
/// (SIGKILL) when it is still running.
class PipedChild {
public:
  /// Starts argv[0] (a path; no shell, no PATH lookup) with arguments argv[1..]. With `cpu` >= 0
  /// the child is bound to that one CPU (sched_setaffinity) before it executes. Throws
  /// std::runtime_error when a pipe, fork or exec fails (the message names argv[0] and the cause).
  explicit PipedChild(const std::vector<std::string>& argv, int cpu = -1);
  ~PipedChild();
  PipedChild(const PipedChild&) = delete;
  PipedChild& operator=(const PipedChild&) = delete;

  /// Writes `line` and a newline to the child's stdin. Returns false when the child has closed it
  /// (it ended).
  bool writeLine(const std::string& line);

  /// The next line of the child's stdout without its newline, waiting at most `timeoutSeconds`.
  /// Returns false on end of file (the child closed stdout or ended) and sets `timedOut` when the
  /// time ran out; the line is then left empty.
  bool readLine(std::string& line, double timeoutSeconds, bool& timedOut);

  /// Waits up to `timeoutSeconds` for the child to end, then kills its process group. Returns a
  /// description of the end: "" for exit status 0, else "exited with status N", "killed by signal
  /// N (NAME)" or "did not end within S s (killed)". Idempotent.
  std::string wait(double timeoutSeconds);

  /// The last line the child wrote to stderr so far ("" when none).
  std::string lastStderrLine();

  pid_t pid() const { return pid_; }

private:
  void drainStderr(int waitMs);

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string outBuf_, errBuf_;
  bool reaped_ = false;
  std::string end_;
};

/// The CPU a pinned timing session uses by default: the highest-numbered CPU this process may run
/// on (sched_getaffinity), or -1 when that cannot be read.
int lastAllowedCpu();

} // namespace dynqual::run
