#pragma once
// Element types the harness understands, keyed by their ONNX TensorProto codes.

#include <cstddef>
#include <cstdint>
#include <string>

namespace dynqual {

/// Supported element types; the numeric values are ONNX TensorProto::DataType codes so a
/// DType can be stored in or read from a TensorProto without a mapping table.
enum class DType : int32_t {
  Float = 1,
  Uint8 = 2,
  Int8 = 3,
  Int32 = 6,
  Int64 = 7,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  BFloat16 = 16,
};

/// Maps an ONNX TensorProto data type code to a DType.
/// Throws std::runtime_error "unsupported dtype <NAME> (code N)" for any other code
/// (strings, complex, uint16/32/64, int16, float8, undefined).
DType dtypeFromOnnx(int32_t code);

/// True when `code` names one of the supported DTypes (no exception).
bool isSupportedOnnxDType(int32_t code);

/// ONNX spelling of a data type code ("FLOAT", "BFLOAT16", "STRING", ...); "UNKNOWN(N)" otherwise.
std::string onnxDTypeName(int32_t code);

/// Short lowercase name used in reports: f32, f16, bf16, f64, i8, u8, i32, i64, bool.
const char* dtypeName(DType t);

/// Storage size of one element in bytes (bool is one byte holding 0 or 1).
std::size_t dtypeSize(DType t);

/// True for f32, f16, bf16 and f64.
bool isFloatDType(DType t);

/// True for i8, u8, i32 and i64 (bool is neither float nor integer).
bool isIntegerDType(DType t);

} // namespace dynqual
