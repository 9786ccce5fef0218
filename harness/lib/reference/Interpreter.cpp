#include "dynqual/reference/Interpreter.h"

#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/reference/OpRegistry.h"

#include <map>
#include <set>

namespace dynqual::reference {
namespace {

void checkInput(const onnxio::ValueSpec& spec, const Tensor& t) {
  const std::string what = "input '" + spec.name + "'";
  if (t.dtype() != spec.dtype)
    throw std::runtime_error(what + ": dtype " + dtypeName(t.dtype()) + " given, " + dtypeName(spec.dtype) +
                             " declared");
  if (t.dims().size() != spec.dims.size())
    throw std::runtime_error(what + ": rank " + std::to_string(t.rank()) + " given (shape " +
                             shapeToString(t.dims()) + "), rank " + std::to_string(spec.dims.size()) + " declared");
  for (std::size_t i = 0; i < spec.dims.size(); ++i)
    if (spec.dims[i] != onnxio::kDynamicDim && spec.dims[i] != t.dims()[i])
      throw std::runtime_error(what + ": dim " + std::to_string(i) + " is " + std::to_string(t.dims()[i]) +
                               ", declared " + std::to_string(spec.dims[i]));
}

std::string nodeLabel(const onnx::NodeProto& node) {
  return "node '" + (node.name().empty() ? std::string("?") : node.name()) + "'";
}

} // namespace

std::vector<Tensor> evaluate(const onnx::ModelProto& model, const std::vector<Tensor>& inputs) {
  const onnx::GraphProto& graph = model.graph();
  const int64_t opset = onnxio::defaultOpsetVersion(model);
  std::map<std::string, Tensor> values;

  for (const auto& init : graph.initializer())
    values[init.name()] = onnxio::tensorFromProto(init, "initializer '" + init.name() + "'");

  const std::vector<onnxio::ValueSpec> specs = onnxio::describeInputs(model);
  if (inputs.size() != specs.size())
    throw std::runtime_error("model has " + std::to_string(specs.size()) + " inputs, " +
                             std::to_string(inputs.size()) + " given");
  for (std::size_t i = 0; i < specs.size(); ++i) {
    checkInput(specs[i], inputs[i]);
    values[specs[i].name] = inputs[i];
  }

  const OpRegistry& registry = OpRegistry::builtin();
  for (const auto& node : graph.node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      throw UnsupportedOpError("unsupported op '" + node.domain() + "." + node.op_type() + "' (" +
                               nodeLabel(node) + ")");
    const OpEvaluator* evaluator = registry.find(node.op_type());
    if (!evaluator)
      throw UnsupportedOpError("unsupported op '" + node.op_type() + "' (" + nodeLabel(node) + ")");
    std::vector<const Tensor*> operands;
    for (const auto& name : node.input()) {
      if (name.empty()) {
        operands.push_back(nullptr);
        continue;
      }
      auto it = values.find(name);
      if (it == values.end())
        throw std::runtime_error(nodeLabel(node) + " (" + node.op_type() + "): input '" + name +
                                 "' is not defined by any earlier node, initializer or graph input");
      operands.push_back(&it->second);
    }
    OpContext ctx(node, opset, std::move(operands));
    std::vector<Tensor> results = (*evaluator)(ctx);
    if (results.size() < static_cast<std::size_t>(node.output_size()))
      ctx.fail("evaluator produced " + std::to_string(results.size()) + " outputs, node declares " +
               std::to_string(node.output_size()));
    for (int i = 0; i < node.output_size(); ++i)
      if (!node.output(i).empty())
        values[node.output(i)] = std::move(results[i]);
  }

  std::vector<Tensor> outputs;
  for (const auto& out : graph.output()) {
    auto it = values.find(out.name());
    if (it == values.end())
      throw std::runtime_error("graph output '" + out.name() + "' is never produced");
    outputs.push_back(it->second);
  }
  return outputs;
}

} // namespace dynqual::reference
