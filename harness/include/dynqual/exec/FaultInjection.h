#pragma once
// Test-only fault injection for the child processes of the executor, so tests can prove that a
// crashed or hung compiler or runtime becomes a failed case that names its stage, without a real
// compiler bug. Read from DYNQUAL_TEST_FAULT="STAGE-KIND[:SUBSTRING]", e.g. "compile-abort",
// "run-hang:tiny_bert"; STAGE is compile|run|reference (reference: the fuzz oracle's CPU
// reference, in its own process), KIND is abort|hang|exit|oom (oom: allocate until an
// allocation fails, at most 4 GiB). With a SUBSTRING the fault fires only when the model or
// program path contains it. Unset: no effect.
#include <string>

namespace dynqual::exec {

enum class FaultStage { Compile, Run, Reference };

/// Fires the fault DYNQUAL_TEST_FAULT names for `stage` when `path` matches: abort() (SIGABRT),
/// an endless sleep (the parent's time limit must end it), or _exit(3). Returns normally when no
/// fault applies. A malformed value is reported on stderr and ignored.
void applyFault(FaultStage stage, const std::string& path);

} // namespace dynqual::exec
