#include "dynqual/run/ChildProcess.h"

namespace dynqual::run {

ChildResult runChild(const std::vector<std::string>& argv, double timeoutSeconds, uint64_t memoryLimitBytes) {
  exec::ProcessSpec spec;
  spec.argv = argv;
  spec.timeoutSeconds = timeoutSeconds;
  spec.memoryLimitBytes = memoryLimitBytes;
  return exec::runProcess(spec);
}

} // namespace dynqual::run
