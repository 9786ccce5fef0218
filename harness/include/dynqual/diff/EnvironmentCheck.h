#pragma once
// The machine state an A/B run is measured under, and what changed during it.
#include "dynqual/diff/AbTypes.h"

namespace dynqual::diff {

/// Reads the machine (CPU model, cores, memory), /proc/loadavg, this process's CPU affinity,
/// cpu0's cpufreq governor and the environment variables that change kernels (OMP_*, MKL_*,
/// OPENBLAS_*, CUDA_*, HIP_*, ROCR_*, ORT_*, DYNQUAL_*). Unreadable values stay empty (-1 for
/// the load). Never throws.
Environment captureEnvironment();

/// Differences worth a line in the verdict: machine, affinity, governor or kernel variables that
/// changed between `start` and `end`, a 1-minute load average above the core count at either end,
/// and arm-specific environment settings.
std::vector<std::string> compareEnvironments(const Environment& start, const Environment& end, const exec::Arm& base,
                                             const exec::Arm& head);

} // namespace dynqual::diff
