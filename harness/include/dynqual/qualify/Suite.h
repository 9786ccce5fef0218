#pragma once
// The suite side of `dynqual qualify`: where the embedded suite lives, one child process per
// model, the two tables, and the store records of a model.
#include "dynqual/store/Records.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace dynqual::qualify {

/// ../shared/models beside the source tree: $DYNQUAL_MODELS_DIR when set and not empty, else
/// `<source>/../shared/models` where <source> is the configured source tree, or the first
/// ancestor of `selfExe` holding corpus/ and harness/ when that tree is gone. The returned path
/// may not exist.
std::filesystem::path sharedModelsDir(const std::filesystem::path& selfExe);

/// The embedded suite: <source>/corpus, the ONNX node-test folder
/// (/usr/share/libonnx-testdata/data/node) and sharedModelsDir(), each only when it exists.
std::vector<std::filesystem::path> embeddedSuite(const std::filesystem::path& selfExe);

/// The default perf suite of ab, gate and calibrate: each model folder of sharedModelsDir() (sorted)
/// and <source>/corpus/decoder_tiny, each only when it exists. A perf suite, not the node tests,
/// which are a correctness suite.
std::vector<std::filesystem::path> perfSuite(const std::filesystem::path& selfExe);
/// Runs `argv` (the qualify-one command line, model folder included) as a child with a wall
/// limit of `timeoutSeconds` and returns its JSON (QualifyModel.h toJson). A crash, a timeout or
/// output that is not that JSON becomes a failed entry for `modelDir` whose accuracy verdict is
/// "crash" or "timeout" and whose detail names the signal, the limit or the child's stderr.
/// Never throws.
nlohmann::json qualifyInChild(const std::vector<std::string>& argv, const std::filesystem::path& modelDir,
                              double timeoutSeconds);

/// True when the entry failed accuracy, crashed or timed out (skipped models are not failures).
bool entryFailed(const nlohmann::json& entry);

/// Prints the L2 accuracy table, the performance table (tried models only), failure details and
/// a totals line ("N models: P passed, F failed, S skipped (reason=count, ...)").
void renderTables(std::ostream& os, const std::vector<nlohmann::json>& entries);

/// Store cases of one entry: the `dynqual run` cases (store::casesFromRunModel) with the
/// whole-model case extended by the qualify samples (qps 1/s, session_s s, first_infer_ms ms,
/// latency_ms ms per repetition, cpu_percent %, peak_host_bytes bytes), the device counters of
/// the timed run, params warmup, reps, timed_case and pass_ms.<pass>, and param verdict
/// ("timeout" or "crash") when the model's process did not finish (qualifyInChild). Throws
/// std::runtime_error naming the field for a malformed entry.
std::vector<store::CaseRecord> casesFromEntry(const nlohmann::json& entry, uint64_t seed);

} // namespace dynqual::qualify
