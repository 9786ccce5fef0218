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
/// (/usr/share/libonnx-testdata/data/node), sharedModelsDir() and the models made at build time
/// (<build>/models/generated: hip-ep's single-op L2 models, genai-decoder tiny), each only when it exists.
std::vector<std::filesystem::path> embeddedSuite(const std::filesystem::path& selfExe);

/// The default perf suite of ab, gate and calibrate: each model folder of sharedModelsDir() (sorted)
/// and <source>/corpus/decoder_tiny, each only when it exists. A perf suite, not the node tests,
/// which are a correctness suite.
std::vector<std::filesystem::path> perfSuite(const std::filesystem::path& selfExe);
/// What the parent keeps of one model's process: the report the tables and `--format json` show,
/// and the store cases to record.
struct ModelEntry {
  /// QualifyModel.h toJson without "records", or for a process that did not finish, a failed
  /// entry whose accuracy verdict is "crash" or "timeout".
  nlohmann::json report;
  std::vector<store::CaseRecord> cases;
};

/// Runs `argv` (the qualify-one command line, model folder included) as a child with a wall
/// limit of `timeoutSeconds`. A finished child's JSON is the report and its "records" are decoded
/// (store::caseFromJson) into the cases. A crash, a timeout, or output that is not that JSON (its
/// records included) becomes a failed entry for `modelDir`: accuracy verdict "crash" or
/// "timeout", detail naming the signal, the limit, the child's stderr or the malformed record;
/// its one whole-model case has status "FAIL", that detail as error, and params verdict and
/// perf_error. Never throws.
ModelEntry qualifyInChild(const std::vector<std::string>& argv, const std::filesystem::path& modelDir,
                          double timeoutSeconds);

/// True when the entry failed accuracy, crashed or timed out (skipped models are not failures).
bool entryFailed(const nlohmann::json& entry);
/// True when the entry's model status is "input-error" (only bad model or data files failed).
bool entryInputError(const nlohmann::json& entry);

/// Prints the L2 accuracy table, the performance table (tried models only), failure details and
/// a totals line ("N models: P passed, F failed, S skipped (reason=count, ...)").
void renderTables(std::ostream& os, const std::vector<nlohmann::json>& entries);

} // namespace dynqual::qualify
