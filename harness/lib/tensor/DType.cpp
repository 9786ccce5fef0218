#include "dynqual/tensor/DType.h"

#include <stdexcept>

namespace dynqual {

std::string onnxDTypeName(int32_t code) {
  switch (code) {
  case 0:
    return "UNDEFINED";
  case 1:
    return "FLOAT";
  case 2:
    return "UINT8";
  case 3:
    return "INT8";
  case 4:
    return "UINT16";
  case 5:
    return "INT16";
  case 6:
    return "INT32";
  case 7:
    return "INT64";
  case 8:
    return "STRING";
  case 9:
    return "BOOL";
  case 10:
    return "FLOAT16";
  case 11:
    return "DOUBLE";
  case 12:
    return "UINT32";
  case 13:
    return "UINT64";
  case 14:
    return "COMPLEX64";
  case 15:
    return "COMPLEX128";
  case 16:
    return "BFLOAT16";
  default:
    return "UNKNOWN(" + std::to_string(code) + ")";
  }
}

bool isSupportedOnnxDType(int32_t code) {
  switch (code) {
  case 1:
  case 2:
  case 3:
  case 6:
  case 7:
  case 9:
  case 10:
  case 11:
  case 16:
    return true;
  default:
    return false;
  }
}

DType dtypeFromOnnx(int32_t code) {
  if (!isSupportedOnnxDType(code))
    throw std::runtime_error("unsupported dtype " + onnxDTypeName(code) + " (code " + std::to_string(code) +
                             "); supported: f32, f16, bf16, f64, i8, u8, i32, i64, bool");
  return static_cast<DType>(code);
}

const char* dtypeName(DType t) {
  switch (t) {
  case DType::Float:
    return "f32";
  case DType::Uint8:
    return "u8";
  case DType::Int8:
    return "i8";
  case DType::Int32:
    return "i32";
  case DType::Int64:
    return "i64";
  case DType::Bool:
    return "bool";
  case DType::Float16:
    return "f16";
  case DType::Double:
    return "f64";
  case DType::BFloat16:
    return "bf16";
  }
  return "?";
}

std::size_t dtypeSize(DType t) {
  switch (t) {
  case DType::Uint8:
  case DType::Int8:
  case DType::Bool:
    return 1;
  case DType::Float16:
  case DType::BFloat16:
    return 2;
  case DType::Float:
  case DType::Int32:
    return 4;
  case DType::Int64:
  case DType::Double:
    return 8;
  }
  throw std::logic_error("dtypeSize: invalid DType value");
}

bool isFloatDType(DType t) {
  return t == DType::Float || t == DType::Float16 || t == DType::BFloat16 || t == DType::Double;
}

bool isIntegerDType(DType t) {
  return t == DType::Uint8 || t == DType::Int8 || t == DType::Int32 || t == DType::Int64;
}

} // namespace dynqual
