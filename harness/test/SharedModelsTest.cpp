// The CPU reference on the exported models (ONNX test-data layout) against their stored outputs.
#include "dynqual/compare/Compare.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/onnx/TestDataSets.h"
#include "dynqual/reference/Interpreter.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace fs = std::filesystem;
using namespace dynqual;

namespace {

fs::path modelsRoot() {
  if (const char* env = std::getenv("DYNQUAL_MODELS_DIR"); env && *env)
    return env;
  return DYNQUAL_DEFAULT_MODELS_DIR;
}

} // namespace

class SharedModels : public ::testing::TestWithParam<std::string> {};

TEST_P(SharedModels, ReferenceMatchesStoredOutputs) {
  const fs::path dir = modelsRoot() / GetParam();
  if (!fs::exists(dir / "model.onnx"))
    GTEST_SKIP() << "model folder " << dir << " not found (set DYNQUAL_MODELS_DIR)";
  const onnx::ModelProto model = onnxio::loadModel(dir / "model.onnx");
  const auto sets = onnxio::discoverTestDataSets(dir);
  ASSERT_FALSE(sets.empty()) << dir << " has no test_data_set_*";
  std::vector<std::string> names;
  for (const auto& o : model.graph().output())
    names.push_back(o.name());
  for (const auto& set : sets) {
    std::vector<Tensor> inputs, expected;
    for (const auto& f : set.inputs)
      inputs.push_back(onnxio::readTensorFile(f));
    for (const auto& f : set.outputs)
      expected.push_back(onnxio::readTensorFile(f));
    std::vector<Tensor> actual;
    try {
      actual = reference::evaluate(model, inputs);
    } catch (const reference::UnsupportedOpError& e) {
      GTEST_SKIP() << e.what();
    }
    const compare::Comparison c = compare::compareOutputs(names, actual, expected);
    EXPECT_EQ(c.verdict, compare::Verdict::Pass) << set.dir << ": " << c.reason;
    for (const auto& o : c.outputs)
      RecordProperty(set.dir.filename().string() + "." + o.name + ".relL2", std::to_string(o.relL2));
  }
}

INSTANTIATE_TEST_SUITE_P(Models, SharedModels, ::testing::Values("shape_ops", "tiny_bert", "kv_decoder"));
