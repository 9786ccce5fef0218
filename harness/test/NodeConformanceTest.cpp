// Conformance of the CPU reference against the ONNX backend node tests (stored outputs are the
// ground truth). One test per folder whose ops all come from the foundation op list.
#include "NodeConformance.h"

#include "dynqual/reference/OpRegistry.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

using namespace dynqual::test;

namespace {

std::vector<std::string> withPlaceholder(std::vector<std::string> names) {
  if (names.empty())
    names.push_back("no_node_tests_found");
  return names;
}

std::set<std::string> extendedOps() {
  const auto all = dynqual::reference::OpRegistry::builtin().opTypes();
  return {all.begin(), all.end()};
}

// Folders using ops beyond the foundation list but all implemented by the reference.
std::vector<std::string> extendedFolders() {
  const auto foundation = foldersUsingOnly(nodeTestRoot(), foundationOps());
  std::vector<std::string> out;
  for (const auto& f : foldersUsingOnly(nodeTestRoot(), extendedOps()))
    if (std::find(foundation.begin(), foundation.end(), f) == foundation.end())
      out.push_back(f);
  return out;
}

void check(const std::string& folder) {
  if (folder == "no_node_tests_found")
    GTEST_SKIP() << "ONNX node test data not found at " << nodeTestRoot()
                 << " (set DYNQUAL_ONNX_NODE_DIR or install libonnx-testdata)";
  const NodeTestOutcome r = runNodeTest(nodeTestRoot() / folder);
  switch (r.status) {
  case NodeTestOutcome::Status::Pass:
    SUCCEED();
    break;
  case NodeTestOutcome::Status::Skip:
    GTEST_SKIP() << r.reason << ": " << r.detail;
  case NodeTestOutcome::Status::Fail:
    FAIL() << "reference defect on " << folder << ": " << r.reason;
  }
}

std::string paramName(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

} // namespace

class NodeConformance : public ::testing::TestWithParam<std::string> {};
TEST_P(NodeConformance, MatchesStoredOutputs) {
  check(GetParam());
}
INSTANTIATE_TEST_SUITE_P(SupportedOps, NodeConformance,
                         ::testing::ValuesIn(withPlaceholder(foldersUsingOnly(nodeTestRoot(), foundationOps()))),
                         paramName);

class NodeConformanceExtended : public ::testing::TestWithParam<std::string> {};
TEST_P(NodeConformanceExtended, MatchesStoredOutputs) {
  check(GetParam());
}
// Empty while the supported set covers every op the reference implements.
INSTANTIATE_TEST_SUITE_P(ExtendedOps, NodeConformanceExtended, ::testing::ValuesIn(extendedFolders()), paramName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(NodeConformanceExtended);

// Runs every foundation folder in one process and compares the passed / tried / skipped-per-reason
// counts with the checked-in expectation, so a silently lost test is a failure too.
TEST(NodeConformanceCounts, MatchExpectedFile) {
  const auto folders = foldersUsingOnly(nodeTestRoot(), foundationOps());
  if (folders.empty())
    GTEST_SKIP() << "ONNX node test data not found at " << nodeTestRoot();
  if (std::getenv("DYNQUAL_ONNX_NODE_DIR"))
    GTEST_SKIP() << "the expected counts describe Debian's libonnx-testdata, not DYNQUAL_ONNX_NODE_DIR";
  std::map<std::string, int> counts;
  counts["tried"] = static_cast<int>(folders.size());
  counts["passed"] = 0;
  counts["failed"] = 0;
  for (const char* reason : {kSkipString, kSkipOptionalSequence, kSkipDType, kSkipQuirk, kSkipOutOfScope})
    counts[std::string("skipped: ") + reason] = 0;
  for (const auto& f : folders) {
    const NodeTestOutcome r = runNodeTest(nodeTestRoot() / f);
    if (r.status == NodeTestOutcome::Status::Pass)
      ++counts["passed"];
    else if (r.status == NodeTestOutcome::Status::Fail)
      ++counts["failed"];
    else
      ++counts["skipped: " + r.reason];
  }
  std::ostringstream actual;
  for (const auto& [k, v] : counts)
    actual << k << " = " << v << "\n";
  std::ifstream in(DYNQUAL_NODE_COUNTS_FILE);
  ASSERT_TRUE(in) << "cannot open " << DYNQUAL_NODE_COUNTS_FILE;
  std::stringstream expected;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#')
      expected << line << "\n";
  EXPECT_EQ(actual.str(), expected.str()) << "node conformance counts changed; actual:\n" << actual.str();
}
