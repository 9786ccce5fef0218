#include "dynqual/run/ChildProcess.h"
#include "MemoryLimit.h"

#include <unistd.h>

#include <algorithm>

namespace dynqual::run {

bool underAddressSanitizer() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

std::vector<std::string> asanLimitedEnvironment(uint64_t bytes) {
  std::vector<std::string> env;
  std::string options = "hard_rss_limit_mb=" + std::to_string(std::max<uint64_t>(1, bytes >> 20));
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("ASAN_OPTIONS=", 0) == 0)
      options = kv.substr(13) + ":" + options;
    else
      env.push_back(kv);
  }
  env.push_back("ASAN_OPTIONS=" + options);
  return env;
}

ChildResult runChild(const std::vector<std::string>& argv, double timeoutSeconds, uint64_t memoryLimitBytes) {
  exec::ProcessSpec spec;
  spec.argv = argv;
  spec.timeoutSeconds = timeoutSeconds;
  spec.memoryLimitBytes = memoryLimitBytes;
  return exec::runProcess(spec);
}

} // namespace dynqual::run
