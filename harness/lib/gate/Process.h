#pragma once
// Child processes for the gate builds: no shell, optional working folder, environment changes,
// and output either captured or appended to a log file. (dynqual/run/ChildProcess.h captures
// only, with neither a working folder nor an environment.)
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dynqual::gate::detail {

struct ProcessSpec {
  std::vector<std::string> argv;  ///< argv[0] is looked up in PATH when it has no '/'
  std::filesystem::path cwd;      ///< empty: the caller's
  /// Variables to set (a value) or remove (nullopt) on top of the caller's environment.
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
  std::filesystem::path appendTo;  ///< non-empty: stdout and stderr appended here, else captured
  double timeoutSeconds = 0;       ///< 0: no limit; else SIGKILL to the child's process group
};

struct ProcessResult {
  bool started = false;
  std::string error;  ///< why it could not start
  int exitCode = -1;  ///< exit status of a normal exit, else -1
  int signal = 0;
  bool timedOut = false;
  double seconds = 0;
  std::string out, err;  ///< captured output (empty with appendTo)

  bool ok() const { return started && !timedOut && signal == 0 && exitCode == 0; }
  /// "exited with status 2", "killed by signal 9 (Killed)", "timed out after 60 s",
  /// "could not start: ...".
  std::string describe(double timeoutSeconds) const;
};

/// Runs spec.argv; never throws.
ProcessResult runProcess(const ProcessSpec& spec);

} // namespace dynqual::gate::detail
