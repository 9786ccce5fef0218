#pragma once
// The declared inputs and outputs of a model graph: names, dtypes and (possibly dynamic) dims.

#include "dynqual/tensor/DType.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dynqual::onnxio {

/// Dim value marking a dynamic dim (a dim_param or an absent dim_value).
inline constexpr int64_t kDynamicDim = -1;

/// One declared graph input or output.
struct ValueSpec {
  std::string name;
  DType dtype;
  /// Declared dims; kDynamicDim where the dim is a dim_param or unknown.
  std::vector<int64_t> dims;
  /// The dim_param label of each dim ("" when static or unnamed). A label is only a name:
  /// "seq + past" is not parsed as an expression.
  std::vector<std::string> dimLabels;
  bool isDynamic() const;
};

/// Graph inputs that are real inputs (initializers listed as inputs, as IR < 4 does, are left
/// out), in declaration order. Throws std::runtime_error naming the input when its type is not a
/// tensor (string, optional, sequence, map), its dtype is unsupported, or its shape is absent.
std::vector<ValueSpec> describeInputs(const onnx::ModelProto& model);

/// Graph outputs in declaration order; errors as describeInputs.
std::vector<ValueSpec> describeOutputs(const onnx::ModelProto& model);

/// The ValueSpec of one ValueInfoProto; `role` ("input", "output") goes into error messages.
ValueSpec describeValue(const onnx::ValueInfoProto& value, const std::string& role);

} // namespace dynqual::onnxio
