#pragma once
// The table of ONNX op evaluators the reference interpreter dispatches on, and the view of one
// node that every evaluator receives.

#include "dynqual/tensor/Tensor.h"

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace dynqual::reference {

/// Thrown when an evaluation passes a limit it was given (reference::EvaluateLimits); the
/// message names the node, the amount and the limit.
class LimitExceeded : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One node being evaluated: its NodeProto, the model's default-domain opset version and its
/// input tensors (nullptr for an omitted optional input, i.e. an empty input name).
class OpContext {
public:
  OpContext(const onnx::NodeProto& node, int64_t opset, std::vector<const Tensor*> inputs);

  const onnx::NodeProto& node() const { return node_; }
  /// Default-domain opset version the model imports; evaluators switch on it where the op's
  /// signature changed (e.g. Slice starts as attribute before 10, as input from 10).
  int64_t opset() const { return opset_; }
  /// Number of input slots, trailing omitted ones included.
  std::size_t inputCount() const { return inputs_.size(); }
  /// True when slot i exists and is not omitted.
  bool hasInput(std::size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  /// Input i; throws (via fail) when it is absent.
  const Tensor& input(std::size_t i) const;
  /// Number of outputs the node declares (empty names included).
  std::size_t outputCount() const { return static_cast<std::size_t>(node_.output_size()); }

  /// The attribute, or nullptr.
  const onnx::AttributeProto* attribute(const std::string& name) const;
  bool hasAttribute(const std::string& name) const { return attribute(name) != nullptr; }
  /// Attribute values with a default for an absent attribute; a present attribute of another
  /// type is an error (via fail).
  int64_t intAttribute(const std::string& name, int64_t fallback) const;
  float floatAttribute(const std::string& name, float fallback) const;
  std::vector<int64_t> intsAttribute(const std::string& name, std::vector<int64_t> fallback = {}) const;
  /// Same, for an attribute the op requires; absent is an error.
  int64_t requiredIntAttribute(const std::string& name) const;

  /// "node 'name' (OpType)" (or "node #? (OpType)" when unnamed), the prefix of every error.
  std::string describe() const;
  /// Throws std::runtime_error "<describe()>: <message>".
  [[noreturn]] void fail(const std::string& message) const;

  /// Elements the node's outputs may have in all before the evaluation passes its element limit;
  /// negative = no limit (the default).
  void setElementBudget(int64_t elements) { budget_ = elements; }
  /// Called by evaluators whose output size comes from data or attributes (Tile, Expand, Pad,
  /// ConstantOfShape, Range, OneHot) before they allocate it: throws LimitExceeded when an output
  /// of `dims` would pass the element budget, so that the limit holds before the memory is taken.
  void checkOutputSize(const std::vector<int64_t>& dims) const;

private:
  const onnx::NodeProto& node_;
  int64_t opset_;
  std::vector<const Tensor*> inputs_;
  int64_t budget_ = -1;
};

/// An op evaluator: computes all of the node's outputs (one Tensor per declared output; the
/// interpreter ignores those whose name is empty). It throws via OpContext::fail on invalid
/// input, with "unsupported: ..." for valid ONNX it does not implement.
using OpEvaluator = std::function<std::vector<Tensor>(const OpContext&)>;

/// The registry key of a node: its op type, prefixed "<domain>." outside the default domain
/// ("" or "ai.onnx"), e.g. "com.microsoft.MatMulNBits".
std::string opKey(const onnx::NodeProto& node);

/// Map from op key (opKey) to evaluator. To add an op: write its evaluator in the family file it
/// belongs to and add it in that file's register function.
class OpRegistry {
public:
  /// Registers `evaluator` for `opType`; throws std::logic_error when already registered.
  void add(const std::string& opType, OpEvaluator evaluator);
  /// The evaluator, or nullptr when the op is not supported.
  const OpEvaluator* find(const std::string& opType) const;
  /// All registered op types, sorted.
  std::vector<std::string> opTypes() const;

  /// The registry holding every op this library implements.
  static const OpRegistry& builtin();

private:
  std::map<std::string, OpEvaluator> evaluators_;
};

} // namespace dynqual::reference
