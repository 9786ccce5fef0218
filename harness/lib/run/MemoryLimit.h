#pragma once
// How a child's memory limit is applied (shared by runChild and ServedChild): RLIMIT_AS, or
// under AddressSanitizer, whose shadow memory needs a huge address space, ASan's own
// hard_rss_limit_mb.
#include <cstdint>
#include <string>
#include <vector>

namespace dynqual::run {

/// True in a build with AddressSanitizer.
bool underAddressSanitizer();

/// This process's environment with hard_rss_limit_mb = `bytes` MiB added to ASAN_OPTIONS. Built
/// before fork, so that the child only calls execve.
std::vector<std::string> asanLimitedEnvironment(uint64_t bytes);

} // namespace dynqual::run
