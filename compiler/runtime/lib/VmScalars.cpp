// The VM's host scalar instructions: integer arithmetic on scalar registers (ScalarBinary, Dim)
// and the element loads and stores between scalar registers and buffers (ReadbackScalar,
// LoadScalar, StoreScalar).
#include "Vm.h"

#include "dq/runtime/Float16.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace dq::rt::vm {
namespace {

// Element bytes -> int64 as ReadbackScalar/LoadScalar define it (bool 0/1, floats truncated).
int64_t toIndex(const uint8_t *bytes, DType t) {
  double d = 0;
  switch (t) {
  case DType::I8:
    return static_cast<int8_t>(bytes[0]);
  case DType::U8:
    return bytes[0];
  case DType::Bool:
    return bytes[0] != 0;
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, bytes, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, bytes, 8);
    return v;
  }
  case DType::F32: {
    float f;
    std::memcpy(&f, bytes, 4);
    d = f;
    break;
  }
  case DType::F64:
    std::memcpy(&d, bytes, 8);
    break;
  case DType::F16: {
    uint16_t h;
    std::memcpy(&h, bytes, 2);
    d = halfToFloat(h);
    break;
  }
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, bytes, 2);
    d = bf16ToFloat(h);
    break;
  }
  }
  if (!std::isfinite(d) || std::fabs(d) >= 9.2e18)
    throw RuntimeError("cannot convert the value " + std::to_string(d) + " to an int64 scalar");
  return static_cast<int64_t>(std::trunc(d));
}

// int64 -> element bytes for StoreScalar (integers wrap, bool is v != 0, floats round).
std::vector<uint8_t> fromIndex(int64_t v, DType t) {
  std::vector<uint8_t> out(dtypeSize(t));
  switch (t) {
  case DType::I8:
  case DType::U8:
    out[0] = static_cast<uint8_t>(v);
    break;
  case DType::Bool:
    out[0] = v != 0;
    break;
  case DType::I32: {
    int32_t x = static_cast<int32_t>(v);
    std::memcpy(out.data(), &x, 4);
    break;
  }
  case DType::I64:
    std::memcpy(out.data(), &v, 8);
    break;
  case DType::F32: {
    float x = static_cast<float>(v);
    std::memcpy(out.data(), &x, 4);
    break;
  }
  case DType::F64: {
    double x = static_cast<double>(v);
    std::memcpy(out.data(), &x, 8);
    break;
  }
  case DType::F16: {
    uint16_t x = doubleToHalf(static_cast<double>(v));
    std::memcpy(out.data(), &x, 2);
    break;
  }
  case DType::BF16: {
    uint16_t x = doubleToBF16(static_cast<double>(v));
    std::memcpy(out.data(), &x, 2);
    break;
  }
  }
  return out;
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t ceilDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

} // namespace

void Vm::scalarBinary(const Instr &in) {
  const int64_t a = sreg(in.s[1]), b = sreg(in.s[2]);
  const std::string &n = in.name;
  int64_t r = 0;
  auto overflow = [&]() -> int64_t {
    throw RuntimeError("scalar " + n + "(" + std::to_string(a) + ", " + std::to_string(b) + ") overflows int64");
  };
  if (n == "divsi" || n == "floordiv" || n == "ceildiv" || n == "remsi") {
    if (b == 0) throw RuntimeError("scalar " + n + "(" + std::to_string(a) + ", 0): division by zero");
    if (a == std::numeric_limits<int64_t>::min() && b == -1) {
      if (n != "remsi") overflow();
      r = 0;
    } else if (n == "divsi")
      r = a / b;
    else if (n == "floordiv")
      r = floorDiv(a, b);
    else if (n == "ceildiv")
      r = ceilDiv(a, b);
    else
      r = a % b;
  } else if (n == "add") {
    if (__builtin_add_overflow(a, b, &r)) overflow();
  } else if (n == "sub") {
    if (__builtin_sub_overflow(a, b, &r)) overflow();
  } else if (n == "mul") {
    if (__builtin_mul_overflow(a, b, &r)) overflow();
  } else if (n == "min")
    r = std::min(a, b);
  else if (n == "max")
    r = std::max(a, b);
  else if (n == "eq")
    r = a == b;
  else if (n == "ne")
    r = a != b;
  else if (n == "lt")
    r = a < b;
  else if (n == "le")
    r = a <= b;
  else if (n == "gt")
    r = a > b;
  else if (n == "ge")
    r = a >= b;
  else if (n == "and")
    r = a & b;
  else if (n == "or")
    r = a | b;
  else
    throw RuntimeError("unknown scalar operation '" + n + "'");
  setS(in.s[0], r);
}

void Vm::dim(const Instr &in) {
  const BufferView &v = breg(in.b[0]).view;
  if (in.imm[0] < 0 || static_cast<size_t>(in.imm[0]) >= v.sizes.size())
    throw RuntimeError("axis " + std::to_string(in.imm[0]) + " out of range for a rank-" +
                       std::to_string(v.sizes.size()) + " view");
  setS(in.s[0], v.sizes[static_cast<size_t>(in.imm[0])]);
}

void Vm::loadScalar(const Instr &in) {
  const BufferView &v = breg(in.b[0]).view;
  const uint64_t off = elementByteOffset(v, scalars(in.s, 1));
  uint8_t bytes[8];
  const bool unsynchronized = in.op == Opcode::ReadbackScalar && !in.imm.empty() && in.imm[0] == 1;
  if (unsynchronized) {
    // Staged through host-mapped memory with no synchronization before the host reads it.
    const uint64_t es = dtypeSize(v.dtype);
    BufferHandle staging = allocOwned(MemSpace::HostMapped, es, AllocPurpose::Buffer);
    dev_.memcpy(staging, 0, v.buffer, off, es);
    dev_.hostLoad(bytes, staging, 0, es);
    freeOwned(staging);
  } else if (in.op == Opcode::ReadbackScalar)
    dev_.readback(bytes, v.buffer, off, dtypeSize(v.dtype));
  else
    dev_.hostLoad(bytes, v.buffer, off, dtypeSize(v.dtype));
  setS(in.s[0], toIndex(bytes, v.dtype));
}

void Vm::storeScalar(const Instr &in) {
  const BufferView &v = breg(in.b[0]).view;
  const uint64_t off = elementByteOffset(v, scalars(in.s, 1));
  std::vector<uint8_t> bytes = fromIndex(sreg(in.s[0]), v.dtype);
  dev_.hostStore(v.buffer, off, bytes.data(), bytes.size());
}

} // namespace dq::rt::vm
