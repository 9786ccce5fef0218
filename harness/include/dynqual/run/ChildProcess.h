#pragma once
// Runs a helper executable in its own process with a wall-clock limit, capturing its output: the
// short form of exec::runProcess.
#include "dynqual/exec/Process.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dynqual::run {

/// How a child process ended.
using ChildResult = exec::ProcessResult;

/// Runs argv[0] (a path; no PATH lookup) with arguments argv[1..] (no shell), stdin closed,
/// stdout/stderr captured. After `timeoutSeconds` (> 0; 0 is no limit) the child's process group
/// is killed with SIGKILL. With `memoryLimitBytes` > 0 the child's address space is limited to
/// that many bytes (exec::ProcessSpec::memoryLimitBytes says how under AddressSanitizer). Never
/// throws.
ChildResult runChild(const std::vector<std::string>& argv, double timeoutSeconds, uint64_t memoryLimitBytes = 0);

} // namespace dynqual::run
