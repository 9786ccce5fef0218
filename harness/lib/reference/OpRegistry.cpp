#include "dynqual/reference/OpRegistry.h"

#include "OpFamilies.h"

#include <stdexcept>

namespace dynqual::reference {

OpContext::OpContext(const onnx::NodeProto& node, int64_t opset, std::vector<const Tensor*> inputs)
    : node_(node), opset_(opset), inputs_(std::move(inputs)) {
}

const Tensor& OpContext::input(std::size_t i) const {
  if (!hasInput(i))
    fail("required input " + std::to_string(i) + " is missing");
  return *inputs_[i];
}

const onnx::AttributeProto* OpContext::attribute(const std::string& name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t OpContext::intAttribute(const std::string& name, int64_t fallback) const {
  const auto* a = attribute(name);
  if (!a)
    return fallback;
  if (a->type() != onnx::AttributeProto::INT)
    fail("attribute '" + name + "' must be an int");
  return a->i();
}

float OpContext::floatAttribute(const std::string& name, float fallback) const {
  const auto* a = attribute(name);
  if (!a)
    return fallback;
  if (a->type() != onnx::AttributeProto::FLOAT)
    fail("attribute '" + name + "' must be a float");
  return a->f();
}

std::vector<int64_t> OpContext::intsAttribute(const std::string& name, std::vector<int64_t> fallback) const {
  const auto* a = attribute(name);
  if (!a)
    return fallback;
  if (a->type() != onnx::AttributeProto::INTS)
    fail("attribute '" + name + "' must be a list of ints");
  return {a->ints().begin(), a->ints().end()};
}

int64_t OpContext::requiredIntAttribute(const std::string& name) const {
  if (!hasAttribute(name))
    fail("required attribute '" + name + "' is missing");
  return intAttribute(name, 0);
}

std::string OpContext::describe() const {
  return "node '" + (node_.name().empty() ? std::string("?") : node_.name()) + "' (" + node_.op_type() + ")";
}

void OpContext::fail(const std::string& message) const {
  throw std::runtime_error(describe() + ": " + message);
}

void OpContext::checkOutputSize(const std::vector<int64_t>& dims) const {
  if (budget_ < 0)
    return;
  // Saturating product: dims from data can overflow int64.
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d <= 0) {
      n = 0;
      break;
    }
    n = n > budget_ / d ? budget_ + 1 : n * d;
  }
  if (n > budget_)
    throw LimitExceeded(describe() + ": an output of shape " + shapeToString(dims) + " would pass the element limit (" +
                        std::to_string(budget_) + " elements left)");
}

void OpRegistry::add(const std::string& opType, OpEvaluator evaluator) {
  if (!evaluators_.emplace(opType, std::move(evaluator)).second)
    throw std::logic_error("op '" + opType + "' registered twice");
}

const OpEvaluator* OpRegistry::find(const std::string& opType) const {
  auto it = evaluators_.find(opType);
  return it == evaluators_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::opTypes() const {
  std::vector<std::string> names;
  for (const auto& [name, fn] : evaluators_)
    names.push_back(name);
  return names;
}

std::string opKey(const onnx::NodeProto& node) {
  if (node.domain().empty() || node.domain() == "ai.onnx")
    return node.op_type();
  return node.domain() + "." + node.op_type();
}

const OpRegistry& OpRegistry::builtin() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerShapeOps(r);
    registerIndexingOps(r);
    registerConstantOps(r);
    registerCastOps(r);
    registerElementwiseOps(r);
    registerMatMulOps(r);
    registerReductionOps(r);
    registerActivationOps(r);
    registerSelectionOps(r);
    registerDataDependentOps(r);
    registerScatterOps(r);
    registerContribOps(r);
    return r;
  }();
  return registry;
}

} // namespace dynqual::reference
