#pragma once
// Running the CPU reference on one ONNX backend node-test folder and classifying the outcome.

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace dynqual::test {

/// The op list of the foundation slice: node-test folders using only these are checked.
const std::set<std::string>& foundationOps();

/// Root of the ONNX node tests: $DYNQUAL_ONNX_NODE_DIR, else /usr/share/libonnx-testdata/data/node.
std::filesystem::path nodeTestRoot();

/// Folder names (sorted) under `root` whose model's nodes all have an op type in `ops`.
/// Empty when root does not exist. Unparsable models are left out.
std::vector<std::string> foldersUsingOnly(const std::filesystem::path& root, const std::set<std::string>& ops);

/// The fixed skip reasons.
inline const char* const kSkipString = "string type";
inline const char* const kSkipOptionalSequence = "optional or sequence type";
inline const char* const kSkipDType = "dtype outside list";
inline const char* const kSkipQuirk = "documented data quirk";
inline const char* const kSkipOutOfScope = "op outside supported set";

struct NodeTestOutcome {
  enum class Status { Pass, Fail, Skip } status = Status::Fail;
  std::string reason; ///< a kSkip* constant for Skip; the failure for Fail
  std::string detail; ///< more context (which input, which quirk)
};

/// Evaluates the folder's model with the reference on every test_data_set and compares with the
/// stored outputs: exact for integers and bool, bit-exact for data-movement-only graphs, else
/// relative L2 <= 1e-5. A stored-data mismatch on a folder with a documented quirk is a Skip only
/// when the quirk is verified on that data (docs/quirks.md); otherwise it is a Fail.
NodeTestOutcome runNodeTest(const std::filesystem::path& folder);

} // namespace dynqual::test
