#pragma once
// The header of a recorded run: machine, build, pipeline, parameters and command line. The cases
// come from the typed results (run::caseRecords, qualify::caseRecords, the diff engine).
#include "dynqual/store/Records.h"

#include <filesystem>
#include <string>
#include <vector>

namespace dynqual::store {

/// Header of a run about to start: fresh key, kind, UTC start time, this process's command line
/// (/proc/self/cmdline), the probed machine, and the build of this source tree with the sha256
/// and size of each file in `artifacts` that exists.
RunRecord newRunHeader(const std::string& kind, const std::string& device, const std::string& pipelineSpec,
                       const std::vector<std::filesystem::path>& artifacts, std::map<std::string, std::string> params);

/// This process's command line, arguments joined by spaces.
std::string currentCommandLine();

} // namespace dynqual::store
