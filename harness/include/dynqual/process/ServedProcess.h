#pragma once
// A long-lived child that answers one line on stdout for each line written to its stdin: the
// fuzzer's persistent worker and the runner protocol's serve mode (docs/runners.md). Started from
// the same ProcessSpec as runProcess, with the same memory limit, CPU pinning and process-group
// kill, and the same contract: nothing throws, every failure is in a result.
#include "dynqual/process/Process.h"

#include <sys/types.h>

#include <string>
#include <vector>

namespace dynqual::process {

/// What one request got.
struct ServedReply {
  bool answered = false; ///< a full line came back (in `line`, without its '\n')
  bool timedOut = false; ///< no line within the limit
  std::string line;
  double wallMs = 0; ///< from writing the request to the answer (or to giving up)
};

/// How a read of one line ended.
enum class LineRead {
  Line,     ///< a full line
  Ended,    ///< the child closed its stdout (it ended) before a full line
  TimedOut, ///< no full line within the limit
};

/// Owns one child started with pipes on stdin, stdout and stderr, in a process group of its own.
/// Not thread-safe: one owner at a time. Never throws.
class ServedProcess {
public:
  ServedProcess() = default;
  ~ServedProcess(); ///< finish(1): a running child gets a second after its stdin closes, then SIGKILL
  ServedProcess(const ServedProcess&) = delete;
  ServedProcess& operator=(const ServedProcess&) = delete;

  /// Starts spec.argv with spec.searchPath, cwd, env, memoryLimitBytes and cpu as runProcess does.
  /// spec.timeoutSeconds and spec.appendTo do not apply (limits are per request; stderr is kept).
  /// False, with `error` set, when a child is already running, argv is empty, or a pipe or fork
  /// fails. A child that cannot exec (or bind to its CPU) writes why to its stderr and exits 127
  /// (126): it shows as an early end, with that line in lastStderrLine().
  bool start(const ProcessSpec& spec, std::string& error);
  /// start() of argv (a path, no PATH lookup) with a memory limit in bytes (0: none).
  bool start(const std::vector<std::string>& argv, uint64_t memoryLimitBytes, std::string& error);

  /// True between a successful start() and finish().
  bool running() const { return pid_ > 0; }

  /// Writes `line` and a newline to the child's stdin, with SIGPIPE blocked in this thread (a dead
  /// child is a false return, never the end of the caller). False when not running or the child
  /// closed its stdin.
  bool writeLine(const std::string& line);

  /// The next line of the child's stdout (without its newline) into `line`, waiting at most
  /// `timeoutSeconds`; stderr is read meanwhile, so a child writing much of it never blocks.
  LineRead readLine(std::string& line, double timeoutSeconds);

  /// Clears stderrSinceRequest(), writes `line`, then readLine within `timeoutSeconds`. Not
  /// answered when the child ended or the limit passed; the caller then calls finish().
  ServedReply request(const std::string& line, double timeoutSeconds);

  /// Ends the child: closes its stdin; unless `timedOut`, waits up to `graceSeconds` for it to exit
  /// on its own; then SIGKILL to its process group if it still runs, and reaps it. Returns how it
  /// ended (exit code or signal; `timedOut` as given, for describeAbnormalEnd; `error` "killed
  /// after closing its output" when it was killed after the grace), with the stderr since the last
  /// request in `err`. `started` is false when nothing was running.
  ProcessResult finish(double graceSeconds, bool timedOut = false);

  /// True when the last finish() had to kill a child that outlived its grace.
  bool killedAfterGrace() const { return killedAfterGrace_; }

  /// The child's stderr since the last request began (at most its last 64 KiB).
  const std::string& stderrSinceRequest() const { return errSinceRequest_; }

  /// The last non-empty line the child wrote to stderr so far ("" when none).
  std::string lastStderrLine();

  pid_t pid() const { return pid_; }

private:
  void drain(int timeoutMs);
  void appendErr(const char* data, size_t n);
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, errFd_ = -1;
  std::string outBuf_, errSinceRequest_, errAll_;
  bool killedAfterGrace_ = false;
};

} // namespace dynqual::process
