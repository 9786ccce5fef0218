// Device-side element access shared by the hip kernel files (HIP kernel language; include only
// from .hip sources): dtype loads and stores with the sim's rounding, element copies, the error
// word, and coordinate / offset arithmetic of Opd and Shape.
#pragma once

#include "HipKernels.h"

#include <cmath>
#include <cstring>

namespace dq::rt::hipk {

constexpr int kThreads = 256;

/// Multiprocessors (SMs / CUs) of the current device, read once; 132 (an H100/H200) when the
/// query fails. Sizes the grid-stride grids of the bandwidth kernels.
int multiprocessorCount();

/// Blocks of kThreads for `units` work units of a grid-stride loop: enough to fill every
/// multiprocessor 8 blocks deep (2048 threads, full occupancy), never more than the units.
inline unsigned gridFor(int64_t units) {
  const int64_t cap = static_cast<int64_t>(multiprocessorCount()) * 8;
  if (units < 1) units = 1;
  return static_cast<unsigned>(units < cap ? units : cap);
}

/// Blocks of kThreads for n elements in a grid-stride loop: at least 1, at most 64 per SM of an
/// H200 (132 SMs); the loop covers what the grid does not.
inline unsigned blocksFor(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  if (b < 1) b = 1;
  if (b > 132 * 64) b = 132 * 64;
  return static_cast<unsigned>(b);
}

// ---- element access ----------------------------------------------------------------------------

__host__ __device__ inline uint32_t bitsOf(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
__host__ __device__ inline float floatOf(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

__device__ inline float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) return floatOf(sign | 0x7F800000u | (mant << 13));
  if (exp == 0) {
    float v = ldexpf(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return floatOf(sign | ((exp + 112u) << 23) | (mant << 13));
}

__device__ inline uint16_t floatToHalf(float value) {
  uint32_t x = bitsOf(value);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) {
    if (a > 0x7F800000u) return sign | 0x7E00u | static_cast<uint16_t>((a >> 13) & 0x3FFu);
    return sign | 0x7C00u;
  }
  if (a >= 0x477FF000u) return sign | 0x7C00u;
  if (a < 0x38800000u) {
    if (a < 0x33000000u) return sign;
    uint32_t mant = (a & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126u - (a >> 23);
    uint32_t m = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (m & 1u))) ++m;
    return sign | static_cast<uint16_t>(m);
  }
  uint32_t r = a - 0x38000000u;
  uint32_t m = r >> 13;
  uint32_t rem = r & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (m & 1u))) ++m;
  return sign | static_cast<uint16_t>(m);
}

__device__ inline float bf16ToFloat(uint16_t b) { return floatOf(static_cast<uint32_t>(b) << 16); }

__device__ inline uint16_t floatToBF16(float value) {
  uint32_t x = bitsOf(value);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

// double -> float with round-to-odd, so a second rounding to f16/bf16 is correct.
__device__ inline float roundToOddFloat(double d) {
  if (isnan(d) || isinf(d)) return static_cast<float>(d);
  float f = __double2float_rz(d);
  if (static_cast<double>(f) == d) return f;
  return floatOf(bitsOf(f) | 1u);
}

__device__ inline bool isFloatT(int t) { return t == kF32 || t == kF64 || t == kF16 || t == kBF16; }

__device__ inline const char *addr(const Opd &o, int64_t e) { return o.base + e * o.esize; }
__device__ inline char *addrW(const Opd &o, int64_t e) { return o.base + e * o.esize; }

__device__ inline double loadF(const Opd &o, int64_t e) {
  const char *p = addr(o, e);
  switch (o.dtype) {
  case kF32:
    return *reinterpret_cast<const float *>(p);
  case kF64:
    return *reinterpret_cast<const double *>(p);
  case kF16:
    return halfToFloat(*reinterpret_cast<const uint16_t *>(p));
  case kBF16:
    return bf16ToFloat(*reinterpret_cast<const uint16_t *>(p));
  default:
    return 0.0;
  }
}

__device__ inline long long loadI(const Opd &o, int64_t e) {
  const char *p = addr(o, e);
  switch (o.dtype) {
  case kI8:
    return *reinterpret_cast<const int8_t *>(p);
  case kU8:
    return *reinterpret_cast<const uint8_t *>(p);
  case kI32:
    return *reinterpret_cast<const int32_t *>(p);
  case kI64:
    return *reinterpret_cast<const long long *>(p);
  case kBool:
    return *reinterpret_cast<const uint8_t *>(p) != 0;
  default:
    return 0;
  }
}

__device__ inline void storeF(const Opd &o, int64_t e, double v) {
  char *p = addrW(o, e);
  switch (o.dtype) {
  case kF32:
    *reinterpret_cast<float *>(p) = static_cast<float>(v);
    break;
  case kF64:
    *reinterpret_cast<double *>(p) = v;
    break;
  case kF16:
    *reinterpret_cast<uint16_t *>(p) = floatToHalf(roundToOddFloat(v));
    break;
  case kBF16:
    *reinterpret_cast<uint16_t *>(p) = floatToBF16(roundToOddFloat(v));
    break;
  default:
    break;
  }
}

__device__ inline void storeI(const Opd &o, int64_t e, long long v) {
  char *p = addrW(o, e);
  switch (o.dtype) {
  case kI8:
    *reinterpret_cast<int8_t *>(p) = static_cast<int8_t>(v);
    break;
  case kU8:
    *reinterpret_cast<uint8_t *>(p) = static_cast<uint8_t>(v);
    break;
  case kI32:
    *reinterpret_cast<int32_t *>(p) = static_cast<int32_t>(v);
    break;
  case kI64:
    *reinterpret_cast<long long *>(p) = v;
    break;
  case kBool:
    *reinterpret_cast<uint8_t *>(p) = v != 0 ? 1 : 0;
    break;
  default:
    break;
  }
}

// ONNX Cast of a float to an integer: truncate; NaN -> 0; out of range saturates (as sim).
__device__ inline long long floatToInteger(double v, int to) {
  if (isnan(v)) return 0;
  double t = trunc(v);
  double lo, hi;
  switch (to) {
  case kI8:
    lo = -128;
    hi = 127;
    break;
  case kU8:
    lo = 0;
    hi = 255;
    break;
  case kI32:
    lo = -2147483648.0;
    hi = 2147483647.0;
    break;
  default:
    lo = -9223372036854775808.0;
    hi = 9223372036854775807.0;
    break;
  }
  if (t <= lo) return to == kI64 ? (-9223372036854775807LL - 1) : static_cast<long long>(lo);
  if (t >= hi) return to == kI64 ? 9223372036854775807LL : static_cast<long long>(hi);
  return static_cast<long long>(t);
}

__device__ inline double loadD(const Opd &o, int64_t e) {
  return isFloatT(o.dtype) ? loadF(o, e) : static_cast<double>(loadI(o, e));
}

__device__ inline void storeD(const Opd &o, int64_t e, double v) {
  if (isFloatT(o.dtype))
    storeF(o, e, v);
  else if (o.dtype == kBool)
    storeI(o, e, v != 0.0);
  else
    storeI(o, e, floatToInteger(v, o.dtype));
}

__device__ inline void copyElem(const Opd &dst, int64_t de, const Opd &src, int64_t se) {
  char *d = addrW(dst, de);
  const char *s = addr(src, se);
  switch (dst.esize) {
  case 1:
    *reinterpret_cast<uint8_t *>(d) = *reinterpret_cast<const uint8_t *>(s);
    break;
  case 2:
    *reinterpret_cast<uint16_t *>(d) = *reinterpret_cast<const uint16_t *>(s);
    break;
  case 4:
    *reinterpret_cast<uint32_t *>(d) = *reinterpret_cast<const uint32_t *>(s);
    break;
  default:
    *reinterpret_cast<unsigned long long *>(d) = *reinterpret_cast<const unsigned long long *>(s);
    break;
  }
}

__device__ inline void report(DevError *err, int code, long long a, long long b, long long c) {
  if (atomicCAS(&err->code, 0, code) == 0) {
    err->a = a;
    err->b = b;
    err->c = c;
    __threadfence_system();
  }
}

// ---- float elementwise math ----------------------------------------------------------------------

__device__ inline double fmaxNan(double a, double b) { return isnan(a) || isnan(b) ? NAN : (a > b ? a : b); }
__device__ inline double fminNan(double a, double b) { return isnan(a) || isnan(b) ? NAN : (a < b ? a : b); }

/// One float elementwise op in double, before rounding to the out dtype: the math of the
/// elementwise kernel and of every step of "fused_elementwise" (b is ignored by unary ops).
__device__ inline double floatOp(ElemOp op, double a, double b) {
  switch (op) {
  case kAdd:
    return a + b;
  case kSub:
    return a - b;
  case kMul:
    return a * b;
  case kDiv:
    return a / b;
  case kEqual:
    return a == b ? 1.0 : 0.0;
  case kPow: {
    // pow may be off by an ulp or two; an integer result of integer operands is made exact, so
    // a truncating cast to an integer type matches the sim (e.g. pow(3, 1) = 3, not 2.99..).
    const double r = pow(a, b);
    if (a == trunc(a) && b == trunc(b) && b >= 0 && fabs(r) < 9007199254740992.0) return rint(r);
    return r;
  }
  case kMax:
    return fmaxNan(a, b);
  case kMin:
    return fminNan(a, b);
  case kLess:
    return a < b ? 1.0 : 0.0;
  case kLessEqual:
    return a <= b ? 1.0 : 0.0;
  case kGreater:
    return a > b ? 1.0 : 0.0;
  case kGreaterEqual:
    return a >= b ? 1.0 : 0.0;
  case kNeg:
    return -a;
  case kSqrt:
    return sqrt(a);
  case kReciprocal:
    return 1.0 / a;
  case kSigmoid:
    return 1.0 / (1.0 + exp(-a));
  case kTanh:
    return tanh(a);
  case kErf:
    return erf(a);
  case kExp:
    return exp(a);
  case kCos:
    return cos(a);
  case kSin:
    return sin(a);
  case kIsNan:
    return isnan(a) ? 1.0 : 0.0;
  case kRelu:
    return a < 0 ? 0.0 : a;
  case kAbs:
    return fabs(a);
  case kLog:
    return log(a);
  case kFloor:
    return floor(a);
  case kCeil:
    return ceil(a);
  case kRound:
    return rint(a); // halves to even
  case kSign:
    return a > 0 ? 1.0 : a < 0 ? -1.0 : a;
  case kFmod:
    return fmod(a, b);
  default:
    return 0.0;
  }
}

// Coordinates of linear index i in `s` (row-major).
__device__ inline void coords(const Shape &s, int64_t i, int64_t *c) {
  for (int d = s.rank - 1; d >= 0; --d) {
    const int64_t n = s.sizes[d];
    c[d] = i % n;
    i /= n;
  }
}

__device__ inline int64_t offsetOf(const Opd &o, const int64_t *c, int rank) {
  int64_t e = o.offset;
  for (int d = 0; d < rank; ++d)
    e += c[d] * o.strides[d];
  return e;
}

} // namespace dq::rt::hipk
