#include "dynqual/reference/Interpreter.h"

#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/reference/OpRegistry.h"

#include <chrono>
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
    throw std::runtime_error(what + ": rank " + std::to_string(t.rank()) + " given (shape " + shapeToString(t.dims()) +
                             "), rank " + std::to_string(spec.dims.size()) + " declared");
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
  return evaluate(model, inputs, EvaluateLimits{});
}

std::vector<Tensor> evaluate(const onnx::ModelProto& model, const std::vector<Tensor>& inputs,
                             const EvaluateLimits& limits) {
  const auto t0 = std::chrono::steady_clock::now();
  int64_t held = 0;
  auto account = [&](int64_t elements, const std::string& where) {
    held += elements;
    if (limits.maxElements > 0 && held > limits.maxElements)
      throw LimitExceeded(where + ": the values computed so far hold " + std::to_string(held) +
                          " elements, over the limit of " + std::to_string(limits.maxElements));
    if (limits.maxSeconds > 0) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (s > limits.maxSeconds)
        throw LimitExceeded(where + ": evaluation ran " + std::to_string(s) + " s, over the limit of " +
                            std::to_string(limits.maxSeconds) + " s");
    }
  };
  const onnx::GraphProto& graph = model.graph();
  const int64_t opset = onnxio::defaultOpsetVersion(model);
  std::map<std::string, Tensor> values;

  for (const auto& init : graph.initializer())
    values[init.name()] = onnxio::tensorFromProto(init, "initializer '" + init.name() + "'");

  const std::vector<onnxio::ValueSpec> specs = onnxio::describeInputs(model);
  if (inputs.size() != specs.size())
    throw std::runtime_error("model has " + std::to_string(specs.size()) + " inputs, " + std::to_string(inputs.size()) +
                             " given");
  for (std::size_t i = 0; i < specs.size(); ++i) {
    checkInput(specs[i], inputs[i]);
    values[specs[i].name] = inputs[i];
    account(inputs[i].numel(), "input '" + specs[i].name + "'");
  }

  const OpRegistry& registry = OpRegistry::builtin();
  for (const auto& node : graph.node()) {
    const std::string key = opKey(node);
    const OpEvaluator* evaluator = registry.find(key);
    if (!evaluator)
      throw UnsupportedOpError("unsupported op '" + key + "' (" + nodeLabel(node) + ")");
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
    if (limits.maxElements > 0)
      ctx.setElementBudget(limits.maxElements - held);
    std::vector<Tensor> results = (*evaluator)(ctx);
    if (results.size() < static_cast<std::size_t>(node.output_size()))
      ctx.fail("evaluator produced " + std::to_string(results.size()) + " outputs, node declares " +
               std::to_string(node.output_size()));
    int64_t produced = 0;
    for (int i = 0; i < node.output_size(); ++i)
      if (!node.output(i).empty()) {
        produced += results[i].numel();
        values[node.output(i)] = std::move(results[i]);
      }
    account(produced, nodeLabel(node) + " (" + node.op_type() + ")");
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
