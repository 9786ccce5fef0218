// Stored data sets for a model folder, with the CPU reference as the only oracle.
#include "dynqual/modelgen/ReferenceDataSets.h"

#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/InputGenerator.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/reference/Interpreter.h"

#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace dynqual::modelgen {

LabelBinding parseLabelBinding(const std::string& text) {
  LabelBinding out;
  std::stringstream in(text);
  std::string entry;
  while (std::getline(in, entry, ',')) {
    if (entry.empty())
      continue;
    auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size())
      throw std::invalid_argument("dim binding entry '" + entry + "' is not LABEL=N");
    std::string label = entry.substr(0, eq), value = entry.substr(eq + 1);
    std::size_t used = 0;
    int64_t n = -1;
    try {
      n = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size() || n < 0)
      throw std::invalid_argument("dim binding entry '" + entry + "': '" + value + "' is not a size >= 0");
    if (!out.emplace(label, n).second)
      throw std::invalid_argument("dim binding entry '" + entry + "': label '" + label + "' repeats");
  }
  return out;
}

int writeReferenceDataSets(const fs::path& dir, const std::vector<LabelBinding>& bindings, uint64_t seed) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      throw std::runtime_error(dir.string() + " already holds " + e.path().filename().string() +
                               "; stored data sets are never overwritten");
  onnx::ModelProto model = onnxio::loadModel(dir / "model.onnx");
  auto inSpecs = onnxio::describeInputs(model);
  auto outSpecs = onnxio::describeOutputs(model);
  for (std::size_t k = 0; k < bindings.size(); ++k) {
    fs::path set = dir / ("test_data_set_" + std::to_string(k));
    onnxio::DimBinding binding;
    binding.byLabel = bindings[k];
    std::vector<Tensor> inputs, outputs;
    try {
      inputs = onnxio::generateInputs(inSpecs, onnxio::bindShapes(inSpecs, binding), seed + k);
      outputs = reference::evaluate(model, inputs);
    } catch (const std::exception& e) {
      throw std::runtime_error(set.string() + ": " + e.what());
    }
    fs::create_directories(set);
    for (std::size_t i = 0; i < inputs.size(); ++i)
      onnxio::writeTensorFile(set / ("input_" + std::to_string(i) + ".pb"), inputs[i], inSpecs[i].name);
    for (std::size_t i = 0; i < outputs.size(); ++i)
      onnxio::writeTensorFile(set / ("output_" + std::to_string(i) + ".pb"), outputs[i], outSpecs[i].name);
  }
  return static_cast<int>(bindings.size());
}

} // namespace dynqual::modelgen
