// Element type helpers for the program artifact.
#include "dq/runtime/Program.h"

namespace dq::rt {

size_t dtypeSize(DType t) {
  switch (t) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::U8:
  case DType::I8:
  case DType::Bool:
    return 1;
  case DType::I64:
  case DType::F64:
    return 8;
  case DType::F16:
  case DType::BF16:
    return 2;
  }
  return 0;
}

std::string dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::U8:
    return "u8";
  case DType::I8:
    return "i8";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::Bool:
    return "bool";
  case DType::F16:
    return "f16";
  case DType::F64:
    return "f64";
  case DType::BF16:
    return "bf16";
  }
  return "dtype<" + std::to_string(static_cast<int>(t)) + ">";
}

} // namespace dq::rt
