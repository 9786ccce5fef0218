// Exit codes shared by the dynqual subcommands.
#include "Commands.h"

#include <iostream>

namespace dynqual::cli {

namespace {
int gExitCode = 0;
}

int exitCode() {
  return gExitCode;
}
void setExitCode(int code) {
  gExitCode = code;
}

void finishSuiteCommand(const std::string& command, int tried, int failed, const std::string& recordError,
                        int64_t runId) {
  // A run that tried nothing proves nothing: CI must not read it as a pass.
  if (tried == 0)
    std::cerr << "dynqual " << command << ": no model was tried: every model was skipped\n";
  setExitCode(failed == 0 && tried > 0 ? 0 : 1);
  if (!recordError.empty()) {
    std::cout.flush();
    std::cerr << "dynqual " << command << ": " << recordError << " (run " << runId
              << " stays unfinished in the database; the results above are complete)\n";
    setExitCode(2);
  }
}

} // namespace dynqual::cli
