#include "dynqual/scope/OpScope.h"

#include "dynqual/reference/OpRegistry.h"
#include "dynqual/tensor/DType.h"

namespace dynqual::scope {

const char* skipReasonName(SkipReason reason) {
  switch (reason) {
  case SkipReason::OpOutsideSupportedSet:
    return "op_outside_supported_set";
  case SkipReason::StringType:
    return "string_type";
  case SkipReason::OptionalOrSequenceType:
    return "optional_or_sequence_type";
  case SkipReason::DTypeOutsideList:
    return "dtype_outside_list";
  case SkipReason::DocumentedDataQuirk:
    return "documented_data_quirk";
  }
  return "unknown";
}

const char* skipReasonText(SkipReason reason) {
  switch (reason) {
  case SkipReason::OpOutsideSupportedSet:
    return "op outside supported set";
  case SkipReason::StringType:
    return "string type";
  case SkipReason::OptionalOrSequenceType:
    return "optional or sequence type";
  case SkipReason::DTypeOutsideList:
    return "dtype outside list";
  case SkipReason::DocumentedDataQuirk:
    return "documented data quirk";
  }
  return "unknown";
}

const std::set<std::string>& supportedOps() {
  static const std::set<std::string> ops = {
      "Reshape", "Slice", "Expand", "Unsqueeze", "Squeeze", "Flatten", "Concat", "Transpose", "Shape", "Gather", "Cast",
      "Identity", "Constant", "ConstantOfShape", "Range", "Add", "Sub", "Mul", "Div", "Equal", "Where",
      // transformer op set
      "MatMul", "Gemm", "Softmax", "LayerNormalization", "ReduceMean", "ReduceSum", "ReduceMax", "Pow", "Sqrt",
      "Reciprocal", "Neg", "Sigmoid", "Tanh", "Erf", "Exp", "Cos", "Sin", "Max", "Min", "Not", "And", "Or", "Less",
      "LessOrEqual", "Greater", "GreaterOrEqual", "IsNaN", "Trilu", "CumSum", "GatherElements", "GatherND", "Split",
      "Dropout",
      // elementwise and reduction tail
      "Relu", "LeakyRelu", "Abs", "Log", "Floor", "Ceil", "Round", "Sign", "Clip", "Mod", "Xor", "Sum", "Mean",
      "CastLike", "LogSoftmax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ArgMax",
      "ArgMin", "OneHot", "Size",
      // data-dependent extents and shape-input ops
      "NonZero", "Compress", "TopK", "Tile", "Pad", "ScatterND", "ScatterElements", "Scatter",
      // onnxruntime contrib ops of GenAI decoders (docs/contrib-ops.md); SimplifiedLayerNormalization
      // is registered by onnxruntime in the default domain as well
      "SimplifiedLayerNormalization", "com.microsoft.SimplifiedLayerNormalization",
      "com.microsoft.SkipSimplifiedLayerNormalization", "com.microsoft.MatMulNBits", "com.microsoft.RotaryEmbedding",
      "com.microsoft.GroupQueryAttention"};
  return ops;
}

namespace {

using reference::opKey;

constexpr int32_t kStringCode = onnx::TensorProto::STRING;

/// Classifies one value's type; returns true and sets reason/detail when it must be skipped.
bool classifyType(const onnx::TypeProto& type, const std::string& name, SkipReason& reason, std::string& detail) {
  if (type.has_optional_type() || type.has_sequence_type() || type.has_map_type()) {
    reason = SkipReason::OptionalOrSequenceType;
    detail = "value '" + name + "'";
    return true;
  }
  if (type.has_tensor_type()) {
    int32_t code = type.tensor_type().elem_type();
    if (code == kStringCode) {
      reason = SkipReason::StringType;
      detail = "value '" + name + "'";
      return true;
    }
    if (!isSupportedOnnxDType(code)) {
      reason = SkipReason::DTypeOutsideList;
      detail = "value '" + name + "' has " + onnxDTypeName(code);
      return true;
    }
  }
  return false;
}

/// The dtype named by a Cast/CastLike 'to' or a ConstantOfShape/Constant value attribute.
bool classifyNodeTypes(const onnx::NodeProto& node, SkipReason& reason, std::string& detail) {
  for (const auto& attr : node.attribute()) {
    int32_t code = -1;
    if (attr.name() == "to" && attr.type() == onnx::AttributeProto::INT)
      code = static_cast<int32_t>(attr.i());
    else if (attr.type() == onnx::AttributeProto::TENSOR)
      code = attr.t().data_type();
    else if (attr.type() == onnx::AttributeProto::STRING || attr.type() == onnx::AttributeProto::STRINGS)
      code = (attr.name() == "value_string" || attr.name() == "value_strings") ? kStringCode : -1;
    if (code == -1)
      continue;
    if (code == kStringCode) {
      reason = SkipReason::StringType;
      detail = "node '" + node.name() + "' attribute '" + attr.name() + "'";
      return true;
    }
    if (!isSupportedOnnxDType(code)) {
      reason = SkipReason::DTypeOutsideList;
      detail = "node '" + node.name() + "' uses " + onnxDTypeName(code);
      return true;
    }
  }
  return false;
}

/// The supported set holds Dropout for inference only: a Dropout whose training_mode input is
/// given and not a constant false draws a random mask, which no reference can reproduce.
bool isTrainingDropout(const onnx::ModelProto& model, const onnx::NodeProto& node) {
  if (node.op_type() != "Dropout" || node.input_size() < 3 || node.input(2).empty())
    return false;
  const std::string& mode = node.input(2);
  auto isFalse = [](const onnx::TensorProto& t) {
    if (t.data_type() != onnx::TensorProto::BOOL)
      return false;
    if (t.int32_data_size() == 1)
      return t.int32_data(0) == 0;
    return t.raw_data().size() == 1 && t.raw_data()[0] == 0;
  };
  for (const auto& init : model.graph().initializer())
    if (init.name() == mode)
      return !isFalse(init);
  for (const auto& n : model.graph().node())
    if (n.op_type() == "Constant" && n.output_size() == 1 && n.output(0) == mode)
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t())
          return !isFalse(a.t());
  return true;
}

} // namespace

std::optional<SkipReason> classifyTypes(const onnx::ModelProto& model, std::string& detail) {
  const auto& graph = model.graph();
  SkipReason reason{};
  for (const auto& v : graph.input())
    if (classifyType(v.type(), v.name(), reason, detail))
      return reason;
  for (const auto& v : graph.output())
    if (classifyType(v.type(), v.name(), reason, detail))
      return reason;
  for (const auto& init : graph.initializer()) {
    if (init.data_type() == kStringCode) {
      detail = "initializer '" + init.name() + "'";
      return SkipReason::StringType;
    }
    if (!isSupportedOnnxDType(init.data_type())) {
      detail = "initializer '" + init.name() + "' has " + onnxDTypeName(init.data_type());
      return SkipReason::DTypeOutsideList;
    }
  }
  for (const auto& node : graph.node())
    if (classifyNodeTypes(node, reason, detail))
      return reason;
  return std::nullopt;
}

std::optional<SkipReason> classifyModel(const onnx::ModelProto& model, std::string& detail,
                                        const std::set<std::string>& ops) {
  if (auto reason = classifyTypes(model, detail))
    return reason;
  for (const auto& node : model.graph().node()) {
    if (!ops.count(opKey(node))) {
      detail = "op '" + opKey(node) + "' (node '" + node.name() + "')";
      return SkipReason::OpOutsideSupportedSet;
    }
    if (isTrainingDropout(model, node)) {
      detail = "Dropout in training mode (node '" + node.name() + "'): only inference Dropout is supported";
      return SkipReason::OpOutsideSupportedSet;
    }
  }
  return std::nullopt;
}

std::vector<std::string> missingOps(const onnx::ModelProto& model, const std::set<std::string>& ops) {
  std::set<std::string> missing;
  for (const auto& node : model.graph().node()) {
    if (!ops.count(opKey(node)))
      missing.insert(opKey(node));
    else if (isTrainingDropout(model, node))
      missing.insert("Dropout (training)");
  }
  return {missing.begin(), missing.end()};
}

} // namespace dynqual::scope
