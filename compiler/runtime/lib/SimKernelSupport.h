// Operand access, checks and loops shared by the sim kernel families (internal to dq_runtime).
// Floats compute in double and round once to the output dtype; integers compute in int64 and
// wrap to the output width.
#pragma once

#include "KernelValidate.h"
#include "SimKernels.h"

#include "dq/runtime/Error.h"
#include "dq/runtime/Float16.h"
#include "dq/runtime/HostTensor.h"
#include "dq/runtime/SimDevice.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

namespace dq::rt::sim {

/// A sim kernel: checks its operands and attributes, then computes outs from ins.
using KernelFn = std::function<void(std::vector<Operand> &, std::vector<Operand> &, const KernelArgs &)>;
/// Kernels by Program.h name.
using KernelTable = std::map<std::string, KernelFn>;

/// Registers the elementwise kernels (binary and unary tables, where, cast).
void addElementwiseKernels(KernelTable &table);
/// The float function of binary elementwise kernel `name` (a, b in double -> double, before
/// rounding to the out dtype); nullptr for an unknown name, a bool-valued or integer-only kernel.
double (*floatBinaryFn(const std::string &name))(double, double);
/// The float function of unary elementwise kernel `name`; nullptr as floatBinaryFn.
double (*floatUnaryFn(const std::string &name))(double);
/// Registers "fused_elementwise" (SimFusedKernels.cpp).
void addFusedKernels(KernelTable &table);
/// Registers the data-movement kernels (expand, slice, transpose, concat, gather, range,
/// range_length, fill, trilu, gather_elements, gather_nd).
void addDataKernels(KernelTable &table);
/// Registers matmul, softmax, log_softmax, layer_norm, the reductions and cumsum.
void addMathKernels(KernelTable &table);
/// Registers arg_max, arg_min and one_hot.
void addIndexKernels(KernelTable &table);
/// Registers the onnxruntime contrib kernels (SimContribKernels.cpp): matmul_nbits,
/// simplified_layer_norm, skip_simplified_layer_norm, rotary_embedding, group_query_attention.
void addContribKernels(KernelTable &table);

/// True when an accumulating kernel on dtype `t` rounds every step to fp32: the ElementType
/// precision mode (SimDevice.h) and an f32, f16 or bf16 operand.
inline bool fp32Steps(DType t) {
  return currentPrecision() == SimPrecision::ElementType && (t == DType::F32 || t == DType::F16 || t == DType::BF16);
}

/// One arithmetic step of an accumulating kernel: rounded to fp32 when `f32`, else left in double.
/// A double result of +, -, *, / or sqrt on fp32 values, rounded once to fp32, is the correctly
/// rounded fp32 result (double has more than 2 * 24 + 2 bits), so this is fp32 arithmetic.
inline double step(bool f32, double v) { return f32 ? static_cast<double>(static_cast<float>(v)) : v; }

// The kernel contract shared with the hip device: dtype sets, checks and their messages.
inline const std::string &operandLabel(const Operand &o) { return o.label; }
// Every name of the contract (KernelContract.h, KernelValidate.h); sim names hide any alike.
using namespace kernel;

inline void checkReadable(const Operand &o, int64_t e) {
  const uint8_t *st = o.state + e * static_cast<int64_t>(o.elementSize);
  for (size_t k = 0; k < o.elementSize; ++k) {
    if (st[k] == SimDevice::kWritten) continue;
    throw RuntimeError(std::string(st[k] == SimDevice::kDead ? "use after free: " : "read of never-written memory: ") +
                       o.label + " element " + std::to_string(e) +
                       (st[k] == SimDevice::kDead ? " lies in a deallocated region" : " was never written"));
  }
}

inline uint8_t *writable(Operand &o, int64_t e) {
  uint8_t *st = o.state + e * static_cast<int64_t>(o.elementSize);
  for (size_t k = 0; k < o.elementSize; ++k) {
    if (st[k] == SimDevice::kDead)
      throw RuntimeError("use after free: " + o.label + " element " + std::to_string(e) +
                         " lies in a deallocated region");
    st[k] = SimDevice::kWritten;
  }
  return o.data + e * static_cast<int64_t>(o.elementSize);
}

template <typename T> T rawLoad(const Operand &o, int64_t e) {
  checkReadable(o, e);
  T v;
  std::memcpy(&v, o.data + e * static_cast<int64_t>(o.elementSize), sizeof(T));
  return v;
}

template <typename T> void rawStore(Operand &o, int64_t e, T v) { std::memcpy(writable(o, e), &v, sizeof(T)); }

inline double loadF(const Operand &o, int64_t e) {
  switch (o.dtype) {
  case DType::F32:
    return rawLoad<float>(o, e);
  case DType::F64:
    return rawLoad<double>(o, e);
  case DType::F16:
    return halfToFloat(rawLoad<uint16_t>(o, e));
  case DType::BF16:
    return bf16ToFloat(rawLoad<uint16_t>(o, e));
  default:
    return static_cast<double>(0);
  }
}

inline int64_t loadI(const Operand &o, int64_t e) {
  switch (o.dtype) {
  case DType::I8:
    return rawLoad<int8_t>(o, e);
  case DType::U8:
    return rawLoad<uint8_t>(o, e);
  case DType::I32:
    return rawLoad<int32_t>(o, e);
  case DType::I64:
    return rawLoad<int64_t>(o, e);
  case DType::Bool:
    return rawLoad<uint8_t>(o, e) != 0;
  default:
    return 0;
  }
}

inline void storeF(Operand &o, int64_t e, double v) {
  switch (o.dtype) {
  case DType::F32:
    rawStore<float>(o, e, static_cast<float>(v));
    break;
  case DType::F64:
    rawStore<double>(o, e, v);
    break;
  case DType::F16:
    rawStore<uint16_t>(o, e, doubleToHalf(v));
    break;
  case DType::BF16:
    rawStore<uint16_t>(o, e, doubleToBF16(v));
    break;
  default:
    break;
  }
}

// Two's-complement wrap to the output width (numpy/ONNX integer semantics).
inline void storeI(Operand &o, int64_t e, int64_t v) {
  switch (o.dtype) {
  case DType::I8:
    rawStore<int8_t>(o, e, static_cast<int8_t>(v));
    break;
  case DType::U8:
    rawStore<uint8_t>(o, e, static_cast<uint8_t>(v));
    break;
  case DType::I32:
    rawStore<int32_t>(o, e, static_cast<int32_t>(v));
    break;
  case DType::I64:
    rawStore<int64_t>(o, e, v);
    break;
  case DType::Bool:
    rawStore<uint8_t>(o, e, v != 0 ? 1 : 0);
    break;
  default:
    break;
  }
}

// ONNX Cast from a float value: to bool is x != 0; to an integer truncates toward zero. NaN and
// out-of-range values are undefined in ONNX; here they become 0 and saturate (no UB).
inline int64_t floatToInteger(double v, DType to) {
  if (std::isnan(v)) return 0;
  double t = std::trunc(v);
  double lo, hi;
  switch (to) {
  case DType::I8:
    lo = -128;
    hi = 127;
    break;
  case DType::U8:
    lo = 0;
    hi = 255;
    break;
  case DType::I32:
    lo = -2147483648.0;
    hi = 2147483647.0;
    break;
  default:
    lo = -9223372036854775808.0;
    hi = 9223372036854775807.0;
    break;
  }
  if (t <= lo) return to == DType::I64 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(lo);
  if (t >= hi) return to == DType::I64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi);
  return static_cast<int64_t>(t);
}

inline void copyElement(Operand &dst, int64_t de, const Operand &src, int64_t se) {
  checkReadable(src, se);
  std::memmove(writable(dst, de), src.data + se * static_cast<int64_t>(src.elementSize), src.elementSize);
}

inline int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

// Calls f(index) for every index of `shape` in row-major order.
template <typename F> void forEachIndex(const std::vector<int64_t> &shape, F &&f) {
  int64_t n = numElements(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Element offset of `o` at out-index `idx` under numpy broadcasting (ranks right-aligned).
inline int64_t at(const Operand &o, const std::vector<int64_t> &idx) {
  int64_t off = o.offset;
  size_t shift = idx.size() - o.sizes.size();
  for (size_t d = 0; d < o.sizes.size(); ++d)
    if (o.sizes[d] != 1) off += idx[d + shift] * o.strides[d];
  return off;
}

// Any element type read as a double (integers and bool converted exactly where they fit).
inline double loadD(const Operand &o, int64_t e) {
  return isFloat(o.dtype) ? loadF(o, e) : static_cast<double>(loadI(o, e));
}

inline void storeZero(Operand &o, int64_t e) {
  if (isFloat(o.dtype))
    storeF(o, e, 0.0);
  else
    storeI(o, e, 0);
}

// Stores a double into any dtype: floats round once, integers truncate toward zero (ONNX Cast).
inline void storeD(Operand &o, int64_t e, double v) {
  if (isFloat(o.dtype))
    storeF(o, e, v);
  else if (o.dtype == DType::Bool)
    storeI(o, e, v != 0.0);
  else
    storeI(o, e, floatToInteger(v, o.dtype));
}

inline int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// NaN-propagating max/min (numpy maximum/minimum, the ONNX reference semantics).
inline double fmaxNan(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b); }
inline double fminNan(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::min(a, b); }

// Element offset of `o` at `idx` with dim `axis` replaced by j (same rank as o).
inline int64_t alongAxis(const Operand &o, const std::vector<int64_t> &idx, size_t axis, int64_t j) {
  return at(o, idx) + (o.sizes[axis] == 1 ? 0 : (j - idx[axis]) * o.strides[axis]);
}

// Calls f(idx) once per line along `axis` of `shape`, with idx[axis] = 0.
template <typename F> void forEachLine(const std::vector<int64_t> &shape, size_t axis, F &&f) {
  std::vector<int64_t> outer = shape;
  outer[axis] = 1;
  forEachIndex(outer, f);
}

// Wraps a negative index and checks it against a dim of size n.
inline int64_t checkIndex(int64_t k, int64_t n, size_t axis) {
  if (k < -n || k >= n)
    throw RuntimeError("index " + std::to_string(k) + " out of range for axis " + std::to_string(axis) + " of size " +
                       std::to_string(n));
  return k < 0 ? k + n : k;
}

} // namespace dq::rt::sim
