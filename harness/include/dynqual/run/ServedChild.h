#pragma once
// A long-lived helper process that answers one line on stdout for each line written to its
// stdin (the fuzzer's persistent worker), with a time limit per request and the same memory
// limit as runChild.
#include "dynqual/run/ChildProcess.h"

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dynqual::run {

/// What one request got.
struct ServedReply {
  bool answered = false;  ///< a full line came back (in `line`, without its '\n')
  bool timedOut = false;  ///< no line within the limit
  std::string line;
  double wallMs = 0;      ///< from writing the request to the answer (or to giving up)
};

/// Owns one child process started with pipes on stdin and stdout; stderr is captured per
/// request. Not thread-safe: one owner at a time. Never throws.
class ServedChild {
public:
  ServedChild() = default;
  ~ServedChild();  ///< kills and reaps a running child
  ServedChild(const ServedChild&) = delete;
  ServedChild& operator=(const ServedChild&) = delete;

  /// Starts argv[0] with arguments argv[1..] (no shell) in a process group of its own. With
  /// `memoryLimitBytes` > 0 the child's address space is limited (RLIMIT_AS; under
  /// AddressSanitizer hard_rss_limit_mb instead, as runChild does). False, with `error` set,
  /// when a child is already running or fork fails; a failed exec shows as an early exit.
  bool start(const std::vector<std::string>& argv, uint64_t memoryLimitBytes, std::string& error);

  /// True between a successful start() and finish().
  bool running() const { return pid_ > 0; }

  /// Writes `line` and a newline to the child's stdin, then waits up to `timeoutSeconds` for one
  /// line on its stdout. Not answered when the child closed stdout (it ended) or the limit passed;
  /// the caller then calls finish(). The child's stderr written since the last request is in
  /// stderrSinceRequest().
  ServedReply request(const std::string& line, double timeoutSeconds);

  /// Ends the child: closes its stdin; unless `timedOut`, waits up to a second for it to exit on
  /// its own; then SIGKILL to its process group if it still runs, and reaps it.
  /// Returns how it ended (exit code or signal; `timedOut` as given, for describeAbnormalEnd),
  /// with the stderr of the last request in `err`. `started` is false when nothing was running.
  ChildResult finish(bool timedOut);

  /// The child's stderr since the last request began (at most its last 64 KiB).
  const std::string& stderrSinceRequest() const { return err_; }

  pid_t pid() const { return pid_; }

private:
  void drain(int timeoutMs);
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, errFd_ = -1;
  std::string outBuf_, err_;
};

} // namespace dynqual::run
