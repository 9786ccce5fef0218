// CPU implementations of the Program.h kernels for the sim device. Floats compute in double and
// round once to the output dtype; integers compute in int64 and wrap to the output width.
#include "SimKernels.h"
#include "SimDataDependentKernels.h"

#include "dq/runtime/Error.h"
#include "dq/runtime/Float16.h"
#include "dq/runtime/HostTensor.h"
#include "dq/runtime/SimDevice.h"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

namespace dq::rt::sim {
namespace {

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}

// Sets of dtypes a kernel operand admits (the ONNX type constraints of the op it implements).
using TypeSet = uint32_t;
constexpr TypeSet bit(DType t) { return TypeSet{1} << static_cast<unsigned>(t); }
constexpr TypeSet kFloatTypes = bit(DType::F32) | bit(DType::F64) | bit(DType::F16) | bit(DType::BF16);
constexpr TypeSet kNumericTypes =
    kFloatTypes | bit(DType::I8) | bit(DType::U8) | bit(DType::I32) | bit(DType::I64);
constexpr TypeSet kSignedTypes = kFloatTypes | bit(DType::I8) | bit(DType::I32) | bit(DType::I64);
/// Floats, i32 and i64 (ONNX MatMul, ReduceSum, ReduceMean, CumSum, the base of Pow).
constexpr TypeSet kWideTypes = kFloatTypes | bit(DType::I32) | bit(DType::I64);
constexpr TypeSet kBoolTypes = bit(DType::Bool);
constexpr TypeSet kAllTypes = kNumericTypes | kBoolTypes;
constexpr TypeSet kIndexTypes = bit(DType::I32) | bit(DType::I64);

std::string typeSetNames(TypeSet set) {
  std::string s;
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8, DType::U8,
                  DType::I32, DType::I64, DType::Bool})
    if (set & bit(t)) s += (s.empty() ? "" : " ") + dtypeName(t);
  return s;
}

[[noreturn]] void fail(const std::string &kernel, const std::string &problem) {
  throw RuntimeError("kernel '" + kernel + "': " + problem);
}

void checkReadable(const Operand &o, int64_t e) {
  const uint8_t *st = o.state + e * static_cast<int64_t>(o.elementSize);
  for (size_t k = 0; k < o.elementSize; ++k) {
    if (st[k] == SimDevice::kWritten) continue;
    throw RuntimeError(std::string(st[k] == SimDevice::kDead ? "use after free: "
                                                             : "read of never-written memory: ") +
                       o.label + " element " + std::to_string(e) +
                       (st[k] == SimDevice::kDead ? " lies in a deallocated region"
                                                  : " was never written"));
  }
}

uint8_t *writable(Operand &o, int64_t e) {
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

template <typename T> void rawStore(Operand &o, int64_t e, T v) {
  std::memcpy(writable(o, e), &v, sizeof(T));
}

double loadF(const Operand &o, int64_t e) {
  switch (o.dtype) {
  case DType::F32: return rawLoad<float>(o, e);
  case DType::F64: return rawLoad<double>(o, e);
  case DType::F16: return halfToFloat(rawLoad<uint16_t>(o, e));
  case DType::BF16: return bf16ToFloat(rawLoad<uint16_t>(o, e));
  default: return static_cast<double>(0);
  }
}

int64_t loadI(const Operand &o, int64_t e) {
  switch (o.dtype) {
  case DType::I8: return rawLoad<int8_t>(o, e);
  case DType::U8: return rawLoad<uint8_t>(o, e);
  case DType::I32: return rawLoad<int32_t>(o, e);
  case DType::I64: return rawLoad<int64_t>(o, e);
  case DType::Bool: return rawLoad<uint8_t>(o, e) != 0;
  default: return 0;
  }
}

void storeF(Operand &o, int64_t e, double v) {
  switch (o.dtype) {
  case DType::F32: rawStore<float>(o, e, static_cast<float>(v)); break;
  case DType::F64: rawStore<double>(o, e, v); break;
  case DType::F16: rawStore<uint16_t>(o, e, doubleToHalf(v)); break;
  case DType::BF16: rawStore<uint16_t>(o, e, doubleToBF16(v)); break;
  default: break;
  }
}

// Two's-complement wrap to the output width (numpy/ONNX integer semantics).
void storeI(Operand &o, int64_t e, int64_t v) {
  switch (o.dtype) {
  case DType::I8: rawStore<int8_t>(o, e, static_cast<int8_t>(v)); break;
  case DType::U8: rawStore<uint8_t>(o, e, static_cast<uint8_t>(v)); break;
  case DType::I32: rawStore<int32_t>(o, e, static_cast<int32_t>(v)); break;
  case DType::I64: rawStore<int64_t>(o, e, v); break;
  case DType::Bool: rawStore<uint8_t>(o, e, v != 0 ? 1 : 0); break;
  default: break;
  }
}

// ONNX Cast from a float value: to bool is x != 0; to an integer truncates toward zero. NaN and
// out-of-range values are undefined in ONNX; here they become 0 and saturate (no UB).
int64_t floatToInteger(double v, DType to) {
  if (std::isnan(v)) return 0;
  double t = std::trunc(v);
  double lo, hi;
  switch (to) {
  case DType::I8: lo = -128; hi = 127; break;
  case DType::U8: lo = 0; hi = 255; break;
  case DType::I32: lo = -2147483648.0; hi = 2147483647.0; break;
  default: lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
  }
  if (t <= lo) return to == DType::I64 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(lo);
  if (t >= hi) return to == DType::I64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi);
  return static_cast<int64_t>(t);
}

void copyElement(Operand &dst, int64_t de, const Operand &src, int64_t se) {
  checkReadable(src, se);
  std::memmove(writable(dst, de), src.data + se * static_cast<int64_t>(src.elementSize),
              src.elementSize);
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
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
int64_t at(const Operand &o, const std::vector<int64_t> &idx) {
  int64_t off = o.offset;
  size_t shift = idx.size() - o.sizes.size();
  for (size_t d = 0; d < o.sizes.size(); ++d)
    if (o.sizes[d] != 1) off += idx[d + shift] * o.strides[d];
  return off;
}

void checkBroadcast(const std::string &kernel, const Operand &in, const Operand &out) {
  bool ok = in.sizes.size() <= out.sizes.size();
  for (size_t d = 0; ok && d < in.sizes.size(); ++d) {
    int64_t o = out.sizes[d + out.sizes.size() - in.sizes.size()];
    ok = in.sizes[d] == 1 || in.sizes[d] == o;
  }
  if (!ok)
    fail(kernel, in.label + " shape " + formatDims(in.sizes) + " does not broadcast to " +
                     out.label + " shape " + formatDims(out.sizes));
}

void checkArity(const std::string &kernel, const std::vector<Operand> &ins,
                const std::vector<Operand> &outs, size_t nIns) {
  if (ins.size() != nIns || outs.size() != 1)
    fail(kernel, "expects " + std::to_string(nIns) + " inputs and 1 output, got " +
                     std::to_string(ins.size()) + " and " + std::to_string(outs.size()));
}

void checkSameDType(const std::string &kernel, const Operand &a, const Operand &b) {
  if (a.dtype != b.dtype)
    fail(kernel, a.label + " is " + dtypeName(a.dtype) + " but " + b.label + " is " +
                     dtypeName(b.dtype));
}

void checkDType(const std::string &kernel, const Operand &a, DType t) {
  if (a.dtype != t)
    fail(kernel, a.label + " is " + dtypeName(a.dtype) + ", expected " + dtypeName(t));
}

void checkAdmits(const std::string &kernel, const Operand &a, TypeSet set) {
  if (!(bit(a.dtype) & set))
    fail(kernel, "unsupported: " + a.label + " is " + dtypeName(a.dtype) + "; '" + kernel +
                     "' admits " + typeSetNames(set));
}

void checkShape(const std::string &kernel, const Operand &o, const std::vector<int64_t> &shape) {
  if (o.sizes != shape)
    fail(kernel, o.label + " shape " + formatDims(o.sizes) + ", expected " + formatDims(shape));
}

// Any element type read as a double (integers and bool converted exactly where they fit).
double loadD(const Operand &o, int64_t e) {
  return isFloat(o.dtype) ? loadF(o, e) : static_cast<double>(loadI(o, e));
}

void storeZero(Operand &o, int64_t e) {
  if (isFloat(o.dtype)) storeF(o, e, 0.0);
  else storeI(o, e, 0);
}

// Stores a double into any dtype: floats round once, integers truncate toward zero (ONNX Cast).
void storeD(Operand &o, int64_t e, double v) {
  if (isFloat(o.dtype)) storeF(o, e, v);
  else if (o.dtype == DType::Bool) storeI(o, e, v != 0.0);
  else storeI(o, e, floatToInteger(v, o.dtype));
}

// ---- elementwise ops: add a line to a table to add one --------------------------------------

using FloatFn = double (*)(double, double);
using IntFn = int64_t (*)(int64_t, int64_t);
struct Binary {
  const char *name;
  FloatFn f;         ///< used when either input is a float
  IntFn i;           ///< used when both inputs are integers or bool
  bool boolResult;   ///< output is bool (comparisons) instead of the input dtype
  TypeSet types;     ///< dtypes admitted for in 0 (and in 1 unless `exponent` is set)
  TypeSet exponent;  ///< non-zero: in 1 may have its own dtype from this set (Pow's T1)
};

int64_t wrapAdd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wrapSub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t wrapMul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
int64_t truncDiv(int64_t a, int64_t b) {
  if (b == 0) throw RuntimeError("integer division by zero");
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return a;  // wraps
  return a / b;
}

// Integer power: exact with wrap-around for e >= 0; for e < 0 the real result truncated toward
// zero (only |a| = 1 gives a non-zero value), and 0 to a negative power is an error.
int64_t intPow(int64_t a, int64_t e) {
  if (e < 0) {
    if (a == 0) throw RuntimeError("integer 0 raised to the negative power " + std::to_string(e));
    if (a == 1) return 1;
    if (a == -1) return (e % 2 == 0) ? 1 : -1;
    return 0;
  }
  int64_t r = 1;
  for (; e > 0; e >>= 1) {
    if (e & 1) r = wrapMul(r, a);
    a = wrapMul(a, a);
  }
  return r;
}

// NaN-propagating max/min (numpy maximum/minimum, the ONNX reference semantics).
double fmaxNan(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b); }
double fminNan(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::min(a, b); }

const Binary kBinary[] = {
    {"add", [](double a, double b) { return a + b; }, wrapAdd, false, kAllTypes, 0},
    {"sub", [](double a, double b) { return a - b; }, wrapSub, false, kAllTypes, 0},
    {"mul", [](double a, double b) { return a * b; }, wrapMul, false, kAllTypes, 0},
    {"div", [](double a, double b) { return a / b; }, truncDiv, false, kAllTypes, 0},
    {"equal", [](double a, double b) { return a == b ? 1.0 : 0.0; }, [](int64_t a, int64_t b) -> int64_t { return a == b; }, true, kAllTypes, 0},
    {"pow", [](double a, double b) { return std::pow(a, b); }, intPow, false, kWideTypes, kNumericTypes},
    {"max", fmaxNan, [](int64_t a, int64_t b) { return std::max(a, b); }, false, kNumericTypes, 0},
    {"min", fminNan, [](int64_t a, int64_t b) { return std::min(a, b); }, false, kNumericTypes, 0},
    {"and", nullptr, [](int64_t a, int64_t b) -> int64_t { return a != 0 && b != 0; }, false, kBoolTypes, 0},
    {"or", nullptr, [](int64_t a, int64_t b) -> int64_t { return a != 0 || b != 0; }, false, kBoolTypes, 0},
    {"less", [](double a, double b) { return a < b ? 1.0 : 0.0; }, [](int64_t a, int64_t b) -> int64_t { return a < b; }, true, kNumericTypes, 0},
    {"less_equal", [](double a, double b) { return a <= b ? 1.0 : 0.0; }, [](int64_t a, int64_t b) -> int64_t { return a <= b; }, true, kNumericTypes, 0},
    {"greater", [](double a, double b) { return a > b ? 1.0 : 0.0; }, [](int64_t a, int64_t b) -> int64_t { return a > b; }, true, kNumericTypes, 0},
    {"greater_equal", [](double a, double b) { return a >= b ? 1.0 : 0.0; }, [](int64_t a, int64_t b) -> int64_t { return a >= b; }, true, kNumericTypes, 0},
};

void runBinary(const Binary &op, std::vector<Operand> &ins, std::vector<Operand> &outs) {
  checkArity(op.name, ins, outs, 2);
  Operand &out = outs[0];
  checkAdmits(op.name, ins[0], op.types);
  if (op.exponent) checkAdmits(op.name, ins[1], op.exponent);
  else checkSameDType(op.name, ins[0], ins[1]);
  if (op.boolResult) checkDType(op.name, out, DType::Bool);
  else checkSameDType(op.name, ins[0], out);
  checkBroadcast(op.name, ins[0], out);
  checkBroadcast(op.name, ins[1], out);
  const bool fl = isFloat(ins[0].dtype) || isFloat(ins[1].dtype);
  try {
    forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
      int64_t ea = at(ins[0], idx), eb = at(ins[1], idx), eo = at(out, idx);
      if (fl) storeD(out, eo, op.f(loadD(ins[0], ea), loadD(ins[1], eb)));
      else storeI(out, eo, op.i(loadI(ins[0], ea), loadI(ins[1], eb)));
    });
  } catch (const RuntimeError &e) {
    fail(op.name, e.what());
  }
}

using FloatFn1 = double (*)(double);
using IntFn1 = int64_t (*)(int64_t);
struct Unary {
  const char *name;
  FloatFn1 f;       ///< float inputs; also integer inputs when `i` is null (result truncated)
  IntFn1 i;         ///< integer and bool inputs
  bool boolResult;  ///< output is bool instead of the input dtype
  TypeSet types;    ///< dtypes admitted for the input
};

const Unary kUnary[] = {
    {"neg", [](double x) { return -x; }, [](int64_t x) { return wrapSub(0, x); }, false, kSignedTypes},
    {"sqrt", [](double x) { return std::sqrt(x); }, nullptr, false, kFloatTypes},
    {"reciprocal", [](double x) { return 1.0 / x; }, nullptr, false, kFloatTypes},
    {"sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, nullptr, false, kFloatTypes},
    {"tanh", [](double x) { return std::tanh(x); }, nullptr, false, kFloatTypes},
    {"erf", [](double x) { return std::erf(x); }, nullptr, false, kNumericTypes},
    {"exp", [](double x) { return std::exp(x); }, nullptr, false, kFloatTypes},
    {"cos", [](double x) { return std::cos(x); }, nullptr, false, kFloatTypes},
    {"sin", [](double x) { return std::sin(x); }, nullptr, false, kFloatTypes},
    {"not", nullptr, [](int64_t x) -> int64_t { return x == 0; }, false, kBoolTypes},
    {"isnan", [](double x) { return std::isnan(x) ? 1.0 : 0.0; }, nullptr, true, kFloatTypes},
};

void runUnary(const Unary &op, std::vector<Operand> &ins, std::vector<Operand> &outs) {
  checkArity(op.name, ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkAdmits(op.name, in, op.types);
  if (op.boolResult) checkDType(op.name, out, DType::Bool);
  else checkSameDType(op.name, in, out);
  checkBroadcast(op.name, in, out);
  const bool viaFloat = isFloat(in.dtype) || !op.i;
  try {
    forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
      int64_t ei = at(in, idx), eo = at(out, idx);
      if (viaFloat) storeD(out, eo, op.f(loadD(in, ei)));
      else storeI(out, eo, op.i(loadI(in, ei)));
    });
  } catch (const RuntimeError &e) {
    fail(op.name, e.what());
  }
}

// ---- data movement and the rest -----------------------------------------------------------------

void kWhere(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  checkArity("where", ins, outs, 3);
  Operand &out = outs[0];
  checkDType("where", ins[0], DType::Bool);
  checkSameDType("where", ins[1], out);
  checkSameDType("where", ins[2], out);
  for (const Operand &in : ins) checkBroadcast("where", in, out);
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    bool c = loadI(ins[0], at(ins[0], idx)) != 0;
    const Operand &src = c ? ins[1] : ins[2];
    copyElement(out, at(out, idx), src, at(src, idx));
  });
}

void kCast(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  checkArity("cast", ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkBroadcast("cast", in, out);
  const bool fromFloat = isFloat(in.dtype), toFloat = isFloat(out.dtype);
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    int64_t ei = at(in, idx), eo = at(out, idx);
    if (in.dtype == out.dtype) {
      copyElement(out, eo, in, ei);
    } else if (fromFloat) {
      double v = loadF(in, ei);
      if (toFloat) storeF(out, eo, v);
      else if (out.dtype == DType::Bool) storeI(out, eo, v != 0.0);
      else storeI(out, eo, floatToInteger(v, out.dtype));
    } else {
      int64_t v = loadI(in, ei);
      if (out.dtype == DType::F32) rawStore<float>(out, eo, static_cast<float>(v));
      else if (toFloat) storeF(out, eo, static_cast<double>(v));
      else storeI(out, eo, v);
    }
  });
}

void kExpand(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  checkArity("expand", ins, outs, 1);
  checkSameDType("expand", ins[0], outs[0]);
  checkBroadcast("expand", ins[0], outs[0]);
  forEachIndex(outs[0].sizes, [&](const std::vector<int64_t> &idx) {
    copyElement(outs[0], at(outs[0], idx), ins[0], at(ins[0], idx));
  });
}

void kSlice(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("slice", ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkSameDType("slice", in, out);
  const size_t r = out.sizes.size();
  if (in.sizes.size() != r || args.scalars.size() != 2 * r)
    fail("slice", "expects equal ranks and " + std::to_string(2 * r) + " scalars (starts, steps)");
  for (size_t d = 0; d < r; ++d) {
    if (out.sizes[d] == 0) return;
    int64_t first = args.scalars[d], step = args.scalars[r + d];
    int64_t last = first + (out.sizes[d] - 1) * step;
    if (first < 0 || first >= in.sizes[d] || last < 0 || last >= in.sizes[d])
      fail("slice", "axis " + std::to_string(d) + " reads indices " + std::to_string(first) +
                        ".." + std::to_string(last) + " of a dim of size " +
                        std::to_string(in.sizes[d]));
  }
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    int64_t e = in.offset;
    for (size_t d = 0; d < r; ++d) e += (args.scalars[d] + idx[d] * args.scalars[r + d]) * in.strides[d];
    copyElement(out, at(out, idx), in, e);
  });
}

void kTranspose(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("transpose", ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkSameDType("transpose", in, out);
  const size_t r = in.sizes.size();
  std::vector<bool> seen(r, false);
  bool ok = args.attrs.size() == r && out.sizes.size() == r;
  for (size_t j = 0; ok && j < r; ++j) {
    int64_t p = args.attrs[j];
    ok = p >= 0 && static_cast<size_t>(p) < r && !seen[static_cast<size_t>(p)] &&
         out.sizes[j] == in.sizes[static_cast<size_t>(p)];
    if (ok) seen[static_cast<size_t>(p)] = true;
  }
  if (!ok)
    fail("transpose", "perm " + formatDims(args.attrs) + " does not map " + formatDims(in.sizes) +
                          " to " + formatDims(out.sizes));
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    int64_t e = in.offset;
    for (size_t j = 0; j < r; ++j) e += idx[j] * in.strides[static_cast<size_t>(args.attrs[j])];
    copyElement(out, at(out, idx), in, e);
  });
}

size_t normalizeAxis(const std::string &kernel, const KernelArgs &args, size_t rank) {
  if (args.attrs.empty()) fail(kernel, "missing axis attribute");
  int64_t a = args.attrs[0];
  if (a < 0) a += static_cast<int64_t>(rank);
  if (a < 0 || static_cast<size_t>(a) >= rank)
    fail(kernel, "axis " + std::to_string(args.attrs[0]) + " out of range for rank " +
                     std::to_string(rank));
  return static_cast<size_t>(a);
}

void kConcat(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  if (ins.empty() || outs.size() != 1) fail("concat", "expects at least 1 input and 1 output");
  Operand &out = outs[0];
  const size_t axis = normalizeAxis("concat", args, out.sizes.size());
  int64_t total = 0;
  for (const Operand &in : ins) {
    checkSameDType("concat", in, out);
    bool ok = in.sizes.size() == out.sizes.size();
    for (size_t d = 0; ok && d < in.sizes.size(); ++d) ok = d == axis || in.sizes[d] == out.sizes[d];
    if (!ok)
      fail("concat", in.label + " shape " + formatDims(in.sizes) + " does not fit " +
                         formatDims(out.sizes) + " along axis " + std::to_string(axis));
    total += in.sizes[axis];
  }
  if (total != out.sizes[axis])
    fail("concat", "inputs sum to " + std::to_string(total) + " along axis " +
                       std::to_string(axis) + ", output has " + std::to_string(out.sizes[axis]));
  int64_t base = 0;
  for (const Operand &in : ins) {
    forEachIndex(in.sizes, [&](const std::vector<int64_t> &idx) {
      std::vector<int64_t> o = idx;
      o[axis] += base;
      copyElement(out, at(out, o), in, at(in, idx));
    });
    base += in.sizes[axis];
  }
}

void kGather(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("gather", ins, outs, 2);
  const Operand &data = ins[0], &indices = ins[1];
  Operand &out = outs[0];
  checkSameDType("gather", data, out);
  if (indices.dtype != DType::I32 && indices.dtype != DType::I64)
    fail("gather", "indices must be i32 or i64, got " + dtypeName(indices.dtype));
  const size_t axis = normalizeAxis("gather", args, data.sizes.size());
  std::vector<int64_t> expect(data.sizes.begin(), data.sizes.begin() + static_cast<long>(axis));
  expect.insert(expect.end(), indices.sizes.begin(), indices.sizes.end());
  expect.insert(expect.end(), data.sizes.begin() + static_cast<long>(axis) + 1, data.sizes.end());
  if (expect != out.sizes)
    fail("gather", "output shape " + formatDims(out.sizes) + ", expected " + formatDims(expect));
  const size_t ri = indices.sizes.size();
  const int64_t n = data.sizes[axis];
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    std::vector<int64_t> ii(idx.begin() + static_cast<long>(axis),
                            idx.begin() + static_cast<long>(axis + ri));
    int64_t k = loadI(indices, at(indices, ii));
    if (k < -n || k >= n)
      fail("gather", "index " + std::to_string(k) + " out of range for axis " +
                         std::to_string(axis) + " of size " + std::to_string(n));
    if (k < 0) k += n;
    int64_t e = data.offset + k * data.strides[axis];
    for (size_t d = 0; d < axis; ++d) e += idx[d] * data.strides[d];
    for (size_t d = axis + 1; d < data.sizes.size(); ++d) e += idx[d - 1 + ri] * data.strides[d];
    copyElement(out, at(out, idx), data, e);
  });
}

void kRange(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  checkArity("range", ins, outs, 2);
  Operand &out = outs[0];
  checkSameDType("range", ins[0], out);
  checkSameDType("range", ins[1], out);
  if (numElements(ins[0].sizes) != 1 || numElements(ins[1].sizes) != 1 || out.sizes.size() != 1)
    fail("range", "expects one-element start and delta and a 1-D output");
  const bool fl = isFloat(out.dtype);
  for (int64_t i = 0; i < out.sizes[0]; ++i) {
    int64_t e = out.offset + i * out.strides[0];
    if (fl) storeF(out, e, loadF(ins[0], ins[0].offset) + static_cast<double>(i) * loadF(ins[1], ins[1].offset));
    else storeI(out, e, wrapAdd(loadI(ins[0], ins[0].offset), wrapMul(i, loadI(ins[1], ins[1].offset))));
  }
}

void kRangeLength(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  checkArity("range_length", ins, outs, 3);
  Operand &out = outs[0];
  checkAdmits("range_length", ins[0], kNumericTypes);
  checkSameDType("range_length", ins[0], ins[1]);
  checkSameDType("range_length", ins[0], ins[2]);
  if (out.dtype != DType::I64 || numElements(out.sizes) != 1)
    fail("range_length", "expects a one-element i64 output");
  for (const Operand &x : ins)
    if (numElements(x.sizes) != 1) fail("range_length", "expects one-element start, limit and delta");
  int64_t n = 0;
  if (isFloat(ins[0].dtype)) {
    const double s = loadF(ins[0], ins[0].offset), l = loadF(ins[1], ins[1].offset),
                 d = loadF(ins[2], ins[2].offset);
    if (d == 0) fail("range_length", "delta is 0");
    const double c = std::ceil((l - s) / d);
    if (std::isnan(c)) fail("range_length", "the element count is NaN");
    if (c > 9.0e18) fail("range_length", "the element count does not fit in int64");
    n = c > 0 ? static_cast<int64_t>(c) : 0;
  } else {
    const __int128 s = loadI(ins[0], ins[0].offset), l = loadI(ins[1], ins[1].offset),
                   d = loadI(ins[2], ins[2].offset);
    if (d == 0) fail("range_length", "delta is 0");
    const __int128 span = l - s;
    // Ceiling division rounding toward +infinity for either sign.
    __int128 q = span / d;
    if (span % d != 0 && ((span > 0) == (d > 0))) ++q;
    n = q > 0 ? static_cast<int64_t>(q) : 0;
  }
  storeI(out, out.offset, n);
}

void kFill(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("fill", ins, outs, 0);
  Operand &out = outs[0];
  const bool fl = isFloat(out.dtype);
  if (fl ? args.fattrs.empty() : args.attrs.empty())
    fail("fill", std::string("missing value (") + (fl ? "fimm[0]" : "imm[1]") + ")");
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    if (fl) storeF(out, at(out, idx), args.fattrs[0]);
    else storeI(out, at(out, idx), args.attrs[0]);
  });
}

// ---- transformer op set ----------------------------------------------------------------------

// Axis immediate args.attrs[k]; a negative value counts from the end only when `wraps`.
size_t axisAttr(const std::string &kernel, const KernelArgs &args, size_t k, size_t rank,
                bool wraps) {
  if (args.attrs.size() <= k) fail(kernel, "missing axis attribute imm[" + std::to_string(k + 1) + "]");
  int64_t a = args.attrs[k];
  if (a < 0 && wraps) a += static_cast<int64_t>(rank);
  if (a < 0 || static_cast<size_t>(a) >= rank)
    fail(kernel, "axis " + std::to_string(args.attrs[k]) + " out of range for rank " +
                     std::to_string(rank) + (wraps ? "" : " (must be non-negative)"));
  return static_cast<size_t>(a);
}

// 0/1 flag immediate args.attrs[k].
bool flagAttr(const std::string &kernel, const KernelArgs &args, size_t k, const char *what) {
  if (args.attrs.size() <= k || (args.attrs[k] != 0 && args.attrs[k] != 1))
    fail(kernel, std::string("imm[") + std::to_string(k + 1) + "] (" + what + ") must be 0 or 1");
  return args.attrs[k] == 1;
}

// Element offset of `o` at `idx` with dim `axis` replaced by j (same rank as o).
int64_t alongAxis(const Operand &o, const std::vector<int64_t> &idx, size_t axis, int64_t j) {
  return at(o, idx) + (o.sizes[axis] == 1 ? 0 : (j - idx[axis]) * o.strides[axis]);
}

// Calls f(idx) once per line along `axis` of `shape`, with idx[axis] = 0.
template <typename F> void forEachLine(const std::vector<int64_t> &shape, size_t axis, F &&f) {
  std::vector<int64_t> outer = shape;
  outer[axis] = 1;
  forEachIndex(outer, f);
}

// Wraps a negative index and checks it against a dim of size n.
int64_t checkIndex(int64_t k, int64_t n, size_t axis) {
  if (k < -n || k >= n)
    throw RuntimeError("index " + std::to_string(k) + " out of range for axis " +
                       std::to_string(axis) + " of size " + std::to_string(n));
  return k < 0 ? k + n : k;
}

void kMatmul(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  checkArity("matmul", ins, outs, 2);
  const Operand &a = ins[0], &b = ins[1];
  Operand &out = outs[0];
  checkAdmits("matmul", a, kWideTypes);
  checkSameDType("matmul", a, b);
  checkSameDType("matmul", a, out);
  const size_t ra = a.sizes.size(), rb = b.sizes.size(), ro = out.sizes.size();
  if (ra < 2 || rb < 2 || ro != std::max(ra, rb))
    fail("matmul", "expects ins of rank >= 2 and an output of the larger rank, got " +
                       formatDims(a.sizes) + " x " + formatDims(b.sizes) + " -> " +
                       formatDims(out.sizes));
  const int64_t M = a.sizes[ra - 2], K = a.sizes[ra - 1], N = b.sizes[rb - 1];
  const std::vector<int64_t> batch(out.sizes.begin(), out.sizes.end() - 2);
  bool ok = b.sizes[rb - 2] == K && out.sizes[ro - 2] == M && out.sizes[ro - 1] == N;
  for (const Operand *x : {&a, &b})
    for (size_t d = 0, rx = x->sizes.size() - 2; ok && d < rx; ++d)
      ok = x->sizes[d] == 1 || x->sizes[d] == batch[d + batch.size() - rx];
  if (!ok)
    fail("matmul", formatDims(a.sizes) + " x " + formatDims(b.sizes) + " does not give " +
                       formatDims(out.sizes) + " (a[..., M, K] x b[..., K, N], batch dims broadcast)");
  // Offset of the [M, K] / [K, N] / [M, N] matrix of `x` for batch index bi (right-aligned).
  auto matrix = [](const Operand &x, const std::vector<int64_t> &bi) {
    int64_t off = x.offset;
    const size_t rx = x.sizes.size() - 2, shift = bi.size() - rx;
    for (size_t d = 0; d < rx; ++d)
      if (x.sizes[d] != 1) off += bi[d + shift] * x.strides[d];
    return off;
  };
  const bool fl = isFloat(out.dtype);
  const int64_t am = a.strides[ra - 2], ak = a.strides[ra - 1], bk = b.strides[rb - 2],
                bn = b.strides[rb - 1], om = out.strides[ro - 2], on = out.strides[ro - 1];
  forEachIndex(batch, [&](const std::vector<int64_t> &bi) {
    const int64_t ea = matrix(a, bi), eb = matrix(b, bi), eo = matrix(out, bi);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double fs = 0;
        int64_t is = 0;
        for (int64_t k = 0; k < K; ++k) {
          const int64_t ia = ea + m * am + k * ak, ib = eb + k * bk + n * bn;
          if (fl) fs += loadF(a, ia) * loadF(b, ib);
          else is = wrapAdd(is, wrapMul(loadI(a, ia), loadI(b, ib)));
        }
        if (fl) storeF(out, eo + m * om + n * on, fs);
        else storeI(out, eo + m * om + n * on, is);
      }
  });
}

void kSoftmax(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("softmax", ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkAdmits("softmax", in, kFloatTypes);
  checkSameDType("softmax", in, out);
  checkShape("softmax", out, in.sizes);
  const size_t axis = axisAttr("softmax", args, 0, in.sizes.size(), false);
  const int64_t n = in.sizes[axis];
  std::vector<double> e(static_cast<size_t>(n));
  forEachLine(in.sizes, axis, [&](const std::vector<int64_t> &idx) {
    // Subtracting the max keeps exp() <= 1, so large inputs do not overflow.
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n; ++j) {
      const double v = e[static_cast<size_t>(j)] = loadF(in, alongAxis(in, idx, axis, j));
      mx = fmaxNan(mx, v);
    }
    double sum = 0;
    for (double &v : e) sum += (v = std::exp(v - mx));
    for (int64_t j = 0; j < n; ++j) storeF(out, alongAxis(out, idx, axis, j), e[static_cast<size_t>(j)] / sum);
  });
}

void kLayerNorm(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  if ((ins.size() != 2 && ins.size() != 3) || outs.size() != 1)
    fail("layer_norm", "expects 2 or 3 inputs (X, scale[, bias]) and 1 output, got " +
                           std::to_string(ins.size()) + " and " + std::to_string(outs.size()));
  const Operand &x = ins[0];
  Operand &out = outs[0];
  checkAdmits("layer_norm", x, kFloatTypes);
  for (size_t i = 1; i < ins.size(); ++i) {
    checkSameDType("layer_norm", ins[i], x);
    checkBroadcast("layer_norm", ins[i], out);
  }
  checkSameDType("layer_norm", x, out);
  checkShape("layer_norm", out, x.sizes);
  const size_t rank = x.sizes.size();
  const size_t axis = axisAttr("layer_norm", args, 0, rank, true);
  if (args.fattrs.empty()) fail("layer_norm", "missing epsilon (fimm[0])");
  const double eps = args.fattrs[0];
  std::vector<int64_t> outer = x.sizes, inner(x.sizes.begin() + static_cast<long>(axis), x.sizes.end());
  std::fill(outer.begin() + static_cast<long>(axis), outer.end(), 1);
  const int64_t count = numElements(inner);
  std::vector<double> v(static_cast<size_t>(count));
  forEachIndex(outer, [&](const std::vector<int64_t> &o) {
    std::vector<int64_t> idx = o;
    auto full = [&](const std::vector<int64_t> &ii) {
      std::copy(ii.begin(), ii.end(), idx.begin() + static_cast<long>(axis));
      return idx;
    };
    size_t k = 0;
    double mean = 0, var = 0;
    forEachIndex(inner, [&](const std::vector<int64_t> &ii) { mean += (v[k++] = loadF(x, at(x, full(ii)))); });
    mean /= static_cast<double>(count);
    for (double a : v) var += (a - mean) * (a - mean);
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(count) + eps);
    k = 0;
    forEachIndex(inner, [&](const std::vector<int64_t> &ii) {
      const std::vector<int64_t> &f = full(ii);
      double y = (v[k++] - mean) * inv * loadF(ins[1], at(ins[1], f));
      if (ins.size() == 3) y += loadF(ins[2], at(ins[2], f));
      storeF(out, at(out, f), y);
    });
  });
}

enum class Reduction { Sum, Mean, Max };

void reduce(const char *kernel, Reduction kind, std::vector<Operand> &ins,
            std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity(kernel, ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkAdmits(kernel, in, kind == Reduction::Max ? kAllTypes : kWideTypes);
  checkSameDType(kernel, in, out);
  const size_t rank = in.sizes.size();
  std::vector<int64_t> extent(rank, 1), expect = in.sizes;
  std::vector<int64_t> axes = args.attrs;
  if (!args.scalars.empty()) {
    // Axes known only at run time: one 0/1 flag per input axis.
    if (!args.attrs.empty() || args.scalars.size() != rank)
      fail(kernel, "expects either axes in imm or one 0/1 flag scalar per input axis (" +
                       std::to_string(rank) + "), not both");
    axes.clear();
    for (size_t d = 0; d < rank; ++d) {
      if (args.scalars[d] != 0 && args.scalars[d] != 1)
        fail(kernel, "axis flag s[" + std::to_string(d) + "] must be 0 or 1");
      if (args.scalars[d] == 1) axes.push_back(static_cast<int64_t>(d));
    }
  }
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = axes[k];
    if (a < 0 || static_cast<size_t>(a) >= rank || (k > 0 && a <= axes[k - 1]))
      fail(kernel, "axes " + formatDims(axes) + " must be strictly increasing in [0, " +
                       std::to_string(rank) + ")");
    extent[static_cast<size_t>(a)] = in.sizes[static_cast<size_t>(a)];
    expect[static_cast<size_t>(a)] = 1;
  }
  checkShape(kernel, out, expect);
  const int64_t count = numElements(extent);
  const bool fl = isFloat(in.dtype);
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &o) {
    if (count == 0) {
      if (kind == Reduction::Max) throw RuntimeError("reduce_max over an empty extent " + formatDims(extent));
      if (kind == Reduction::Mean && !fl) throw RuntimeError("integer reduce_mean over an empty extent " + formatDims(extent));
      return storeD(out, at(out, o), kind == Reduction::Sum ? 0.0 : std::nan(""));
    }
    std::vector<int64_t> idx(rank);
    double facc = kind == Reduction::Max ? -std::numeric_limits<double>::infinity() : 0.0;
    int64_t iacc = kind == Reduction::Max ? std::numeric_limits<int64_t>::min() : 0;
    forEachIndex(extent, [&](const std::vector<int64_t> &r) {
      for (size_t d = 0; d < rank; ++d) idx[d] = o[d] + r[d];
      const int64_t e = at(in, idx);
      if (fl && kind == Reduction::Max) facc = fmaxNan(facc, loadF(in, e));
      else if (fl) facc += loadF(in, e);
      else if (kind == Reduction::Max) iacc = std::max(iacc, loadI(in, e));
      else iacc = wrapAdd(iacc, loadI(in, e));
    });
    if (kind == Reduction::Mean) {
      facc /= static_cast<double>(count);
      iacc /= count;  // integer mean truncates toward zero
    }
    if (fl) storeF(out, at(out, o), facc);
    else storeI(out, at(out, o), iacc);
  });
}

void kReduceSum(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) { reduce("reduce_sum", Reduction::Sum, i, o, a); }
void kReduceMean(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) { reduce("reduce_mean", Reduction::Mean, i, o, a); }
void kReduceMax(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) { reduce("reduce_max", Reduction::Max, i, o, a); }

void kTrilu(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("trilu", ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkSameDType("trilu", in, out);
  checkShape("trilu", out, in.sizes);
  const size_t r = in.sizes.size();
  if (r < 2) fail("trilu", "expects rank >= 2, got " + formatDims(in.sizes));
  const bool upper = flagAttr("trilu", args, 0, "upper");
  if (args.scalars.size() != 1) fail("trilu", "expects one scalar operand (k)");
  const int64_t k = args.scalars[0];
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    const int64_t diag = idx[r - 1] - idx[r - 2];  // column - row
    if (upper ? diag >= k : diag <= k) copyElement(out, at(out, idx), in, at(in, idx));
    else storeZero(out, at(out, idx));
  });
}

void kCumsum(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("cumsum", ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkAdmits("cumsum", in, kWideTypes);
  checkSameDType("cumsum", in, out);
  checkShape("cumsum", out, in.sizes);
  size_t axis = 0;
  if (args.scalars.empty()) {
    axis = axisAttr("cumsum", args, 0, in.sizes.size(), true);
  } else {
    // Axis known only at run time.
    const int64_t r = static_cast<int64_t>(in.sizes.size()), a = args.scalars[0];
    if (args.scalars.size() != 1 || a < -r || a >= r)
      fail("cumsum", "axis s[0] = " + std::to_string(a) + " out of range for rank " + std::to_string(r));
    axis = static_cast<size_t>(a < 0 ? a + r : a);
  }
  const bool exclusive = flagAttr("cumsum", args, 1, "exclusive");
  const bool reverse = flagAttr("cumsum", args, 2, "reverse");
  const int64_t n = in.sizes[axis];
  const bool fl = isFloat(in.dtype);
  forEachLine(in.sizes, axis, [&](const std::vector<int64_t> &idx) {
    double facc = 0;
    int64_t iacc = 0;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t j = reverse ? n - 1 - t : t;
      const int64_t ei = alongAxis(in, idx, axis, j), eo = alongAxis(out, idx, axis, j);
      if (fl) {
        const double v = loadF(in, ei);
        if (!exclusive) facc += v;
        storeF(out, eo, facc);
        if (exclusive) facc += v;
      } else {
        const int64_t v = loadI(in, ei);
        if (!exclusive) iacc = wrapAdd(iacc, v);
        storeI(out, eo, iacc);
        if (exclusive) iacc = wrapAdd(iacc, v);
      }
    }
  });
}

void kGatherElements(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("gather_elements", ins, outs, 2);
  const Operand &data = ins[0], &indices = ins[1];
  Operand &out = outs[0];
  checkSameDType("gather_elements", data, out);
  checkAdmits("gather_elements", indices, kIndexTypes);
  checkShape("gather_elements", out, indices.sizes);
  const size_t r = data.sizes.size();
  const size_t axis = axisAttr("gather_elements", args, 0, r, true);
  bool ok = indices.sizes.size() == r;
  for (size_t d = 0; ok && d < r; ++d) ok = d == axis || indices.sizes[d] <= data.sizes[d];
  if (!ok)
    fail("gather_elements", "indices shape " + formatDims(indices.sizes) + " does not fit data " +
                                formatDims(data.sizes) + " (same rank, no larger off axis " +
                                std::to_string(axis) + ")");
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    std::vector<int64_t> di = idx;
    di[axis] = checkIndex(loadI(indices, at(indices, idx)), data.sizes[axis], axis);
    copyElement(out, at(out, idx), data, at(data, di));
  });
}

void kGatherND(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("gather_nd", ins, outs, 2);
  const Operand &data = ins[0], &indices = ins[1];
  Operand &out = outs[0];
  checkSameDType("gather_nd", data, out);
  checkAdmits("gather_nd", indices, kIndexTypes);
  const size_t r = data.sizes.size(), q = indices.sizes.size();
  if (args.attrs.empty() || args.attrs[0] < 0 || static_cast<size_t>(args.attrs[0]) >= std::min(q, r))
    fail("gather_nd", "batch_dims (imm[1]) must be in [0, min(data rank, indices rank)) = [0, " +
                          std::to_string(std::min(q, r)) + ")");
  const size_t b = static_cast<size_t>(args.attrs[0]);
  const int64_t m = indices.sizes[q - 1];
  if (m < 1 || static_cast<size_t>(m) > r - b)
    fail("gather_nd", "the last indices dim is " + std::to_string(m) + ", must be in [1, " +
                          std::to_string(r - b) + "] (data rank - batch_dims)");
  for (size_t d = 0; d < b; ++d)
    if (data.sizes[d] != indices.sizes[d])
      fail("gather_nd", "batch dim " + std::to_string(d) + " differs: data " +
                            formatDims(data.sizes) + ", indices " + formatDims(indices.sizes));
  std::vector<int64_t> expect(indices.sizes.begin(), indices.sizes.end() - 1);
  expect.insert(expect.end(), data.sizes.begin() + static_cast<long>(b) + m, data.sizes.end());
  checkShape("gather_nd", out, expect);
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &oi) {
    std::vector<int64_t> ii(oi.begin(), oi.begin() + static_cast<long>(q - 1));
    ii.push_back(0);
    std::vector<int64_t> di(oi.begin(), oi.begin() + static_cast<long>(b));
    for (int64_t t = 0; t < m; ++t) {
      ii[q - 1] = t;
      const size_t axis = b + static_cast<size_t>(t);
      di.push_back(checkIndex(loadI(indices, at(indices, ii)), data.sizes[axis], axis));
    }
    di.insert(di.end(), oi.begin() + static_cast<long>(q - 1), oi.end());
    copyElement(out, at(out, oi), data, at(data, di));
  });
}

using KernelFn = void (*)(std::vector<Operand> &, std::vector<Operand> &, const KernelArgs &);
const std::map<std::string, KernelFn> &specialKernels() {
  static const std::map<std::string, KernelFn> table = {
      {"where", kWhere},   {"cast", kCast},     {"expand", kExpand}, {"slice", kSlice},
      {"transpose", kTranspose}, {"concat", kConcat}, {"gather", kGather}, {"range", kRange},
      {"range_length", kRangeLength}, {"fill", kFill}, {"matmul", kMatmul}, {"softmax", kSoftmax}, {"layer_norm", kLayerNorm},
      {"reduce_sum", kReduceSum}, {"reduce_mean", kReduceMean}, {"reduce_max", kReduceMax},
      {"trilu", kTrilu}, {"cumsum", kCumsum}, {"gather_elements", kGatherElements},
      {"gather_nd", kGatherND}};
  return table;
}

const Binary *findBinary(const std::string &name) {
  for (const Binary &b : kBinary)
    if (name == b.name) return &b;
  return nullptr;
}

const Unary *findUnary(const std::string &name) {
  for (const Unary &u : kUnary)
    if (name == u.name) return &u;
  return nullptr;
}

}  // namespace

bool hasKernel(const std::string &name) {
  return findBinary(name) || findUnary(name) || specialKernels().count(name) ||
         findDataDependentKernel(name);
}

void runKernel(const std::string &name, std::vector<Operand> &ins, std::vector<Operand> &outs,
               const KernelArgs &args) {
  for (const Operand &o : outs)
    for (size_t d = 0; d < o.sizes.size() && numElements(o.sizes) > 0; ++d)
      if (o.sizes[d] > 1 && o.strides[d] == 0)
        fail(name, o.label + " has stride 0 on dim " + std::to_string(d) +
                       ": an output may not write an element twice");
  if (const Binary *b = findBinary(name)) return runBinary(*b, ins, outs);
  if (const Unary *u = findUnary(name)) return runUnary(*u, ins, outs);
  auto it = specialKernels().find(name);
  KernelFn fn = it != specialKernels().end() ? it->second : findDataDependentKernel(name);
  if (!fn) fail(name, "unsupported: no sim implementation");
  try {
    fn(ins, outs, args);
  } catch (const RuntimeError &e) {
    std::string msg = e.what();
    if (msg.rfind("kernel '", 0) == 0) throw;
    fail(name, msg);
  }
}

void stridedCopy(Operand &dst, const Operand &src) {
  if (dst.dtype != src.dtype || dst.sizes != src.sizes)
    throw RuntimeError("strided copy: " + src.label + " " + dtypeName(src.dtype) +
                       formatDims(src.sizes) + " does not match " + dst.label + " " +
                       dtypeName(dst.dtype) + formatDims(dst.sizes));
  for (size_t d = 0; d < dst.sizes.size() && numElements(dst.sizes) > 0; ++d)
    if (dst.sizes[d] > 1 && dst.strides[d] == 0)
      throw RuntimeError("strided copy: " + dst.label + " has stride 0 on dim " +
                         std::to_string(d) + ": a destination may not write an element twice");
  forEachIndex(dst.sizes, [&](const std::vector<int64_t> &idx) {
    copyElement(dst, at(dst, idx), src, at(src, idx));
  });
}

}  // namespace dq::rt::sim
