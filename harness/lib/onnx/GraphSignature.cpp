#include "dynqual/onnx/GraphSignature.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace dynqual::onnxio {

bool ValueSpec::isDynamic() const {
  return std::find(dims.begin(), dims.end(), kDynamicDim) != dims.end();
}

ValueSpec describeValue(const onnx::ValueInfoProto& value, const std::string& role) {
  const std::string what = "graph " + role + " '" + value.name() + "'";
  const auto& type = value.type();
  if (type.has_sequence_type() || type.has_optional_type())
    throw std::runtime_error(what + ": unsupported: optional and sequence types");
  if (type.has_map_type() || type.has_sparse_tensor_type() || !type.has_tensor_type())
    throw std::runtime_error(what + ": unsupported: only dense tensor types are supported");
  const auto& tensorType = type.tensor_type();
  if (tensorType.elem_type() == onnx::TensorProto::STRING)
    throw std::runtime_error(what + ": unsupported: string type");
  ValueSpec spec;
  spec.name = value.name();
  try {
    spec.dtype = dtypeFromOnnx(tensorType.elem_type());
  } catch (const std::exception& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
  if (!tensorType.has_shape())
    throw std::runtime_error(what + ": unsupported: unknown rank (no shape declared)");
  for (const auto& dim : tensorType.shape().dim()) {
    if (dim.has_dim_value() && dim.dim_value() >= 0) {
      spec.dims.push_back(dim.dim_value());
      spec.dimLabels.emplace_back();
    } else {
      // Every dim_param is a label only, whatever it spells ("seq + past" is not an expression).
      spec.dims.push_back(kDynamicDim);
      spec.dimLabels.push_back(dim.has_dim_param() ? dim.dim_param() : std::string());
    }
  }
  return spec;
}

std::vector<ValueSpec> describeInputs(const onnx::ModelProto& model) {
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer())
    initializers.insert(init.name());
  std::vector<ValueSpec> specs;
  for (const auto& input : model.graph().input())
    if (!initializers.count(input.name()))
      specs.push_back(describeValue(input, "input"));
  return specs;
}

std::vector<ValueSpec> describeOutputs(const onnx::ModelProto& model) {
  std::vector<ValueSpec> specs;
  for (const auto& output : model.graph().output())
    specs.push_back(describeValue(output, "output"));
  return specs;
}

} // namespace dynqual::onnxio
