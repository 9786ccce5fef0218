// Contrib ops outside what is implemented, in a suite beside a good model: each is a failed row
// whose error names the node and the attribute or input; the good model still passes.
#include "dynqual/modelgen/ContribCases.h"
#include "dynqual/modelgen/GraphBuilder.h"
#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/process/Process.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace dynqual;
using json = nlohmann::json;

namespace {

void setInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
  for (auto& a : *n->mutable_attribute())
    if (a.name() == name) {
      a.set_i(v);
      return;
    }
  ADD_FAILURE() << "no attribute " << name;
}

/// Writes `c`'s model (maybe edited) and its first input set, without outputs.
void writeInputsOnly(const modelgen::ContribCase& c, const fs::path& dir) {
  fs::create_directories(dir / "test_data_set_0");
  modelgen::writeModel(c.model, dir / "model.onnx");
  const auto specs = onnxio::describeInputs(c.model);
  for (std::size_t i = 0; i < c.inputSets[0].size(); ++i)
    onnxio::writeTensorFile(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"), c.inputSets[0][i],
                            specs[i].name);
}

} // namespace

TEST(QualifyContrib, OutOfRangeContribOpsFailNamingTheNodeAndTheSuiteGoesOn) {
  const fs::path suite = fs::temp_directory_path() / ("dq-contrib-bad-" + std::to_string(getpid()));
  fs::remove_all(suite);
  auto nbits = modelgen::contribConformanceCases(1, "MatMulNBits");
  auto gqa = modelgen::contribConformanceCases(1, "GroupQueryAttention");
  ASSERT_FALSE(nbits.empty());
  ASSERT_FALSE(gqa.empty());
  modelgen::writeContribCase(nbits[0], suite / "good");

  modelgen::ContribCase bits3 = nbits[0];
  setInt(bits3.model.mutable_graph()->mutable_node(0), "bits", 3);
  writeInputsOnly(bits3, suite / "bits3");

  modelgen::ContribCase heads = gqa[0];
  setInt(heads.model.mutable_graph()->mutable_node(0), "num_heads", 5);
  setInt(heads.model.mutable_graph()->mutable_node(0), "kv_num_heads", 2);
  writeInputsOnly(heads, suite / "heads5kv2");

  // scales one value short of N * k_blocks.
  modelgen::ContribCase scales = nbits[0];
  for (auto& init : *scales.model.mutable_graph()->mutable_initializer())
    if (init.name() == "scales") {
      const Tensor t = onnxio::tensorFromProto(init, "scales");
      std::vector<double> v = t.toDoubles();
      v.pop_back();
      init = onnxio::tensorToProto(Tensor::fromDoubles(t.dtype(), {static_cast<int64_t>(v.size())}, v), "scales");
    }
  writeInputsOnly(scales, suite / "scales_short");

  process::ProcessResult r =
      process::runChild({DYNQUAL_BIN, "qualify", suite.string(), "--reps", "1", "--format", "json", "--no-db"}, 600);
  const json doc = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.err;
  EXPECT_EQ(r.exitCode, 1) << r.err;
  std::map<std::string, json> rows;
  for (const auto& m : doc["models"])
    rows[m["model"]["name"]] = m["model"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows["good"]["status"], "pass") << rows["good"];
  const std::map<std::string, std::vector<std::string>> want = {
      {"bits3", {"MatMulNBits_0", "bits = 3"}},
      {"heads5kv2", {"GroupQueryAttention_0", "num_heads = 5", "kv_num_heads = 2"}},
      {"scales_short", {"MatMulNBits_0", "scales"}}};
  for (const auto& [name, needles] : want) {
    EXPECT_EQ(rows[name]["status"], "FAIL") << name << ": " << rows[name];
    const std::string detail = rows[name].dump();
    for (const auto& needle : needles)
      EXPECT_NE(detail.find(needle), std::string::npos) << name << " lacks '" << needle << "': " << detail;
  }
  fs::remove_all(suite);
}
