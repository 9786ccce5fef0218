#include "dynqual/exec/FaultInjection.h"

#include <unistd.h>

#include <cstdlib>
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
  if (st != (stage == FaultStage::Compile ? "compile" : "run"))
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
  std::cerr << "DYNQUAL_TEST_FAULT='" << raw << "' ignored: KIND is abort, hang or exit\n";
}

} // namespace dynqual::exec
