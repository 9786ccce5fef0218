#include "dynqual/onnx/ModelLoader.h"

#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>

namespace dynqual::onnxio {
namespace fs = std::filesystem;
namespace {

struct Resolver {
  fs::path modelDir;     // canonical
  std::string modelName; // for messages

  [[noreturn]] void fail(const std::string& tensorWhat, const std::string& what) const {
    throw std::runtime_error(modelName + ": " + tensorWhat + ": " + what);
  }

  static bool isInside(const fs::path& dir, const fs::path& candidate) {
    auto d = dir.begin();
    auto c = candidate.begin();
    for (; d != dir.end(); ++d, ++c)
      if (c == candidate.end() || *d != *c)
        return false;
    return true;
  }

  static uint64_t parseCount(const std::string& text, bool& ok) {
    ok = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos && text.size() <= 19;
    return ok ? std::stoull(text) : 0;
  }

  void resolve(onnx::TensorProto& tensor, const std::string& tensorWhat) const {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
      return;
    std::string location;
    uint64_t offset = 0, length = 0;
    bool hasLength = false;
    for (const auto& kv : tensor.external_data()) {
      bool ok = true;
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset")
        offset = parseCount(kv.value(), ok);
      else if (kv.key() == "length") {
        length = parseCount(kv.value(), ok);
        hasLength = true;
      }
      if (!ok)
        fail(tensorWhat, "external data " + kv.key() + " '" + kv.value() + "' is not a non-negative integer");
    }
    if (location.empty())
      fail(tensorWhat, "external data without a location");
    const fs::path rel(location);
    if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
      fail(tensorWhat,
           "external data location '" + location + "' is absolute; it must be relative to the model folder");
    std::error_code ec;
    const fs::path file = fs::canonical(modelDir / rel, ec);
    if (ec)
      fail(tensorWhat, "external data file '" + location + "' not found next to the model (" + ec.message() + ")");
    if (!isInside(modelDir, file))
      fail(tensorWhat, "external data location '" + location + "' escapes the model folder " + modelDir.string());
    if (!fs::is_regular_file(file, ec))
      fail(tensorWhat, "external data location '" + location + "' is not a regular file");
    const uint64_t size = fs::file_size(file, ec);
    if (ec)
      fail(tensorWhat, "cannot stat external data file '" + location + "': " + ec.message());
    if (offset > size)
      fail(tensorWhat, "external data offset " + std::to_string(offset) + " is past the end of '" + location + "' (" +
                           std::to_string(size) + " bytes)");
    if (!hasLength)
      length = size - offset;
    if (length > size - offset)
      fail(tensorWhat, "external data range [" + std::to_string(offset) + ", " + std::to_string(offset) + "+" +
                           std::to_string(length) + ") is out of bounds of '" + location + "' (" +
                           std::to_string(size) + " bytes)");
    std::ifstream in(file, std::ios::binary);
    std::string bytes(length, '\0');
    in.seekg(static_cast<std::streamoff>(offset));
    if (!in || !in.read(bytes.data(), static_cast<std::streamsize>(length)))
      fail(tensorWhat, "cannot read external data file '" + location + "'");
    tensor.set_raw_data(std::move(bytes));
    tensor.clear_external_data();
    tensor.set_data_location(onnx::TensorProto::DEFAULT);
  }

  void resolveAttribute(onnx::AttributeProto& attr, const std::string& nodeWhat) const {
    const std::string what = nodeWhat + " attribute '" + attr.name() + "'";
    if (attr.has_t())
      resolve(*attr.mutable_t(), what);
    for (auto& t : *attr.mutable_tensors())
      resolve(t, what);
    if (attr.has_g())
      resolveGraph(*attr.mutable_g());
    for (auto& g : *attr.mutable_graphs())
      resolveGraph(g);
  }

  void resolveGraph(onnx::GraphProto& graph) const {
    for (auto& init : *graph.mutable_initializer())
      resolve(init, "initializer '" + init.name() + "'");
    for (auto& node : *graph.mutable_node())
      for (auto& attr : *node.mutable_attribute())
        resolveAttribute(attr, "node '" + node.name() + "' (" + node.op_type() + ")");
  }
};

} // namespace

void resolveExternalData(onnx::ModelProto& model, const fs::path& modelDir, const std::string& modelName) {
  std::error_code ec;
  const fs::path dir = fs::canonical(modelDir, ec);
  if (ec)
    throw std::runtime_error(modelName + ": model folder " + modelDir.string() + " not found: " + ec.message());
  Resolver{dir, modelName}.resolveGraph(*model.mutable_graph());
}

onnx::ModelProto loadModel(const fs::path& modelFile) {
  std::ifstream in(modelFile, std::ios::binary);
  if (!in)
    throw std::runtime_error(modelFile.string() + ": cannot open model file");
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&in))
    throw std::runtime_error(modelFile.string() + ": not a serialized onnx ModelProto");
  fs::path dir = modelFile.parent_path();
  if (dir.empty())
    dir = ".";
  resolveExternalData(model, dir, modelFile.string());
  nameUnnamedNodes(model);
  return model;
}

void nameUnnamedNodes(onnx::ModelProto& model) {
  auto* graph = model.mutable_graph();
  for (int i = 0; i < graph->node_size(); ++i) {
    auto* node = graph->mutable_node(i);
    if (node->name().empty())
      node->set_name(node->op_type() + "_" + std::to_string(i));
  }
}

int64_t defaultOpsetVersion(const onnx::ModelProto& model) {
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx")
      return op.version();
  throw std::runtime_error("model imports no opset of the default ONNX domain");
}

} // namespace dynqual::onnxio
