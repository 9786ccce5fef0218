#include "dynqual/modelgen/ReferenceOutputs.h"

#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/onnx/TestDataSets.h"
#include "dynqual/reference/Interpreter.h"

#include <stdexcept>

namespace fs = std::filesystem;

namespace dynqual::modelgen {

int writeReferenceOutputs(const fs::path& modelDir) {
  onnx::ModelProto model = onnxio::loadModel(modelDir / "model.onnx");
  auto outSpecs = onnxio::describeOutputs(model);
  int written = 0;
  for (const auto& set : onnxio::discoverTestDataSets(modelDir)) {
    std::vector<Tensor> inputs;
    for (const auto& file : set.inputs)
      inputs.push_back(onnxio::readTensorFile(file));
    std::vector<Tensor> outputs;
    try {
      outputs = reference::evaluate(model, inputs);
    } catch (const std::exception& e) {
      throw std::runtime_error(set.dir.string() + ": the CPU reference rejected the inputs: " + e.what());
    }
    for (const auto& stale : set.outputs)
      fs::remove(stale);
    for (size_t i = 0; i < outputs.size(); ++i)
      onnxio::writeTensorFile(set.dir / ("output_" + std::to_string(i) + ".pb"), outputs[i], outSpecs[i].name);
    ++written;
  }
  if (written == 0)
    throw std::runtime_error(modelDir.string() + ": no test_data_set_K folder");
  return written;
}

} // namespace dynqual::modelgen
