#pragma once
// What runProcess and ServedProcess share: the child's argv and environment, built before fork,
// and the child's side between fork and exec (process group, limits, CPU, signals, descriptors).
#include "dynqual/process/Process.h"

#include <string>
#include <vector>

namespace dynqual::process::detail {

/// True in a build with AddressSanitizer.
bool underAddressSanitizer();

/// argv and envp of the child, built before fork so that the child only calls async-signal-safe
/// functions. The environment is ours with spec.env applied, and under an ASan memory limit
/// hard_rss_limit_mb added to ASAN_OPTIONS (an RLIMIT_AS would starve ASan's shadow memory).
struct PreparedExec {
  explicit PreparedExec(const ProcessSpec& spec);
  const ProcessSpec& spec;
  bool asanLimit;
  bool search; ///< look argv[0] up in PATH
  std::vector<std::string> envStrings;
  std::vector<char*> args, envp;
};

/// Why a child could not become the program, as sent through the exec-status pipe.
struct StartFailure {
  int stage; ///< 0 chdir, 1 exec, 2 CPU binding
  int error; ///< errno
};

/// The words for a StartFailure ("cannot change to DIR: ...", "ARGV0: ...", "cannot bind to CPU
/// N: ...").
std::string describeStartFailure(const ProcessSpec& spec, const StartFailure& failure);

/// The child's side after fork: its own process group when `ownGroup`, the memory limit, the CPU,
/// default signal dispositions and an empty mask, the working folder, descriptors 0-2 from
/// `in`/`out`/`err`, then exec. On failure it writes a StartFailure to `statusFd` when >= 0, else
/// "exec ARGV0: ERROR" (or the CPU message) to its stderr, and exits 127 (126 for the CPU).
[[noreturn]] void execChild(const PreparedExec& prepared, bool ownGroup, int in, int out, int err, int statusFd);

} // namespace dynqual::process::detail
