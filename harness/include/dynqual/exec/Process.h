#pragma once
// The process layer under its earlier name: exec::runProcess is process::runProcess
// (dynqual/process/Process.h). New code includes that header.
#include "dynqual/process/Process.h"

namespace dynqual::exec {
using process::ProcessResult;
using process::ProcessSpec;
using process::runProcess;
} // namespace dynqual::exec
