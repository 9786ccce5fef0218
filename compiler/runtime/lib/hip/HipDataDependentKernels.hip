// Hip kernels of the data-dependent and shape-input ops (semantics in Program.h, the same as the
// sim's SimDataDependentKernels.cpp). Order-dependent work runs on one thread so the result is
// the sim's bit for bit: nonzero's row-major scan, and the scatters, which apply their updates in
// row-major order (reductions round per step) and look for duplicate targets with reduction none.
// The rest is one thread per output element.
#include "HipElements.h"
#include "HipKernels.h"

namespace dq::rt::hipk {
namespace {

struct Dims {
  int64_t v[kMaxRank];
};

Dims dimsOf(const int64_t *v, int r) {
  Dims d{};
  for (int i = 0; i < r && i < kMaxRank; ++i)
    d.v[i] = v[i];
  return d;
}

#define DQ_GRID_LOOP(i, n)                                                                                             \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n);                               \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

__device__ inline bool nonZeroAt(const Opd &o, int64_t e) {
  return isFloatT(o.dtype) ? loadF(o, e) != 0.0 : loadI(o, e) != 0;
}

// ---- counts and nonzero --------------------------------------------------------------------------

__global__ void kCountNonzero(Opd out, Opd in, Shape shape) {
  __shared__ long long partial[kThreads];
  int64_t c[kMaxRank];
  long long n = 0;
  for (int64_t i = threadIdx.x; i < shape.count; i += blockDim.x) {
    coords(shape, i, c);
    n += nonZeroAt(in, offsetOf(in, c, shape.rank));
  }
  partial[threadIdx.x] = n;
  __syncthreads();
  if (threadIdx.x == 0) {
    long long total = 0;
    for (int t = 0; t < kThreads; ++t)
      total += partial[t];
    storeI(out, out.offset, total);
  }
}

__global__ void kNonzero(Opd out, Opd in, Shape shape, int64_t n, DevError *err) {
  int64_t c[kMaxRank];
  int64_t j = 0;
  for (int64_t i = 0; i < shape.count; ++i) {
    coords(shape, i, c);
    if (!nonZeroAt(in, offsetOf(in, c, shape.rank))) continue;
    if (j < n)
      for (int d = 0; d < shape.rank; ++d)
        storeI(out, out.offset + d * out.strides[0] + j * out.strides[1], c[d]);
    ++j;
  }
  if (j != n) report(err, kErrCountMismatch, j, n, 0);
}

// ---- compress ------------------------------------------------------------------------------------

__global__ void kCompressCheck(Opd cond, int64_t len, int64_t extent, int axis, DevError *err) {
  for (int64_t i = extent; i < len; ++i)
    if (nonZeroAt(cond, cond.offset + i * cond.strides[0])) {
      report(err, kErrBeyondExtent, i, extent, axis);
      return;
    }
}

__global__ void kCompress(Opd out, Shape shape, Opd data, Opd cond, int64_t len, int axis) {
  int64_t c[kMaxRank];
  DQ_GRID_LOOP(i, shape.count) {
    coords(shape, i, c);
    const int64_t e = offsetOf(out, c, shape.rank);
    // The k-th kept slice is the k-th true condition element.
    int64_t k = c[axis], j = 0;
    for (; j < len; ++j)
      if (nonZeroAt(cond, cond.offset + j * cond.strides[0]) && k-- == 0) break;
    c[axis] = j;
    copyElem(out, e, data, offsetOf(data, c, shape.rank));
  }
}

// ---- top_k ----------------------------------------------------------------------------------------

// NaN ranks above +inf; equal values keep the lower index first.
__device__ inline bool ranksBefore(const Opd &x, int64_t ea, int64_t eb, int64_t a, int64_t b, bool largest) {
  if (isFloatT(x.dtype)) {
    const double va = loadF(x, ea), vb = loadF(x, eb);
    const bool na = isnan(va), nb = isnan(vb);
    if (na || nb) return na && nb ? a < b : (largest ? na : nb);
    if (va != vb) return largest ? va > vb : va < vb;
    return a < b;
  }
  const long long va = loadI(x, ea), vb = loadI(x, eb);
  if (va != vb) return largest ? va > vb : va < vb;
  return a < b;
}

// One thread per (line, element): the element's rank in its line is its output position.
__global__ void kTopK(Opd values, Opd indices, Opd x, Shape lines, int axis, int64_t n, int64_t k, bool largest) {
  int64_t c[kMaxRank];
  DQ_GRID_LOOP(t, lines.count * n) {
    const int64_t line = t / n, i = t % n;
    coords(lines, line, c);
    const int64_t xb = offsetOf(x, c, lines.rank), xs = x.strides[axis];
    int64_t rank = 0;
    for (int64_t j = 0; j < n; ++j)
      rank += j != i && ranksBefore(x, xb + j * xs, xb + i * xs, j, i, largest);
    if (rank >= k) continue;
    c[axis] = rank;
    copyElem(values, offsetOf(values, c, lines.rank), x, xb + i * xs);
    storeI(indices, offsetOf(indices, c, lines.rank), i);
  }
}

// ---- tile and pad -----------------------------------------------------------------------------------

__global__ void kTile(Opd out, Shape shape, Opd x, Dims xSizes) {
  int64_t c[kMaxRank];
  DQ_GRID_LOOP(i, shape.count) {
    coords(shape, i, c);
    const int64_t e = offsetOf(out, c, shape.rank);
    for (int d = 0; d < shape.rank; ++d)
      c[d] %= xSizes.v[d];
    copyElem(out, e, x, offsetOf(x, c, shape.rank));
  }
}

__device__ inline int64_t padSource(int64_t i, int64_t begin, int64_t n, int mode) {
  int64_t s = i - begin;
  if (s >= 0 && s < n) return s;
  if (mode == 0 || n == 0) return -1;
  if (mode == 2) return s < 0 ? 0 : n - 1;
  if (n == 1) return 0;
  const int64_t period = 2 * (n - 1);
  s = ((s % period) + period) % period;
  return s < n ? s : period - s;
}

__global__ void kPad(Opd out, Shape shape, Opd x, Dims xSizes, Dims begins, int mode, Opd value, bool hasValue,
                     DevError *err) {
  int64_t c[kMaxRank];
  DQ_GRID_LOOP(i, shape.count) {
    coords(shape, i, c);
    const int64_t e = offsetOf(out, c, shape.rank);
    bool constant = false;
    for (int d = 0; d < shape.rank && !constant; ++d) {
      const int64_t s = padSource(c[d], begins.v[d], xSizes.v[d], mode);
      if (s < 0 && mode != 0) {
        report(err, kErrPadEmpty, d, mode, 0);
        return;
      }
      constant = s < 0;
      c[d] = s;
    }
    if (!constant)
      copyElem(out, e, x, offsetOf(x, c, shape.rank));
    else if (hasValue)
      copyElem(out, e, value, value.offset);
    else if (isFloatT(out.dtype))
      storeF(out, e, 0.0);
    else
      storeI(out, e, 0);
  }
}

// ---- scatters (one thread; `out` already holds a copy of data) --------------------------------------

__device__ inline void combine(const Opd &out, int64_t e, const Opd &upd, int64_t ue, int red) {
  if (red == 0) {
    copyElem(out, e, upd, ue);
    return;
  }
  if (isFloatT(out.dtype)) {
    const double a = loadF(out, e), b = loadF(upd, ue);
    double v;
    if (red == 1)
      v = a + b;
    else if (red == 2)
      v = a * b;
    else if (isnan(a) || isnan(b))
      v = NAN;
    else
      v = red == 3 ? (a > b ? a : b) : (a < b ? a : b);
    storeF(out, e, v);
    return;
  }
  const long long a = loadI(out, e), b = loadI(upd, ue);
  long long v;
  if (red == 1)
    v = static_cast<long long>(static_cast<unsigned long long>(a) + static_cast<unsigned long long>(b));
  else if (red == 2)
    v = static_cast<long long>(static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b));
  else
    v = red == 3 ? (a > b ? a : b) : (a < b ? a : b);
  storeI(out, e, v);
}

// Output element of index tuple t of scatter_nd, or -1 after reporting an index out of range.
__device__ int64_t tupleTarget(const Opd &out, Dims dataSizes, const Opd &indices, const Shape &tuples, int m,
                               int64_t t, DevError *err) {
  int64_t c[kMaxRank];
  coords(tuples, t, c);
  const int64_t ib = offsetOf(indices, c, tuples.rank);
  const int q = tuples.rank + 1;
  int64_t e = out.offset;
  for (int j = 0; j < m; ++j) {
    long long k = loadI(indices, ib + j * indices.strides[q - 1]);
    const int64_t n = dataSizes.v[j];
    if (k < -n || k >= n) {
      report(err, kErrIndex, k, j, n);
      return -1;
    }
    if (k < 0) k += n;
    e += k * out.strides[j];
  }
  return e;
}

__global__ void kScatterND(Opd out, Dims dataSizes, Opd indices, Shape tuples, int m, Opd updates, Shape slice, int red,
                           DevError *err) {
  int64_t sc[kMaxRank];
  for (int64_t t = 0; t < tuples.count; ++t) {
    const int64_t base = tupleTarget(out, dataSizes, indices, tuples, m, t, err);
    if (base < 0) return;
    if (red == 0)
      for (int64_t p = 0; p < t; ++p)
        if (slice.count > 0 && tupleTarget(out, dataSizes, indices, tuples, m, p, err) == base) {
          report(err, kErrDuplicate, base, 0, 0);
          return;
        }
    int64_t tc[kMaxRank];
    coords(tuples, t, tc);
    int64_t ub = updates.offset;
    for (int d = 0; d < tuples.rank; ++d)
      ub += tc[d] * updates.strides[d];
    for (int64_t s = 0; s < slice.count; ++s) {
      coords(slice, s, sc);
      int64_t e = base, ue = ub;
      for (int d = 0; d < slice.rank; ++d) {
        e += sc[d] * out.strides[m + d];
        ue += sc[d] * updates.strides[tuples.rank + d];
      }
      combine(out, e, updates, ue, red);
    }
  }
}

__device__ int64_t elementTarget(const Opd &out, Dims dataSizes, const Opd &indices, const Shape &shape, int axis,
                                 int64_t i, DevError *err) {
  int64_t c[kMaxRank];
  coords(shape, i, c);
  long long k = loadI(indices, offsetOf(indices, c, shape.rank));
  const int64_t n = dataSizes.v[axis];
  if (k < -n || k >= n) {
    report(err, kErrIndex, k, axis, n);
    return -1;
  }
  c[axis] = k < 0 ? k + n : k;
  return offsetOf(out, c, shape.rank);
}

__global__ void kScatterElements(Opd out, Dims dataSizes, Opd indices, Opd updates, Shape shape, int axis, int red,
                                 DevError *err) {
  int64_t c[kMaxRank];
  for (int64_t i = 0; i < shape.count; ++i) {
    const int64_t e = elementTarget(out, dataSizes, indices, shape, axis, i, err);
    if (e < 0) return;
    if (red == 0)
      for (int64_t p = 0; p < i; ++p)
        if (elementTarget(out, dataSizes, indices, shape, axis, p, err) == e) {
          report(err, kErrDuplicate, e, 0, 0);
          return;
        }
    coords(shape, i, c);
    combine(out, e, updates, offsetOf(updates, c, shape.rank), red);
  }
}

} // namespace

hipError_t countNonzero(hipStream_t s, Opd out, Opd in, Shape shape) {
  hipLaunchKernelGGL(kCountNonzero, dim3(1), dim3(kThreads), 0, s, out, in, shape);
  return hipGetLastError();
}

hipError_t nonzero(hipStream_t s, Opd out, Opd in, Shape shape, int64_t n, DevError *err) {
  hipLaunchKernelGGL(kNonzero, dim3(1), dim3(1), 0, s, out, in, shape, n, err);
  return hipGetLastError();
}

hipError_t compress(hipStream_t s, Opd out, Shape shape, Opd data, Opd cond, int64_t condLen, int axis, int64_t extent,
                    DevError *err) {
  hipLaunchKernelGGL(kCompressCheck, dim3(1), dim3(1), 0, s, cond, condLen, extent, axis, err);
  hipError_t e = hipGetLastError();
  if (e != hipSuccess || shape.count == 0) return e;
  hipLaunchKernelGGL(kCompress, dim3(blocksFor(shape.count)), dim3(kThreads), 0, s, out, shape, data, cond, condLen,
                     axis);
  return hipGetLastError();
}

hipError_t topK(hipStream_t s, Opd values, Opd indices, Opd x, Shape lines, int axis, int64_t n, int64_t k,
                bool largest) {
  if (lines.count * n == 0 || k == 0) return hipSuccess;
  hipLaunchKernelGGL(kTopK, dim3(blocksFor(lines.count * n)), dim3(kThreads), 0, s, values, indices, x, lines, axis, n,
                     k, largest);
  return hipGetLastError();
}

hipError_t tile(hipStream_t s, Opd out, Shape shape, Opd x, const int64_t *xSizes) {
  if (shape.count == 0) return hipSuccess;
  hipLaunchKernelGGL(kTile, dim3(blocksFor(shape.count)), dim3(kThreads), 0, s, out, shape, x,
                     dimsOf(xSizes, shape.rank));
  return hipGetLastError();
}

hipError_t pad(hipStream_t s, Opd out, Shape shape, Opd x, const int64_t *xSizes, const int64_t *begins, int mode,
               Opd value, bool hasValue, DevError *err) {
  if (shape.count == 0) return hipSuccess;
  hipLaunchKernelGGL(kPad, dim3(blocksFor(shape.count)), dim3(kThreads), 0, s, out, shape, x,
                     dimsOf(xSizes, shape.rank), dimsOf(begins, shape.rank), mode, value, hasValue, err);
  return hipGetLastError();
}

hipError_t scatterND(hipStream_t s, Opd out, const int64_t *dataSizes, int r, Opd indices, Shape tuples, int m,
                     Opd updates, Shape slice, int reduction, DevError *err) {
  hipLaunchKernelGGL(kScatterND, dim3(1), dim3(1), 0, s, out, dimsOf(dataSizes, r), indices, tuples, m, updates, slice,
                     reduction, err);
  return hipGetLastError();
}

hipError_t scatterElements(hipStream_t s, Opd out, const int64_t *dataSizes, Opd indices, Opd updates, Shape shape,
                           int axis, int reduction, DevError *err) {
  hipLaunchKernelGGL(kScatterElements, dim3(1), dim3(1), 0, s, out, dimsOf(dataSizes, shape.rank), indices, updates,
                     shape, axis, reduction, err);
  return hipGetLastError();
}

} // namespace dq::rt::hipk
