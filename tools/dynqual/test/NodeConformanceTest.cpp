// ONNX backend node tests through the whole pipeline (compile, runtime process on sim, compare).
//
// One parameterized case per folder of the external conformance suite. Folders outside the
// supported op set, or hitting a reason from the fixed skip list, are skipped with that reason.
// After all cases, main() compares the passed / tried / skipped-per-reason totals with the
// checked-in node_counts.expected.json exactly, so a silently shrinking suite fails too.
#include "../CompileBridge.h"

#include "dynqual/run/ModelRun.h"
#include "dynqual/run/RunReport.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>

namespace fs = std::filesystem;
using namespace dynqual;

namespace {

fs::path nodeRoot() {
  const char* env = std::getenv("DYNQUAL_ONNX_NODE_DIR");
  return env ? fs::path(env) : fs::path("/usr/share/libonnx-testdata/data/node");
}

std::vector<std::string> nodeFolders() {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_directory(nodeRoot(), ec))
    return names;
  for (const auto& e : fs::directory_iterator(nodeRoot()))
    if (fs::exists(e.path() / "model.onnx"))
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<run::ModelResult>& allResults() {
  static std::vector<run::ModelResult> results;
  return results;
}

fs::path workDir() {
  static fs::path dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "dynqual-node-XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      throw std::runtime_error("cannot create a temporary folder");
    return fs::path(tmpl);
  }();
  return dir;
}

class NodeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NodeTest, MatchesStoredOutputs) {
  run::RunConfig config;
  config.execPath = DYNQUAL_EXEC_PATH;
  config.workDir = workDir();
  config.extraBindings = 0; // node tests have static shapes; their data sets are the oracle
  run::CompileFn compile = cli::compileArtifact;
  run::ModelResult r = run::runModel(nodeRoot() / GetParam(), config, compile);
  allResults().push_back(r);
  fs::remove_all(workDir() / GetParam());
  if (r.status == run::ModelStatus::Skipped)
    GTEST_SKIP() << scope::skipReasonName(*r.skipReason) << ": " << r.detail;
  EXPECT_EQ(r.status, run::ModelStatus::Passed) << r.detail;
  EXPECT_FALSE(r.cases.empty()) << "no test_data_set_* was run";
}

INSTANTIATE_TEST_SUITE_P(Onnx, NodeTest, ::testing::ValuesIn(nodeFolders()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(NodeTest);

/// Compares the totals with the checked-in expectation; returns false (and prints both) on any
/// difference.
bool totalsMatchExpected() {
  run::RunTotals t = run::totals(allResults());
  nlohmann::json actual = {{"passed", t.passed}, {"tried", t.tried()}, {"skipped", t.skippedByReason}};
  std::ifstream in(NODE_COUNTS_EXPECTED);
  nlohmann::json expected = nlohmann::json::parse(in, nullptr, false);
  std::cout << "node tests: " << t.passed << " passed, " << t.failed << " failed, " << t.skipped << " skipped of "
            << allResults().size() << " folders\n";
  if (expected.is_discarded() || expected != actual) {
    std::cerr << "node-test totals differ from " << NODE_COUNTS_EXPECTED
              << "\n  expected: " << (expected.is_discarded() ? "<unreadable>" : expected.dump())
              << "\n  actual:   " << actual.dump() << "\n";
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (nodeFolders().empty()) {
    std::cout << "ONNX node tests not found at " << nodeRoot() << " (install libonnx-testdata)\n";
    return 77; // ctest SKIP_RETURN_CODE
  }
  int rc = RUN_ALL_TESTS();
  fs::remove_all(workDir());
  // Totals are only meaningful over the whole suite.
  if (::testing::GTEST_FLAG(filter) == "*" && !totalsMatchExpected())
    rc = 1;
  return rc;
}
