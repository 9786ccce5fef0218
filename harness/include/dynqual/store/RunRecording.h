#pragma once
// Turns what `dynqual run` produces into store records: the run header (machine, build,
// pipeline, parameters) and, per model, the cases of its "dynqual-run" JSON document.
#include "dynqual/store/Records.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace dynqual::store {

/// Header of a run about to start: fresh key, kind, UTC start time, this process's command line
/// (/proc/self/cmdline), the probed machine, and the build of this source tree with the sha256
/// and size of each file in `artifacts` that exists.
RunRecord newRunHeader(const std::string& kind, const std::string& device, const std::string& pipelineSpec,
                       const std::vector<std::filesystem::path>& artifacts,
                       std::map<std::string, std::string> params);

/// Cases of one element of the "models" array of `dynqual run --format json` (version 1):
///  - one whole-model case (no data set): status, failure or skip detail, and a "compile_ms"
///    sample;
///  - one case per data set or binding: status, accuracy rows for each comparison present
///    (per output, plus a combined row with output "" holding combined_l2, combined_rel_l2 and
///    the summed element / NaN-Inf / mismatch counts, cosine NaN), an "execute_ms" sample and the
///    device counters.
/// Content keys: the model is sha256 of DIR/model.onnx (of the name when the file is gone); a
/// stored data set is sha256 over the sha256 of each input_*.pb in name order; a binding is
/// sha256 of model hash, binding text and `seed`. Throws std::runtime_error naming the field
/// when the document does not have the documented shape.
std::vector<CaseRecord> casesFromRunModel(const nlohmann::json& model, uint64_t seed);

/// This process's command line, arguments joined by spaces.
std::string currentCommandLine();

} // namespace dynqual::store
