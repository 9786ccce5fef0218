#include "dynqual/exec/FaultInjection.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>
#include <iostream>

namespace dynqual::exec {

void applyFault(FaultStage stage, const std::string& path) {
  const char* raw = std::getenv("DYNQUAL_TEST_FAULT");
  if (!raw || !*raw)
    return;
  std::string spec = raw, filter;
  if (auto colon = spec.find(':'); colon != std::string::npos) {
    filter = spec.substr(colon + 1);
    spec = spec.substr(0, colon);
  }
  auto dash = spec.find('-');
  if (dash == std::string::npos) {
    std::cerr << "DYNQUAL_TEST_FAULT='" << raw << "' ignored: expected STAGE-KIND[:SUBSTRING]\n";
    return;
  }
  std::string st = spec.substr(0, dash), kind = spec.substr(dash + 1);
  if (st != (stage == FaultStage::Compile ? "compile" : stage == FaultStage::Run ? "run" : "reference"))
    return;
  if (!filter.empty() && path.find(filter) == std::string::npos)
    return;
  if (kind == "abort")
    std::abort();
  if (kind == "hang")
    for (;;)
      pause();
  if (kind == "exit")
    _exit(3);
  if (kind == "oom") {
    // Touches 64 MiB blocks until an allocation fails (std::bad_alloc, uncaught: abort). Stops at
    // 4 GiB so a missing limit cannot exhaust the machine: that exits 3 saying so.
    std::vector<std::unique_ptr<char[]>> blocks;
    for (int i = 0; i < 64; ++i) {
      blocks.emplace_back(new char[64 << 20]);
      std::memset(blocks.back().get(), 1, 64 << 20);
    }
    std::cerr << "DYNQUAL_TEST_FAULT=oom: 4 GiB allocated, no memory limit held\n";
    _exit(3);
  }
  std::cerr << "DYNQUAL_TEST_FAULT='" << raw << "' ignored: KIND is abort, hang, exit or oom\n";
}

} // namespace dynqual::exec
