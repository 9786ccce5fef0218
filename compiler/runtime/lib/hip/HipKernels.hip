// Kernels of the hip device, in HIP kernel language (compiled as CUDA by nvcc on NVIDIA through
// HipCompat.h). They follow the sim's semantics (SimKernels.cpp): elementwise floats compute in
// double and round once to the output dtype (f16/bf16 via round-to-odd, nearest even); integers
// compute in int64 and wrap; reductions, softmax, layer norm and cumsum accumulate in fp32 for
// f32/f16/bf16 (fp64 for f64, int64 for integers).
#include "HipKernels.h"
#include "HipElements.h"

#include <cmath>
#include <cstring>

namespace dq::rt::hipk {
namespace {

// ---- elementwise -------------------------------------------------------------------------------

__device__ inline long long wrapAdd(long long a, long long b) {
  return static_cast<long long>(static_cast<unsigned long long>(a) + static_cast<unsigned long long>(b));
}
__device__ inline long long wrapSub(long long a, long long b) {
  return static_cast<long long>(static_cast<unsigned long long>(a) - static_cast<unsigned long long>(b));
}
__device__ inline long long wrapMul(long long a, long long b) {
  return static_cast<long long>(static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b));
}

__device__ long long intOp(ElemOp op, long long a, long long b, DevError *err) {
  switch (op) {
  case kAdd:
    return wrapAdd(a, b);
  case kSub:
    return wrapSub(a, b);
  case kMul:
    return wrapMul(a, b);
  case kDiv:
    if (b == 0) {
      report(err, kErrIntDivZero, 0, 0, 0);
      return 0;
    }
    if (a == (-9223372036854775807LL - 1) && b == -1) return a;
    return a / b;
  case kEqual:
    return a == b;
  case kPow: {
    long long e = b;
    if (e < 0) {
      if (a == 0) {
        report(err, kErrIntPowNeg, e, 0, 0);
        return 0;
      }
      if (a == 1) return 1;
      if (a == -1) return (e % 2 == 0) ? 1 : -1;
      return 0;
    }
    long long r = 1;
    for (; e > 0; e >>= 1) {
      if (e & 1) r = wrapMul(r, a);
      a = wrapMul(a, a);
    }
    return r;
  }
  case kMax:
    return a > b ? a : b;
  case kMin:
    return a < b ? a : b;
  case kAnd:
    return a != 0 && b != 0;
  case kOr:
    return a != 0 || b != 0;
  case kLess:
    return a < b;
  case kLessEqual:
    return a <= b;
  case kGreater:
    return a > b;
  case kGreaterEqual:
    return a >= b;
  case kNeg:
    return wrapSub(0, a);
  case kNot:
    return a == 0;
  case kRelu:
    return a < 0 ? 0 : a;
  case kAbs:
    return a < 0 ? wrapSub(0, a) : a;
  case kSign:
    return (a > 0) - (a < 0);
  case kXor:
    return (a != 0) != (b != 0);
  case kMod:
  case kFmod: {
    if (b == 0) {
      report(err, kErrIntModZero, 0, 0, 0);
      return 0;
    }
    if (b == -1) return 0;
    const long long r = a % b;
    return op == kMod && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
  }
  default:
    return 0;
  }
}

// One element of the elementwise kernel: out[eo] = op(a[ea], b[eb]) (b unused when nIn is 1).
__device__ inline void elemOne(ElemOp op, int nIn, const Opd &a, int64_t ea, const Opd &b, int64_t eb, const Opd &out,
                               int64_t eo, bool fl, DevError *err) {
  if (nIn == 2) {
    if (fl)
      storeD(out, eo, floatOp(op, loadD(a, ea), loadD(b, eb)));
    else
      storeI(out, eo, intOp(op, loadI(a, ea), loadI(b, eb), err));
  } else {
    if (fl)
      storeD(out, eo, floatOp(op, loadD(a, ea), 0.0));
    else
      storeI(out, eo, intOp(op, loadI(a, ea), 0, err));
  }
}

__global__ void kElementwise(ElemOp op, int nIn, Opd a, Opd b, Opd out, Shape shape, bool fl, DevError *err) {
  int64_t c[kMaxRank];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < shape.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    coords(shape, i, c);
    elemOne(op, nIn, a, offsetOf(a, c, shape.rank), b, offsetOf(b, c, shape.rank), out, offsetOf(out, c, shape.rank),
            fl, err);
  }
}

// ---- copies ------------------------------------------------------------------------------------

__global__ void kCopy(CopyMode mode, Opd dst, Opd src, Opd src2, Opd cond, Shape shape, long long k) {
  int64_t c[kMaxRank];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < shape.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    coords(shape, i, c);
    const int64_t ed = offsetOf(dst, c, shape.rank);
    if (mode == kCopyWhere) {
      const bool t = loadI(cond, offsetOf(cond, c, shape.rank)) != 0;
      const Opd &s = t ? src : src2;
      copyElem(dst, ed, s, offsetOf(s, c, shape.rank));
    } else if (mode == kCopyPlain) {
      copyElem(dst, ed, src, offsetOf(src, c, shape.rank));
    } else {
      const long long diag = c[shape.rank - 1] - c[shape.rank - 2];
      const bool keep = mode == kCopyTriluUpper ? diag >= k : diag <= k;
      if (keep) {
        copyElem(dst, ed, src, offsetOf(src, c, shape.rank));
      } else {
        char *d = addrW(dst, ed);
        for (int j = 0; j < dst.esize; ++j)
          d[j] = 0;
      }
    }
  }
}

// One element of the cast kernel: dst[eo] = Cast(src[ei]).
__device__ inline void castOne(const Opd &dst, int64_t eo, const Opd &src, int64_t ei) {
  if (src.dtype == dst.dtype) {
    copyElem(dst, eo, src, ei);
  } else if (isFloatT(src.dtype)) {
    const double v = loadF(src, ei);
    if (isFloatT(dst.dtype))
      storeF(dst, eo, v);
    else if (dst.dtype == kBool)
      storeI(dst, eo, v != 0.0);
    else
      storeI(dst, eo, floatToInteger(v, dst.dtype));
  } else {
    const long long v = loadI(src, ei);
    if (dst.dtype == kF32)
      *reinterpret_cast<float *>(addrW(dst, eo)) = static_cast<float>(v);
    else if (isFloatT(dst.dtype))
      storeF(dst, eo, static_cast<double>(v));
    else
      storeI(dst, eo, v);
  }
}

__global__ void kCast(Opd dst, Opd src, Shape shape) {
  int64_t c[kMaxRank];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < shape.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    coords(shape, i, c);
    castOne(dst, offsetOf(dst, c, shape.rank), src, offsetOf(src, c, shape.rank));
  }
}

__global__ void kFill(Opd out, Shape shape, double fv, long long iv) {
  int64_t c[kMaxRank];
  const bool fl = isFloatT(out.dtype);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < shape.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    coords(shape, i, c);
    const int64_t e = offsetOf(out, c, shape.rank);
    if (fl)
      storeF(out, e, fv);
    else
      storeI(out, e, iv);
  }
}

__global__ void kRange(Opd out, Shape shape, Opd start, Opd delta) {
  const bool fl = isFloatT(out.dtype);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < shape.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t e = out.offset + i * out.strides[0];
    if (fl)
      storeF(out, e, loadF(start, start.offset) + static_cast<double>(i) * loadF(delta, delta.offset));
    else
      storeI(out, e, wrapAdd(loadI(start, start.offset), wrapMul(i, loadI(delta, delta.offset))));
  }
}

__global__ void kRangeLength(Opd out, Opd st, Opd li, Opd de, DevError *err) {
  long long n = 0;
  if (isFloatT(st.dtype)) {
    const double s = loadF(st, st.offset), l = loadF(li, li.offset), d = loadF(de, de.offset);
    if (d == 0) {
      report(err, kErrRangeDeltaZero, 0, 0, 0);
      return;
    }
    const double c = ceil((l - s) / d);
    if (isnan(c)) {
      report(err, kErrRangeNaN, 0, 0, 0);
      return;
    }
    if (c > 9.0e18) {
      report(err, kErrRangeBig, 0, 0, 0);
      return;
    }
    n = c > 0 ? static_cast<long long>(c) : 0;
  } else {
    const __int128 s = loadI(st, st.offset), l = loadI(li, li.offset), d = loadI(de, de.offset);
    if (d == 0) {
      report(err, kErrRangeDeltaZero, 0, 0, 0);
      return;
    }
    const __int128 span = l - s;
    __int128 q = span / d;
    if (span % d != 0 && ((span > 0) == (d > 0))) ++q;
    n = q > 0 ? static_cast<long long>(q) : 0;
  }
  storeI(out, out.offset, n);
}

// ---- bandwidth paths of elementwise, cast and copy ------------------------------------------------
// The loop is first simplified on the host (simplifyLoop below): size-1 dims dropped, dims that
// every operand steps through as one merged. What is left is walked as rows: `outer` is every dim
// but the last (its strides are [0, outer.rank) of each operand) and `n` the last dim's extent,
// cut into chunks of kThreads * V elements. A work unit is one chunk of one row, so the row's
// coordinates are computed once per chunk, not once per element (64-bit division is slow on a
// GPU), and consecutive threads touch consecutive elements. The math per element is the generic
// kernels' (elemOne, castOne, floatOp), so every result is bit for bit the same.

/// Storage and conversions of one float dtype, exactly as loadF / storeF.
struct F32T {
  using S = float;
  __device__ static double ld(S v) { return v; }
  __device__ static S st(double v) { return static_cast<float>(v); }
};
struct F64T {
  using S = double;
  __device__ static double ld(S v) { return v; }
  __device__ static S st(double v) { return v; }
};
struct F16T {
  using S = uint16_t;
  __device__ static double ld(S h) {
#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
    // The hardware conversion is exact for every non-NaN half; NaN keeps the software path's bits.
    if ((h & 0x7FFFu) <= 0x7C00u) {
      double d;
      asm("cvt.f64.f16 %0, %1;" : "=d"(d) : "h"(h));
      return d;
    }
#endif
    return halfToFloat(h);
  }
  __device__ static S st(double v) {
#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
    // One round-to-nearest-even from double: what round-to-odd to float and then to half gives
    // (float keeps 13 more bits than half), overflow to infinity included. NaN: software bits.
    if (!isnan(v)) {
      unsigned short r;
      asm("cvt.rn.f16.f64 %0, %1;" : "=h"(r) : "d"(v));
      return r;
    }
#endif
    return floatToHalf(roundToOddFloat(v));
  }
};
struct BF16T {
  using S = uint16_t;
  __device__ static double ld(S v) { return bf16ToFloat(v); }
  __device__ static S st(double v) { return floatToBF16(roundToOddFloat(v)); }
};

/// V elements of S in one 16-byte load or store.
template <typename S> union Pack16 {
  static constexpr int V = 16 / sizeof(S);
  uint4 raw;
  S e[V];
};

/// Element offsets of the start of row `row` for up to three operands.
__device__ inline void rowStart(const Shape &outer, int64_t row, const Opd &a, const Opd &b, const Opd &o, int64_t &ea,
                                int64_t &eb, int64_t &eo) {
  int64_t c[kMaxRank];
  coords(outer, row, c);
  ea = offsetOf(a, c, outer.rank);
  eb = offsetOf(b, c, outer.rank);
  eo = offsetOf(o, c, outer.rank);
}

/// Elementwise over rows of one float dtype F. `vec`: out's and every stepping input's rows are
/// 16-byte aligned with inner stride 1 (inputs may have inner stride 0: broadcast along the row),
/// so each thread moves V elements per 16-byte access; otherwise each thread does V elements
/// kThreads apart (still coalesced).
template <typename F>
__global__ void kElemRowsT(ElemOp op, int nIn, Opd a, Opd b, Opd out, Shape outer, int64_t n, int64_t chunks,
                           bool vec) {
  using S = typename F::S;
  constexpr int V = Pack16<S>::V;
  const int r = outer.rank;
  const int64_t sa = a.strides[r], sb = b.strides[r], so = out.strides[r];
  const int64_t units = outer.count * chunks;
  for (int64_t u = blockIdx.x; u < units; u += gridDim.x) {
    const int64_t row = u / chunks, j0 = (u - row * chunks) * (kThreads * V);
    int64_t ea, eb, eo;
    rowStart(outer, row, a, b, out, ea, eb, eo);
    const S *pa = reinterpret_cast<const S *>(a.base) + ea;
    const S *pb = nIn == 2 ? reinterpret_cast<const S *>(b.base) + eb : pa;
    S *po = reinterpret_cast<S *>(out.base) + eo;
    if (vec) {
      const int64_t j = j0 + static_cast<int64_t>(threadIdx.x) * V;
      if (j + V <= n) {
        Pack16<S> xa, xb, xo;
        if (sa)
          xa.raw = *reinterpret_cast<const uint4 *>(pa + j);
        else
          for (int k = 0; k < V; ++k)
            xa.e[k] = pa[0];
        if (nIn == 2) {
          if (sb)
            xb.raw = *reinterpret_cast<const uint4 *>(pb + j);
          else
            for (int k = 0; k < V; ++k)
              xb.e[k] = pb[0];
        }
#pragma unroll
        for (int k = 0; k < V; ++k)
          xo.e[k] = F::st(floatOp(op, F::ld(xa.e[k]), nIn == 2 ? F::ld(xb.e[k]) : 0.0));
        *reinterpret_cast<uint4 *>(po + j) = xo.raw;
      } else {
        for (int64_t jj = j; jj < n; ++jj) // the row's last, partial vector
          po[jj] = F::st(floatOp(op, F::ld(pa[jj * sa]), nIn == 2 ? F::ld(pb[jj * sb]) : 0.0));
      }
    } else {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const int64_t jj = j0 + threadIdx.x + static_cast<int64_t>(k) * kThreads;
        if (jj < n) po[jj * so] = F::st(floatOp(op, F::ld(pa[jj * sa]), nIn == 2 ? F::ld(pb[jj * sb]) : 0.0));
      }
    }
  }
}

constexpr int kRowsGenericV = 4; ///< elements per thread per chunk of the generic row kernels

/// Elementwise over rows, any dtypes (elemOne per element, kRowsGenericV per thread).
__global__ void kElemRows(ElemOp op, int nIn, Opd a, Opd b, Opd out, Shape outer, int64_t n, int64_t chunks, bool fl,
                          DevError *err) {
  const int r = outer.rank;
  const int64_t sa = a.strides[r], sb = b.strides[r], so = out.strides[r];
  const int64_t units = outer.count * chunks;
  for (int64_t u = blockIdx.x; u < units; u += gridDim.x) {
    const int64_t row = u / chunks, j0 = (u - row * chunks) * (kThreads * kRowsGenericV);
    int64_t ea, eb, eo;
    rowStart(outer, row, a, b, out, ea, eb, eo);
#pragma unroll
    for (int k = 0; k < kRowsGenericV; ++k) {
      const int64_t j = j0 + threadIdx.x + static_cast<int64_t>(k) * kThreads;
      if (j < n) elemOne(op, nIn, a, ea + j * sa, b, eb + j * sb, out, eo + j * so, fl, err);
    }
  }
}

/// Cast over rows (castOne per element).
__global__ void kCastRows(Opd dst, Opd src, Shape outer, int64_t n, int64_t chunks) {
  const int r = outer.rank;
  const int64_t ss = src.strides[r], sd = dst.strides[r];
  const int64_t units = outer.count * chunks;
  for (int64_t u = blockIdx.x; u < units; u += gridDim.x) {
    const int64_t row = u / chunks, j0 = (u - row * chunks) * (kThreads * kRowsGenericV);
    int64_t es, ed, unused;
    rowStart(outer, row, src, dst, dst, es, ed, unused);
#pragma unroll
    for (int k = 0; k < kRowsGenericV; ++k) {
      const int64_t j = j0 + threadIdx.x + static_cast<int64_t>(k) * kThreads;
      if (j < n) castOne(dst, ed + j * sd, src, es + j * ss);
    }
  }
}

/// Plain copy over rows of S-sized elements; `vec` as in kElemRowsT (both inner strides 1).
template <typename S> __global__ void kCopyRowsT(Opd dst, Opd src, Shape outer, int64_t n, int64_t chunks, bool vec) {
  constexpr int V = Pack16<S>::V;
  const int r = outer.rank;
  const int64_t ss = src.strides[r], sd = dst.strides[r];
  const int64_t units = outer.count * chunks;
  for (int64_t u = blockIdx.x; u < units; u += gridDim.x) {
    const int64_t row = u / chunks, j0 = (u - row * chunks) * (kThreads * V);
    int64_t es, ed, unused;
    rowStart(outer, row, src, dst, dst, es, ed, unused);
    const S *ps = reinterpret_cast<const S *>(src.base) + es;
    S *pd = reinterpret_cast<S *>(dst.base) + ed;
    if (vec) {
      const int64_t j = j0 + static_cast<int64_t>(threadIdx.x) * V;
      if (j + V <= n)
        *reinterpret_cast<uint4 *>(pd + j) = *reinterpret_cast<const uint4 *>(ps + j);
      else
        for (int64_t jj = j; jj < n; ++jj)
          pd[jj] = ps[jj];
    } else {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const int64_t jj = j0 + threadIdx.x + static_cast<int64_t>(k) * kThreads;
        if (jj < n) pd[jj * sd] = ps[jj * ss];
      }
    }
  }
}

constexpr int kTile = 32, kTileRows = 8; ///< transpose tile and the block's rows (32 x 8 threads)

/// Copy of a loop [batch..., X, Y] where src steps 1 along X and dst steps 1 along Y (the last-two
/// dims swap of a transpose): each 32 x 32 tile is read along X and written along Y through
/// shared memory, so both sides are coalesced. One tile per work unit.
template <typename S>
__global__ void kCopyTranspose(Opd dst, Opd src, Shape batch, int64_t X, int64_t Y, int64_t tilesX, int64_t tilesY) {
  __shared__ S tile[kTile][kTile + 1]; // +1: the column reads hit 32 different banks
  const int r = batch.rank;
  const int64_t dsx = dst.strides[r], ssy = src.strides[r + 1];
  const int64_t perBatch = tilesX * tilesY, units = batch.count * perBatch;
  for (int64_t u = blockIdx.x; u < units; u += gridDim.x) {
    const int64_t bi = u / perBatch, t = u - bi * perBatch;
    const int64_t x0 = (t / tilesY) * kTile, y0 = (t - (t / tilesY) * tilesY) * kTile;
    int64_t es, ed, unused;
    rowStart(batch, bi, src, dst, dst, es, ed, unused);
    const S *ps = reinterpret_cast<const S *>(src.base) + es;
    S *pd = reinterpret_cast<S *>(dst.base) + ed;
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const int64_t x = x0 + threadIdx.x, y = y0 + k;
      if (x < X && y < Y) tile[k][threadIdx.x] = ps[x + y * ssy];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const int64_t y = y0 + threadIdx.x, x = x0 + k;
      if (x < X && y < Y) pd[x * dsx + y] = tile[threadIdx.x][k];
    }
    __syncthreads();
  }
}

// ---- gathers -----------------------------------------------------------------------------------

struct Dims {
  int64_t v[kMaxRank];
};

__global__ void kGather(Opd out, Shape shape, Opd data, int dataRank, Dims dataSizes, Opd indices, int idxRank,
                        int axis, DevError *err) {
  int64_t c[kMaxRank];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < shape.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    coords(shape, i, c);
    int64_t ie = indices.offset;
    for (int d = 0; d < idxRank; ++d)
      ie += c[axis + d] * indices.strides[d];
    long long k = loadI(indices, ie);
    const int64_t n = dataSizes.v[axis];
    if (k < -n || k >= n) {
      report(err, kErrIndex, k, axis, n);
      return;
    }
    if (k < 0) k += n;
    int64_t e = data.offset + k * data.strides[axis];
    for (int d = 0; d < axis; ++d)
      e += c[d] * data.strides[d];
    for (int d = axis + 1; d < dataRank; ++d)
      e += c[d - 1 + idxRank] * data.strides[d];
    copyElem(out, offsetOf(out, c, shape.rank), data, e);
  }
}

__global__ void kGatherElements(Opd out, Shape shape, Opd data, Dims dataSizes, Opd indices, int axis, DevError *err) {
  int64_t c[kMaxRank];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < shape.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    coords(shape, i, c);
    long long k = loadI(indices, offsetOf(indices, c, shape.rank));
    const int64_t n = dataSizes.v[axis];
    if (k < -n || k >= n) {
      report(err, kErrIndex, k, axis, n);
      return;
    }
    if (k < 0) k += n;
    int64_t e = data.offset;
    for (int d = 0; d < shape.rank; ++d)
      e += (d == axis ? k : c[d]) * data.strides[d];
    copyElem(out, offsetOf(out, c, shape.rank), data, e);
  }
}

__global__ void kGatherND(Opd out, Shape shape, Opd data, int r, Dims dataSizes, Opd indices, int q, int b, int m,
                          DevError *err) {
  int64_t c[kMaxRank];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < shape.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    coords(shape, i, c);
    int64_t ib = indices.offset;
    for (int d = 0; d < q - 1; ++d)
      ib += c[d] * indices.strides[d];
    int64_t e = data.offset;
    for (int d = 0; d < b; ++d)
      e += c[d] * data.strides[d];
    bool ok = true;
    for (int t = 0; t < m; ++t) {
      const int axis = b + t;
      long long k = loadI(indices, ib + t * indices.strides[q - 1]);
      const int64_t n = dataSizes.v[axis];
      if (k < -n || k >= n) {
        report(err, kErrIndex, k, axis, n);
        ok = false;
        break;
      }
      if (k < 0) k += n;
      e += k * data.strides[axis];
    }
    if (!ok) return;
    for (int d = b + m; d < r; ++d)
      e += c[q - 1 + (d - b - m)] * data.strides[d];
    copyElem(out, offsetOf(out, c, shape.rank), data, e);
  }
}

// ---- reductions and normalizations -------------------------------------------------------------

template <typename T> __device__ T blockSum(T v, T *sh) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  T t = 0;
  if (threadIdx.x == 0) {
    for (int w = 0; w < (blockDim.x + 31) / 32; ++w)
      t += sh[w];
    sh[0] = t;
  }
  __syncthreads();
  return sh[0];
}

template <typename T> __device__ T nanMax(T a, T b) { return (a != a || b != b) ? T(NAN) : (a > b ? a : b); }

template <typename T> __device__ T blockMax(T v, T *sh) {
  for (int o = 16; o > 0; o >>= 1)
    v = nanMax(v, __shfl_down_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    T t = sh[0];
    for (int w = 1; w < (blockDim.x + 31) / 32; ++w)
      t = nanMax(t, sh[w]);
    sh[0] = t;
  }
  __syncthreads();
  return sh[0];
}

template <typename T> __device__ T nanMin(T a, T b) { return (a != a || b != b) ? T(NAN) : (a < b ? a : b); }

// Combines two partial results of reduction `kind` (see reduce in HipKernels.h).
template <typename T> __device__ T combineF(int kind, T a, T b) {
  return kind == 2 ? nanMax(a, b) : kind == 3 ? nanMin(a, b) : kind == 4 ? a * b : a + b;
}
__device__ long long combineI(int kind, long long a, long long b) {
  return kind == 2 ? (a > b ? a : b) : kind == 3 ? (a < b ? a : b) : kind == 4 ? wrapMul(a, b) : wrapAdd(a, b);
}

template <typename T, typename C> __device__ T blockCombine(T v, T *sh, C combine) {
  for (int o = 16; o > 0; o >>= 1)
    v = combine(v, __shfl_down_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    T t = sh[0];
    for (int w = 1; w < (blockDim.x + 31) / 32; ++w)
      t = combine(t, sh[w]);
    sh[0] = t;
  }
  __syncthreads();
  return sh[0];
}

// One block per output element: threads stride over the reduced extent.
template <typename Acc> __global__ void kReduceFloat(int kind, Opd out, Opd in, Shape outer, Shape extent) {
  __shared__ Acc sh[32];
  int64_t o[kMaxRank], r[kMaxRank], idx[kMaxRank];
  const Acc identity = kind == 2 ? Acc(-INFINITY) : kind == 3 ? Acc(INFINITY) : kind == 4 ? Acc(1) : Acc(0);
  for (int64_t oi = blockIdx.x; oi < outer.count; oi += gridDim.x) {
    coords(outer, oi, o);
    Acc acc = identity;
    for (int64_t j = threadIdx.x; j < extent.count; j += blockDim.x) {
      coords(extent, j, r);
      for (int d = 0; d < outer.rank; ++d)
        idx[d] = o[d] + r[d];
      Acc v = static_cast<Acc>(loadD(in, offsetOf(in, idx, outer.rank)));
      if (kind == 5 || kind == 6) v = v * v;
      if (kind == 7) v = exp(v);
      acc = combineF(kind, acc, v);
    }
    acc = blockCombine(acc, sh, [kind](Acc x, Acc y) { return combineF(kind, x, y); });
    if (threadIdx.x == 0) {
      double res = static_cast<double>(acc);
      if (kind == 1) res = extent.count ? res / static_cast<double>(extent.count) : NAN;
      if (kind == 5) res = sqrt(res);
      if (kind == 7) res = log(res);
      storeD(out, offsetOf(out, o, outer.rank), res);
    }
  }
}

__global__ void kReduceInt(int kind, Opd out, Opd in, Shape outer, Shape extent) {
  __shared__ long long sh[32];
  int64_t o[kMaxRank], r[kMaxRank], idx[kMaxRank];
  const long long identity = kind == 2   ? (-9223372036854775807LL - 1)
                             : kind == 3 ? 9223372036854775807LL
                             : kind == 4 ? 1
                                         : 0;
  for (int64_t oi = blockIdx.x; oi < outer.count; oi += gridDim.x) {
    coords(outer, oi, o);
    long long acc = identity;
    for (int64_t j = threadIdx.x; j < extent.count; j += blockDim.x) {
      coords(extent, j, r);
      for (int d = 0; d < outer.rank; ++d)
        idx[d] = o[d] + r[d];
      long long v = loadI(in, offsetOf(in, idx, outer.rank));
      if (kind == 6) v = wrapMul(v, v);
      acc = combineI(kind, acc, v);
    }
    acc = blockCombine(acc, sh, [kind](long long x, long long y) { return combineI(kind, x, y); });
    if (threadIdx.x == 0) {
      if (kind == 1) acc /= extent.count; // truncates toward zero; empty extent refused on host
      storeI(out, offsetOf(out, o, outer.rank), acc);
    }
  }
}

template <typename Acc>
__global__ void kSoftmax(Opd out, Opd in, Shape lines, int64_t n, int64_t si, int64_t so, bool logOut) {
  __shared__ Acc sh[32];
  int64_t c[kMaxRank];
  for (int64_t li = blockIdx.x; li < lines.count; li += gridDim.x) {
    coords(lines, li, c);
    const int64_t bi = offsetOf(in, c, lines.rank), bo = offsetOf(out, c, lines.rank);
    Acc mx = Acc(-INFINITY);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      mx = nanMax(mx, static_cast<Acc>(loadF(in, bi + j * si)));
    mx = blockMax(mx, sh);
    Acc sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      sum += exp(static_cast<Acc>(loadF(in, bi + j * si)) - mx);
    sum = blockSum(sum, sh);
    const Acc logSum = log(sum);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const Acc v = static_cast<Acc>(loadF(in, bi + j * si)) - mx;
      storeF(out, bo + j * so, static_cast<double>(logOut ? v - logSum : exp(v) / sum));
    }
  }
}

template <typename Acc>
__global__ void kLayerNorm(Opd out, Opd x, Opd scale, Opd bias, bool hasBias, Shape rows, Shape inner, double eps) {
  __shared__ Acc sh[32];
  int64_t c[kMaxRank], ci[kMaxRank];
  const int rank = rows.rank;
  for (int64_t ri = blockIdx.x; ri < rows.count; ri += gridDim.x) {
    coords(rows, ri, c);
    Acc sum = 0;
    for (int64_t j = threadIdx.x; j < inner.count; j += blockDim.x) {
      coords(inner, j, ci);
      for (int d = 0; d < rank; ++d)
        ci[d] += c[d];
      sum += static_cast<Acc>(loadF(x, offsetOf(x, ci, rank)));
    }
    const Acc mean = blockSum(sum, sh) / static_cast<Acc>(inner.count);
    Acc var = 0;
    for (int64_t j = threadIdx.x; j < inner.count; j += blockDim.x) {
      coords(inner, j, ci);
      for (int d = 0; d < rank; ++d)
        ci[d] += c[d];
      const Acc v = static_cast<Acc>(loadF(x, offsetOf(x, ci, rank))) - mean;
      var += v * v;
    }
    var = blockSum(var, sh) / static_cast<Acc>(inner.count);
    const Acc inv = Acc(1) / sqrt(var + static_cast<Acc>(eps));
    for (int64_t j = threadIdx.x; j < inner.count; j += blockDim.x) {
      coords(inner, j, ci);
      for (int d = 0; d < rank; ++d)
        ci[d] += c[d];
      Acc y = (static_cast<Acc>(loadF(x, offsetOf(x, ci, rank))) - mean) * inv *
              static_cast<Acc>(loadF(scale, offsetOf(scale, ci, rank)));
      if (hasBias) y += static_cast<Acc>(loadF(bias, offsetOf(bias, ci, rank)));
      storeF(out, offsetOf(out, ci, rank), static_cast<double>(y));
    }
  }
}

__global__ void kCumsum(Opd out, Opd in, Shape lines, int64_t n, int64_t si, int64_t so, bool excl, bool rev) {
  int64_t c[kMaxRank];
  const bool fl = isFloatT(in.dtype), f64 = in.dtype == kF64;
  for (int64_t li = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; li < lines.count;
       li += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    coords(lines, li, c);
    const int64_t bi = offsetOf(in, c, lines.rank), bo = offsetOf(out, c, lines.rank);
    float f32 = 0;
    double f64acc = 0;
    long long iacc = 0;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t j = rev ? n - 1 - t : t;
      const int64_t ei = bi + j * si, eo = bo + j * so;
      if (fl) {
        const double v = loadF(in, ei);
        if (!excl) {
          if (f64)
            f64acc += v;
          else
            f32 += static_cast<float>(v);
        }
        storeF(out, eo, f64 ? f64acc : static_cast<double>(f32));
        if (excl) {
          if (f64)
            f64acc += v;
          else
            f32 += static_cast<float>(v);
        }
      } else {
        const long long v = loadI(in, ei);
        if (!excl) iacc = wrapAdd(iacc, v);
        storeI(out, eo, iacc);
        if (excl) iacc = wrapAdd(iacc, v);
      }
    }
  }
}

__global__ void kMatmulInt(Opd out, Opd a, Opd b, Shape batch, int64_t M, int64_t K, int64_t N, int64_t am, int64_t ak,
                           int64_t bk, int64_t bn, int64_t om, int64_t on) {
  int64_t c[kMaxRank];
  const int64_t total = batch.count * M * N;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t n = i % N, m = (i / N) % M, bi = i / (N * M);
    coords(batch, bi, c);
    const int64_t ea = offsetOf(a, c, batch.rank), eb = offsetOf(b, c, batch.rank), eo = offsetOf(out, c, batch.rank);
    long long s = 0;
    for (int64_t k = 0; k < K; ++k)
      s = wrapAdd(s, wrapMul(loadI(a, ea + m * am + k * ak), loadI(b, eb + k * bk + n * bn)));
    storeI(out, eo + m * om + n * on, s);
  }
}

// One warp per output element: the lanes take every 32nd k, then a shuffle tree adds the 32
// partial sums in a fixed order (so the result does not depend on timing). One thread per output
// with a sequential k loop waits on one load after another: for a decode step's attention (K up to
// the context length) that made the kernel slower on the GPU than the BLAS.
__global__ void kMatmulSmall(Opd out, Opd a, Opd b, Shape batch, int64_t M, int64_t K, int64_t N, int64_t am,
                             int64_t ak, int64_t bk, int64_t bn, int64_t om, int64_t on) {
  int64_t c[kMaxRank];
  const int64_t total = batch.count * M * N;
  const int lane = threadIdx.x & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  const bool wide = a.dtype == kF64;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + threadIdx.x / 32; i < total; i += warps) {
    const int64_t n = i % N, m = (i / N) % M, bi = i / (N * M);
    coords(batch, bi, c);
    const int64_t ea = offsetOf(a, c, batch.rank) + m * am, eb = offsetOf(b, c, batch.rank) + n * bn,
                  eo = offsetOf(out, c, batch.rank);
    double result;
    if (wide) {
      double s = 0;
      for (int64_t k = lane; k < K; k += 32)
        s = fma(loadF(a, ea + k * ak), loadF(b, eb + k * bk), s);
      for (int o = 16; o > 0; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
      result = s;
    } else {
      float s = 0.0f;
      for (int64_t k = lane; k < K; k += 32)
        s = fmaf(static_cast<float>(loadF(a, ea + k * ak)), static_cast<float>(loadF(b, eb + k * bk)), s);
      for (int o = 16; o > 0; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
      result = s;
    }
    if (lane == 0) storeF(out, eo + m * om + n * on, result);
  }
}

// ---- activations and index kernels -------------------------------------------------------------

__global__ void kLeakyRelu(Opd out, Opd in, Shape shape, double alpha) {
  int64_t c[kMaxRank];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < shape.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    coords(shape, i, c);
    const double x = loadF(in, offsetOf(in, c, shape.rank));
    storeF(out, offsetOf(out, c, shape.rank), x < 0 ? alpha * x : x);
  }
}

// One block per line: each thread scans a strided share of the line in index order, then the
// block combines the candidates. The combination keeps the sequential scan's answer: any NaN beats
// every number (the first NaN, or the last with select_last_index), equal values go to the lower
// index (the higher with select_last_index).
struct ArgCand {
  double f;
  long long i;
  long long at;
  bool nan;
};

__device__ bool argBetter(const ArgCand &x, const ArgCand &y, bool fl, bool isMax, bool last) {
  if (y.at < 0) return x.at >= 0;
  if (x.at < 0) return false;
  bool better, tie;
  if (fl) {
    better = y.nan ? false : x.nan ? true : (isMax ? x.f > y.f : x.f < y.f);
    tie = (x.nan && y.nan) || (!x.nan && !y.nan && x.f == y.f);
  } else {
    better = isMax ? x.i > y.i : x.i < y.i;
    tie = x.i == y.i;
  }
  return better || (tie && (last ? x.at > y.at : x.at < y.at));
}

__global__ void kArgExtreme(Opd out, Opd in, Shape lines, int64_t n, int64_t si, bool isMax, bool last) {
  __shared__ ArgCand sh[kThreads];
  int64_t c[kMaxRank];
  const bool fl = isFloatT(in.dtype);
  for (int64_t li = blockIdx.x; li < lines.count; li += gridDim.x) {
    coords(lines, li, c);
    const int64_t bi = offsetOf(in, c, lines.rank);
    ArgCand best{0.0, 0, -1, false};
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      ArgCand v{0.0, 0, j, false};
      if (fl) {
        v.f = loadF(in, bi + j * si);
        v.nan = isnan(v.f);
      } else {
        v.i = loadI(in, bi + j * si);
      }
      if (argBetter(v, best, fl, isMax, last)) best = v;
    }
    sh[threadIdx.x] = best;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half >>= 1) {
      if (threadIdx.x < half && argBetter(sh[threadIdx.x + half], sh[threadIdx.x], fl, isMax, last))
        sh[threadIdx.x] = sh[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) storeI(out, offsetOf(out, c, lines.rank), sh[0].at);
    __syncthreads();
  }
}

__global__ void kOneHot(Opd out, Shape shape, Opd indices, Opd values, int64_t offE, int64_t onE, int axis) {
  int64_t c[kMaxRank];
  const int64_t depth = shape.sizes[axis];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < shape.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    coords(shape, i, c);
    const int64_t ie = offsetOf(indices, c, shape.rank);
    long long k = depth; // off unless the index is in range
    if (isFloatT(indices.dtype)) {
      const double v = loadF(indices, ie);
      if (isfinite(v) && fabs(v) < 9.0e18) k = static_cast<long long>(trunc(v));
    } else {
      k = loadI(indices, ie);
    }
    if (k < 0 && k >= -depth) k += depth;
    copyElem(out, offsetOf(out, c, shape.rank), values, c[axis] == k ? onE : offE);
  }
}

Dims dims(const int64_t *v, int r) {
  Dims d{};
  for (int i = 0; i < r && i < kMaxRank; ++i)
    d.v[i] = v[i];
  return d;
}

unsigned rowBlocks(int64_t n) {
  if (n < 1) return 1;
  return static_cast<unsigned>(n < 65535 * 8 ? n : 65535 * 8);
}

/// Drops the size-1 dims of `shape` and merges dim d into d + 1 wherever every operand steps
/// through the pair as through one dim (stride[d] == stride[d + 1] * size[d + 1]; broadcast
/// dims, stride 0, merge with each other). The loop visits the same elements in the same order
/// with the same offsets; the index math just has fewer dims (a contiguous tensor becomes rank 1,
/// a row broadcast [R, C] + [C] stays rank 2).
void simplifyLoop(Shape &shape, Opd *const *ops, int nOps) {
  int r = 0;
  for (int d = 0; d < shape.rank; ++d) {
    if (shape.sizes[d] == 1) continue;
    bool merge = r > 0;
    for (int k = 0; k < nOps && merge; ++k)
      merge = ops[k]->strides[r - 1] == ops[k]->strides[d] * shape.sizes[d];
    if (merge) {
      shape.sizes[r - 1] *= shape.sizes[d];
      for (int k = 0; k < nOps; ++k)
        ops[k]->strides[r - 1] = ops[k]->strides[d];
    } else {
      shape.sizes[r] = shape.sizes[d];
      for (int k = 0; k < nOps; ++k)
        ops[k]->strides[r] = ops[k]->strides[d];
      ++r;
    }
  }
  for (int d = r; d < kMaxRank; ++d) {
    shape.sizes[d] = 0;
    for (int k = 0; k < nOps; ++k)
      ops[k]->strides[d] = 0;
  }
  shape.rank = r;
}

/// Rows geometry of a simplified loop of rank >= 1: every dim but the last, and the last's extent.
struct RowsPlan {
  Shape outer;
  int64_t n = 0;
};
RowsPlan rowsOf(const Shape &shape) {
  RowsPlan p;
  p.outer.rank = shape.rank - 1;
  p.outer.count = 1;
  for (int d = 0; d + 1 < shape.rank; ++d) {
    p.outer.sizes[d] = shape.sizes[d];
    p.outer.count *= shape.sizes[d];
  }
  p.n = shape.sizes[shape.rank - 1];
  return p;
}

/// The row kernels pay one row-coordinate computation per chunk: worth it from rank 1 or rows of
/// at least this many elements; shorter rows take the per-element kernels.
constexpr int64_t kMinRow = 256;
bool useRows(const Shape &shape) {
  return shape.rank == 1 || (shape.rank > 1 && shape.sizes[shape.rank - 1] >= kMinRow);
}

/// Whether every row of `o` (inner stride 1) starts on a 16-byte boundary.
bool rowsAligned(const Opd &o, const Shape &shape) {
  const int r = shape.rank;
  if ((reinterpret_cast<uintptr_t>(o.base) + static_cast<uintptr_t>(o.offset * o.esize)) % 16 != 0) return false;
  for (int d = 0; d + 1 < r; ++d)
    if ((o.strides[d] * o.esize) % 16 != 0) return false;
  return true;
}

int64_t chunksOf(int64_t n, int perThread) { return (n + kThreads * perThread - 1) / (kThreads * perThread); }

template <typename F>
void launchElemRowsT(hipStream_t s, ElemOp op, int nIn, const Opd &a, const Opd &b, const Opd &out, const Shape &shape,
                     bool vec) {
  const RowsPlan p = rowsOf(shape);
  const int64_t chunks = chunksOf(p.n, Pack16<typename F::S>::V);
  hipLaunchKernelGGL(kElemRowsT<F>, dim3(gridFor(p.outer.count * chunks)), dim3(kThreads), 0, s, op, nIn, a, b, out,
                     p.outer, p.n, chunks, vec);
}

template <typename S>
void launchCopyRowsT(hipStream_t s, const Opd &dst, const Opd &src, const Shape &shape, bool vec) {
  const RowsPlan p = rowsOf(shape);
  const int64_t chunks = chunksOf(p.n, Pack16<S>::V);
  hipLaunchKernelGGL(kCopyRowsT<S>, dim3(gridFor(p.outer.count * chunks)), dim3(kThreads), 0, s, dst, src, p.outer, p.n,
                     chunks, vec);
}

template <typename S> void launchTranspose(hipStream_t s, const Opd &dst, const Opd &src, const Shape &shape) {
  Shape batch;
  batch.rank = shape.rank - 2;
  batch.count = 1;
  for (int d = 0; d < batch.rank; ++d) {
    batch.sizes[d] = shape.sizes[d];
    batch.count *= shape.sizes[d];
  }
  const int64_t X = shape.sizes[shape.rank - 2], Y = shape.sizes[shape.rank - 1];
  const int64_t tx = (X + kTile - 1) / kTile, ty = (Y + kTile - 1) / kTile;
  hipLaunchKernelGGL(kCopyTranspose<S>, dim3(gridFor(batch.count * tx * ty)), dim3(kTile, kTileRows), 0, s, dst, src,
                     batch, X, Y, tx, ty);
}

} // namespace

int multiprocessorCount() {
  static const int n = [] {
    hipDeviceProp_t prop;
    return hipGetDeviceProperties(&prop, 0) == hipSuccess && prop.multiProcessorCount > 0 ? prop.multiProcessorCount
                                                                                          : 132;
  }();
  return n;
}

hipError_t elementwise(hipStream_t s, ElemOp op, int nIn, Opd a, Opd b, Opd out, Shape shape, bool floatPath,
                       DevError *err) {
  if (shape.count == 0) return hipSuccess;
  Opd *ops[] = {&a, &b, &out};
  simplifyLoop(shape, ops, 3);
  if (!useRows(shape)) {
    hipLaunchKernelGGL(kElementwise, dim3(blocksFor(shape.count)), dim3(kThreads), 0, s, op, nIn, a, b, out, shape,
                       floatPath, err);
    return hipGetLastError();
  }
  const int r = shape.rank - 1;
  // One float dtype throughout: the typed kernel, with 16-byte accesses where the rows allow.
  const bool typed = floatPath && a.dtype == out.dtype && (nIn == 1 || b.dtype == out.dtype) &&
                     (out.dtype == kF32 || out.dtype == kF16 || out.dtype == kBF16 || out.dtype == kF64);
  if (typed) {
    bool vec = out.strides[r] == 1 && rowsAligned(out, shape);
    for (int k = 0; k < nIn && vec; ++k) {
      const Opd &in = k == 0 ? a : b;
      vec = in.strides[r] == 0 || (in.strides[r] == 1 && rowsAligned(in, shape));
    }
    if (out.dtype == kF32)
      launchElemRowsT<F32T>(s, op, nIn, a, b, out, shape, vec);
    else if (out.dtype == kF16)
      launchElemRowsT<F16T>(s, op, nIn, a, b, out, shape, vec);
    else if (out.dtype == kBF16)
      launchElemRowsT<BF16T>(s, op, nIn, a, b, out, shape, vec);
    else
      launchElemRowsT<F64T>(s, op, nIn, a, b, out, shape, vec);
    return hipGetLastError();
  }
  const RowsPlan p = rowsOf(shape);
  const int64_t chunks = chunksOf(p.n, kRowsGenericV);
  hipLaunchKernelGGL(kElemRows, dim3(gridFor(p.outer.count * chunks)), dim3(kThreads), 0, s, op, nIn, a, b, out,
                     p.outer, p.n, chunks, floatPath, err);
  return hipGetLastError();
}

hipError_t copy(hipStream_t s, CopyMode mode, Opd dst, Opd src, Opd src2, Opd cond, Shape shape, long long k) {
  if (shape.count == 0) return hipSuccess;
  if (mode == kCopyPlain) {
    Opd *ops[] = {&dst, &src};
    simplifyLoop(shape, ops, 2);
    const int r = shape.rank;
    const int es = dst.esize;
    const bool sizeOk = es == 1 || es == 2 || es == 4 || es == 8;
    if (sizeOk && r >= 2 && src.strides[r - 2] == 1 && dst.strides[r - 1] == 1 && src.strides[r - 1] != 1 &&
        dst.strides[r - 2] != 1) {
      // The last two dims swapped: tiles through shared memory.
      if (es == 1)
        launchTranspose<uint8_t>(s, dst, src, shape);
      else if (es == 2)
        launchTranspose<uint16_t>(s, dst, src, shape);
      else if (es == 4)
        launchTranspose<uint32_t>(s, dst, src, shape);
      else
        launchTranspose<unsigned long long>(s, dst, src, shape);
      return hipGetLastError();
    }
    if (sizeOk && useRows(shape)) {
      const bool vec =
          dst.strides[r - 1] == 1 && src.strides[r - 1] == 1 && rowsAligned(dst, shape) && rowsAligned(src, shape);
      if (es == 1)
        launchCopyRowsT<uint8_t>(s, dst, src, shape, vec);
      else if (es == 2)
        launchCopyRowsT<uint16_t>(s, dst, src, shape, vec);
      else if (es == 4)
        launchCopyRowsT<uint32_t>(s, dst, src, shape, vec);
      else
        launchCopyRowsT<unsigned long long>(s, dst, src, shape, vec);
      return hipGetLastError();
    }
  } else if (mode == kCopyWhere) {
    Opd *ops[] = {&dst, &src, &src2, &cond};
    simplifyLoop(shape, ops, 4);
  }
  hipLaunchKernelGGL(kCopy, dim3(blocksFor(shape.count)), dim3(kThreads), 0, s, mode, dst, src, src2, cond, shape, k);
  return hipGetLastError();
}

hipError_t cast(hipStream_t s, Opd dst, Opd src, Shape shape) {
  if (shape.count == 0) return hipSuccess;
  Opd *ops[] = {&dst, &src};
  simplifyLoop(shape, ops, 2);
  if (useRows(shape)) {
    const RowsPlan p = rowsOf(shape);
    const int64_t chunks = chunksOf(p.n, kRowsGenericV);
    hipLaunchKernelGGL(kCastRows, dim3(gridFor(p.outer.count * chunks)), dim3(kThreads), 0, s, dst, src, p.outer, p.n,
                       chunks);
    return hipGetLastError();
  }
  hipLaunchKernelGGL(kCast, dim3(blocksFor(shape.count)), dim3(kThreads), 0, s, dst, src, shape);
  return hipGetLastError();
}

hipError_t fill(hipStream_t s, Opd out, Shape shape, double fvalue, long long ivalue) {
  if (shape.count == 0) return hipSuccess;
  hipLaunchKernelGGL(kFill, dim3(blocksFor(shape.count)), dim3(kThreads), 0, s, out, shape, fvalue, ivalue);
  return hipGetLastError();
}

hipError_t range(hipStream_t s, Opd out, Shape shape, Opd start, Opd delta) {
  if (shape.count == 0) return hipSuccess;
  hipLaunchKernelGGL(kRange, dim3(blocksFor(shape.count)), dim3(kThreads), 0, s, out, shape, start, delta);
  return hipGetLastError();
}

hipError_t rangeLength(hipStream_t s, Opd out, Opd start, Opd limit, Opd delta, DevError *err) {
  hipLaunchKernelGGL(kRangeLength, dim3(1), dim3(1), 0, s, out, start, limit, delta, err);
  return hipGetLastError();
}

hipError_t gather(hipStream_t s, Opd out, Shape shape, Opd data, int dataRank, const int64_t *dataSizes, Opd indices,
                  int idxRank, int axis, DevError *err) {
  if (shape.count == 0) return hipSuccess;
  hipLaunchKernelGGL(kGather, dim3(blocksFor(shape.count)), dim3(kThreads), 0, s, out, shape, data, dataRank,
                     dims(dataSizes, dataRank), indices, idxRank, axis, err);
  return hipGetLastError();
}

hipError_t gatherElements(hipStream_t s, Opd out, Shape shape, Opd data, const int64_t *dataSizes, Opd indices,
                          int axis, DevError *err) {
  if (shape.count == 0) return hipSuccess;
  hipLaunchKernelGGL(kGatherElements, dim3(blocksFor(shape.count)), dim3(kThreads), 0, s, out, shape, data,
                     dims(dataSizes, shape.rank), indices, axis, err);
  return hipGetLastError();
}

hipError_t gatherND(hipStream_t s, Opd out, Shape shape, Opd data, int r, const int64_t *dataSizes, Opd indices, int q,
                    int b, int m, DevError *err) {
  if (shape.count == 0) return hipSuccess;
  hipLaunchKernelGGL(kGatherND, dim3(blocksFor(shape.count)), dim3(kThreads), 0, s, out, shape, data, r,
                     dims(dataSizes, r), indices, q, b, m, err);
  return hipGetLastError();
}

hipError_t reduce(hipStream_t s, int kind, Opd out, Opd in, Shape outer, Shape extent) {
  if (outer.count == 0) return hipSuccess;
  const unsigned grid = rowBlocks(outer.count);
  const bool fl = in.dtype == kF32 || in.dtype == kF64 || in.dtype == kF16 || in.dtype == kBF16;
  if (in.dtype == kF64 || (!fl && (kind == 5 || kind == 7)))
    hipLaunchKernelGGL(kReduceFloat<double>, dim3(grid), dim3(kThreads), 0, s, kind, out, in, outer, extent);
  else if (fl)
    hipLaunchKernelGGL(kReduceFloat<float>, dim3(grid), dim3(kThreads), 0, s, kind, out, in, outer, extent);
  else
    hipLaunchKernelGGL(kReduceInt, dim3(grid), dim3(kThreads), 0, s, kind, out, in, outer, extent);
  return hipGetLastError();
}

hipError_t softmax(hipStream_t s, Opd out, Opd in, Shape lines, int64_t n, int64_t si, int64_t so, bool logOut) {
  if (lines.count == 0 || n == 0) return hipSuccess;
  if (in.dtype == kF64)
    hipLaunchKernelGGL(kSoftmax<double>, dim3(rowBlocks(lines.count)), dim3(kThreads), 0, s, out, in, lines, n, si, so,
                       logOut);
  else
    hipLaunchKernelGGL(kSoftmax<float>, dim3(rowBlocks(lines.count)), dim3(kThreads), 0, s, out, in, lines, n, si, so,
                       logOut);
  return hipGetLastError();
}

hipError_t leakyRelu(hipStream_t s, Opd out, Opd in, Shape shape, double alpha) {
  if (shape.count == 0) return hipSuccess;
  hipLaunchKernelGGL(kLeakyRelu, dim3(blocksFor(shape.count)), dim3(kThreads), 0, s, out, in, shape, alpha);
  return hipGetLastError();
}

hipError_t argExtreme(hipStream_t s, Opd out, Opd in, Shape lines, int64_t n, int64_t si, bool isMax, bool last) {
  if (lines.count == 0 || n == 0) return hipSuccess;
  hipLaunchKernelGGL(kArgExtreme, dim3(rowBlocks(lines.count)), dim3(kThreads), 0, s, out, in, lines, n, si, isMax,
                     last);
  return hipGetLastError();
}

hipError_t oneHot(hipStream_t s, Opd out, Shape shape, Opd indices, Opd values, int64_t offE, int64_t onE, int axis) {
  if (shape.count == 0) return hipSuccess;
  hipLaunchKernelGGL(kOneHot, dim3(blocksFor(shape.count)), dim3(kThreads), 0, s, out, shape, indices, values, offE,
                     onE, axis);
  return hipGetLastError();
}

hipError_t layerNorm(hipStream_t s, Opd out, Opd x, Opd scale, Opd bias, bool hasBias, Shape rows, Shape inner,
                     double eps) {
  if (rows.count == 0 || inner.count == 0) return hipSuccess;
  if (x.dtype == kF64)
    hipLaunchKernelGGL(kLayerNorm<double>, dim3(rowBlocks(rows.count)), dim3(kThreads), 0, s, out, x, scale, bias,
                       hasBias, rows, inner, eps);
  else
    hipLaunchKernelGGL(kLayerNorm<float>, dim3(rowBlocks(rows.count)), dim3(kThreads), 0, s, out, x, scale, bias,
                       hasBias, rows, inner, eps);
  return hipGetLastError();
}

hipError_t cumsum(hipStream_t s, Opd out, Opd in, Shape lines, int64_t n, int64_t si, int64_t so, bool exclusive,
                  bool reverse) {
  if (lines.count == 0 || n == 0) return hipSuccess;
  hipLaunchKernelGGL(kCumsum, dim3(blocksFor(lines.count)), dim3(kThreads), 0, s, out, in, lines, n, si, so, exclusive,
                     reverse);
  return hipGetLastError();
}

hipError_t matmulInt(hipStream_t s, Opd out, Opd a, Opd b, Shape batch, int64_t M, int64_t K, int64_t N, int64_t am,
                     int64_t ak, int64_t bk, int64_t bn, int64_t om, int64_t on) {
  const int64_t total = batch.count * M * N;
  if (total == 0) return hipSuccess;
  hipLaunchKernelGGL(kMatmulInt, dim3(blocksFor(total)), dim3(kThreads), 0, s, out, a, b, batch, M, K, N, am, ak, bk,
                     bn, om, on);
  return hipGetLastError();
}

hipError_t matmulSmall(hipStream_t s, Opd out, Opd a, Opd b, Shape batch, int64_t M, int64_t K, int64_t N, int64_t am,
                       int64_t ak, int64_t bk, int64_t bn, int64_t om, int64_t on) {
  const int64_t total = batch.count * M * N;
  if (total == 0) return hipSuccess;
  hipLaunchKernelGGL(kMatmulSmall, dim3(blocksFor(total * 32)), dim3(kThreads), 0, s, out, a, b, batch, M, K, N, am, ak,
                     bk, bn, om, on);
  return hipGetLastError();
}

} // namespace dq::rt::hipk
