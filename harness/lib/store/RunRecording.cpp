#include "dynqual/store/RunRecording.h"

#include "dynqual/store/Fingerprint.h"

#include <algorithm>
#include <fstream>
#include <iterator>

namespace fs = std::filesystem;

namespace dynqual::store {

std::string currentCommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0')
    raw.pop_back();
  std::replace(raw.begin(), raw.end(), '\0', ' ');
  return raw;
}

RunRecord newRunHeader(const std::string& kind, const std::string& device, const std::string& pipelineSpec,
                       const std::vector<fs::path>& artifacts, std::map<std::string, std::string> params) {
  RunRecord r;
  r.key = newRunKey();
  r.kind = kind;
  r.startedAt = utcNow();
  r.commandLine = currentCommandLine();
  r.device = device;
  r.machine = probeMachine();
  r.build = probeBuild(DYNQUAL_SOURCE_DIR, DYNQUAL_VERSION_STRING, artifacts);
  r.pipeline = {sha256Hex(pipelineSpec), pipelineSpec};
  r.params = std::move(params);
  return r;
}

} // namespace dynqual::store
