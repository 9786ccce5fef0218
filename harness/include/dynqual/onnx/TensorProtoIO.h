#pragma once
// Conversion between onnx::TensorProto (and .pb files holding one) and dynqual::Tensor.

#include "dynqual/tensor/Tensor.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>

namespace dynqual::onnxio {

/// Converts a TensorProto to a Tensor. Reads raw_data (little-endian) or the typed field ONNX
/// assigns to the dtype: float_data (f32), double_data (f64), int64_data (i64), int32_data
/// (i32, i8, u8, bool, and f16/bf16 as 16-bit patterns). `context` (file, initializer or node)
/// prefixes every error. Throws std::runtime_error on an unsupported dtype, a string tensor,
/// external data that was not resolved, segments, or an element count that does not match dims.
Tensor tensorFromProto(const onnx::TensorProto& proto, const std::string& context);

/// Converts a Tensor to a TensorProto with the given name, data in raw_data.
onnx::TensorProto tensorToProto(const Tensor& tensor, const std::string& name);

/// Reads a .pb file holding one serialized TensorProto. Throws std::runtime_error naming the
/// file when it cannot be opened or parsed or holds an unsupported tensor.
Tensor readTensorFile(const std::filesystem::path& file);

/// Same as readTensorFile, also returning the TensorProto's name (may be empty).
Tensor readTensorFile(const std::filesystem::path& file, std::string& nameOut);

/// Writes `tensor` as one serialized TensorProto named `name`. Throws std::runtime_error naming
/// the file when it cannot be written.
void writeTensorFile(const std::filesystem::path& file, const Tensor& tensor, const std::string& name);

} // namespace dynqual::onnxio
