#pragma once
// The process layer under its earlier names: run::runChild is process::runChild and
// run::ChildResult is process::ProcessResult (dynqual/process/Process.h). New code includes that
// header.
#include "dynqual/process/Process.h"

namespace dynqual::run {
using ChildResult = process::ProcessResult;
using process::runChild;
} // namespace dynqual::run
