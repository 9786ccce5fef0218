#pragma once
// Store records of `dynqual run` results: the typed path from run::ModelResult to
// store::CaseRecord, used by `dynqual run` and by each model process of `dynqual qualify`.
#include "dynqual/run/ModelRun.h"
#include "dynqual/store/Records.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace dynqual::run {

/// A model by content: `hash` = sha256 (hex) of DIR/model.onnx, or of `name` when that file is
/// gone (a folder that vanished still gets a stable key).
store::ModelRef modelRef(const std::string& name, const std::filesystem::path& dir);

/// Store cases of one model of a run:
///  - one whole-model case (no data set): status `modelStatusName` ("pass", "FAIL", "skip"),
///    error = the detail, prefixed by "<skip reason>: " for a skipped model, a "compile_ms"
///    sample (ms) and param compare_mode = "bit-exact" for a data-movement graph;
///  - one case per data set or binding, in result order: status "passed", "failed" or "skipped",
///    the run or compare error, accuracy rows for each comparison present (vs_expected,
///    vs_reference, reference_vs_stored; per output, preceded by a combined row with output ""
///    holding combinedL2, combinedRelL2, the summed element / NaN-Inf / mismatch counts, the
///    largest max-abs and cosine NaN), an "execute_ms" sample (ms) and the device counters.
/// Content keys: the model as modelRef; a stored data set is sha256 over
/// "input_N.pb <sha256 of the file>\n" of each input_*.pb in name order; a binding, or a stored
/// set whose folder is gone, is sha256 of "<model hash>\n<binding text>\n<seed>".
/// Throws only what reading the model or input files throws (std::runtime_error naming the file).
std::vector<store::CaseRecord> caseRecords(const ModelResult& result, uint64_t seed);

} // namespace dynqual::run
