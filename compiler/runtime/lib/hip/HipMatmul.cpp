// `hip` device: matmul through the vendor BLAS (strided-batched GEMM, broadcast batches folded
// into rows), the opt-in decode GEMV, and integer matmul.
#include "HipDeviceImpl.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace dq::rt::hipdev {
namespace {

/// Collapses a batch of (size, stride) pairs into one stride when element i of the flattened
/// batch sits at i * stride; false when it does not.
inline bool batchStride(const std::vector<int64_t> &sizes, const std::vector<int64_t> &strides, int64_t &out) {
  int64_t expected = -1;
  bool any = false;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 1) continue;
    if (!any) {
      any = true;
      out = strides[d];
      expected = strides[d] * sizes[d];
      continue;
    }
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  if (!any) out = 0;
  return true;
}

} // namespace

bool HipDevice::gemmView(const Operand &x, const std::vector<int64_t> &batch, bool writable, GemmOpd &g) {
  const size_t rx = x.sizes.size();
  const int64_t R = x.sizes[rx - 2], C = x.sizes[rx - 1], sr = x.strides[rx - 2], sc = x.strides[rx - 1];
  // Batch dims x lacks or has as 1 are broadcast: stride 0 over the full batch extent.
  std::vector<int64_t> bs = batch, bst(batch.size(), 0);
  for (size_t d = 0; d + 2 < rx; ++d) {
    const size_t o = d + batch.size() - (rx - 2);
    bst[o] = x.sizes[d] == 1 ? 0 : x.strides[d];
  }
  int64_t bstride = 0;
  if (!batchStride(bs, bst, bstride)) return false;
  if (writable && numel(batch) > 1 && bstride == 0) return false;
  if (bstride < 0) return false;
  const size_t es = dtypeSize(x.dtype);
  if ((sc == 1 || C == 1) && (R == 1 || sr >= C)) {
    g.colMajor = false;
    g.ld = R == 1 ? std::max<int64_t>(C, 1) : sr;
  } else if (!writable && (sr == 1 || R == 1) && (C == 1 || sc >= R)) {
    g.colMajor = true;
    g.ld = C == 1 ? std::max<int64_t>(R, 1) : sc;
  } else {
    return false;
  }
  if (g.ld <= 0 || g.ld > INT32_MAX) return false;
  g.ptr = x.base + x.offset * static_cast<int64_t>(es);
  g.batchStride = bstride;
  return true;
}

Operand HipDevice::materialize(const Operand &x, const std::vector<int64_t> &batch, std::vector<void *> &temps) {
  const size_t rx = x.sizes.size();
  std::vector<int64_t> shape = batch;
  shape.push_back(x.sizes[rx - 2]);
  shape.push_back(x.sizes[rx - 1]);
  Operand t;
  t.role = x.role;
  t.index = x.index;
  t.buffer = x.buffer;
  t.dtype = x.dtype;
  t.sizes = shape;
  t.strides.assign(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    t.strides[i - 1] = t.strides[i] * shape[i];
  void *p = nullptr;
  check(hipMallocAsync(&p, std::max<uint64_t>(1, static_cast<uint64_t>(numel(shape)) * dtypeSize(x.dtype)), stream_),
        "matmul temporary");
  temps.push_back(p);
  t.base = static_cast<char *>(p);
  return t;
}

bool HipDevice::tryGemv(const Operand &a, const Operand &b, Operand &out, int64_t M, int64_t K, int64_t N,
                        const std::vector<int64_t> &batch) {
  if (!gemvEnabled_ || M != 1 || numel(batch) != 1) return false;
  if (a.dtype != DType::F32 && a.dtype != DType::F16 && a.dtype != DType::BF16) return false;
  const int t = static_cast<int>(a.dtype);
  const int64_t vec = hipk::gemvVectorWidth(t);
  const size_t rb = b.sizes.size(), ro = out.sizes.size(), ra = a.sizes.size();
  const int64_t ldw = K == 1 ? N : b.strides[rb - 2];
  const size_t es = dtypeSize(a.dtype);
  const char *w = b.base + b.offset * static_cast<int64_t>(es);
  if (N % vec != 0 || b.strides[rb - 1] != 1 || ldw < N || ldw % vec != 0 || out.strides[ro - 1] != 1 ||
      reinterpret_cast<uintptr_t>(w) % 16 != 0 || K > INT32_MAX || N > INT32_MAX)
    return false;
  const hipk::GemvPlan plan = hipk::gemvPlan(t, K, N, multiprocessors_);
  if (plan.partialFloats > gemvPartialCap_) {
    if (gemvPartials_) check(hipFreeAsync(gemvPartials_, stream_), "GEMV workspace");
    gemvPartials_ = nullptr;
    check(hipMallocAsync(reinterpret_cast<void **>(&gemvPartials_), plan.partialFloats * sizeof(float), stream_),
          "GEMV workspace");
    gemvPartialCap_ = plan.partialFloats;
  }
  if (plan.chunks > 1 && plan.tiles > gemvCounterCap_) {
    if (gemvCounters_) check(hipFreeAsync(gemvCounters_, stream_), "GEMV counters");
    gemvCounters_ = nullptr;
    check(hipMallocAsync(reinterpret_cast<void **>(&gemvCounters_), plan.tiles * sizeof(unsigned), stream_),
          "GEMV counters");
    check(hipMemsetAsync(gemvCounters_, 0, plan.tiles * sizeof(unsigned), stream_), "GEMV counters");
    gemvCounterCap_ = plan.tiles;
  }
  launched(hipk::gemv(stream_, t, a.base + a.offset * static_cast<int64_t>(es), a.strides[ra - 1], w, ldw,
                      out.base + out.offset * static_cast<int64_t>(es), K, N, plan, gemvPartials_, gemvCounters_));
  return true;
}

void HipDevice::kMatmul(std::vector<Operand> &ins, std::vector<Operand> &outs) {
  const kernel::Matmul mm = kernel::validateMatmul(ins, outs);
  const Operand &a = ins[0], &b = ins[1];
  Operand &out = outs[0];
  const size_t ra = a.sizes.size(), rb = b.sizes.size(), ro = out.sizes.size();
  const int64_t M = mm.M, K = mm.K, N = mm.N;
  const std::vector<int64_t> &batch = mm.batch;
  checkRank(ro);
  if (numel(out.sizes) == 0) return;
  const bool fl = isFloat(a.dtype);
  if (fl && K == 0) {
    launched(hipk::fill(stream_, aligned(out, ro), shapeOf(out.sizes), 0.0, 0));
    return;
  }
  // Integers (wrap-around, as the sim) and small batched float products take the direct kernel.
  if (!fl || (smallMatmul_ && isSmallBatchedMatmul(batch, M, K, N))) {
    hipk::Shape bsh = shapeOf(batch);
    auto batchOpd = [&](const Operand &x) {
      Operand v = x;
      v.sizes.resize(x.sizes.size() - 2);
      v.strides.resize(x.strides.size() - 2);
      return aligned(v, batch.size());
    };
    launched((fl ? hipk::matmulSmall : hipk::matmulInt)(stream_, batchOpd(out), batchOpd(a), batchOpd(b), bsh, M, K, N,
                                                        a.strides[ra - 2], a.strides[ra - 1], b.strides[rb - 2],
                                                        b.strides[rb - 1], out.strides[ro - 2], out.strides[ro - 1]));
    return;
  }
  if (tryGemv(a, b, out, M, K, N, batch)) return;
  Operand fa = a, fb = b, fo = out;
  std::vector<int64_t> fbatch = batch;
  int64_t fM = M;
  foldBroadcastBatch(fa, fb, fo, fbatch, fM);
  blasMatmul(fa, fb, fo, fbatch, fM, K, N);
}

bool HipDevice::isSmallBatchedMatmul(const std::vector<int64_t> &batch, int64_t M, int64_t K, int64_t N) {
  const int64_t b = numel(batch);
  return b > 1 && M <= 16 && K <= 8192 && b * M * N <= (int64_t{1} << 20);
}

void HipDevice::foldBroadcastBatch(Operand &a, Operand &b, Operand &out, std::vector<int64_t> &batch, int64_t &M) {
  while (!batch.empty() && batch.back() > 1) {
    const size_t ra = a.sizes.size(), rb = b.sizes.size(), ro = out.sizes.size();
    const int64_t G = batch.back();
    if (ra != ro || ra < 3 || a.sizes[ra - 3] != G || (rb >= 3 && b.sizes[rb - 3] != 1)) return;
    auto rowStride = [&](const Operand &x, size_t r, int64_t &stride) {
      stride = M == 1 ? x.strides[r - 3] : x.strides[r - 2];
      return M == 1 || x.strides[r - 3] == M * x.strides[r - 2];
    };
    int64_t sa = 0, so = 0;
    if (!rowStride(a, ra, sa) || !rowStride(out, ro, so)) return;
    auto fold = [&](Operand &x, size_t r, int64_t stride) {
      x.sizes[r - 3] = G * M;
      x.strides[r - 3] = stride;
      x.sizes.erase(x.sizes.begin() + static_cast<std::ptrdiff_t>(r - 2));
      x.strides.erase(x.strides.begin() + static_cast<std::ptrdiff_t>(r - 2));
    };
    fold(a, ra, sa);
    fold(out, ro, so);
    if (rb >= 3) {
      b.sizes.erase(b.sizes.begin() + static_cast<std::ptrdiff_t>(rb - 3));
      b.strides.erase(b.strides.begin() + static_cast<std::ptrdiff_t>(rb - 3));
    }
    batch.pop_back();
    M *= G;
  }
}

void HipDevice::blasMatmul(const Operand &a, const Operand &b, Operand &out, const std::vector<int64_t> &batch,
                           int64_t M, int64_t K, int64_t N) {
  if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || numel(batch) > INT32_MAX)
    throw RuntimeError("unsupported: kernel 'matmul' on hip: dims beyond the BLAS int range");
  std::vector<void *> temps;
  GemmOpd ga, gb, gc;
  Operand am = a, bm = b;
  if (!gemmView(a, batch, false, ga)) {
    am = materialize(a, batch, temps);
    copyView(am, a);
    gemmView(am, batch, false, ga);
  }
  if (!gemmView(b, batch, false, gb)) {
    bm = materialize(b, batch, temps);
    copyView(bm, b);
    gemmView(bm, batch, false, gb);
  }
  Operand om = out;
  const bool direct = gemmView(out, batch, true, gc);
  if (!direct) {
    om = materialize(out, batch, temps);
    gemmView(om, batch, true, gc);
  }
  // Row-major C[M,N] = A[M,K] B[K,N] is column-major C^T[N,M] = B^T[N,K] A^T[K,M].
  hipblasDatatype_t t;
  hipblasComputeType_t ct = HIPBLAS_COMPUTE_32F;
  const float one = 1.0f, zero = 0.0f;
  const double oned = 1.0, zerod = 0.0;
  const void *alpha = &one, *beta = &zero;
  switch (a.dtype) {
  case DType::F32:
    t = HIPBLAS_R_32F;
    break;
  case DType::F16:
    t = HIPBLAS_R_16F;
    break;
  case DType::BF16:
    t = HIPBLAS_R_16B;
    break;
  default:
    t = HIPBLAS_R_64F;
    ct = HIPBLAS_COMPUTE_64F;
    alpha = &oned;
    beta = &zerod;
    break;
  }
  const int64_t batchCount = std::max<int64_t>(1, numel(batch));
  hipblasStatus_t st = hipblasGemmStridedBatchedEx(
      blas_, gb.colMajor ? HIPBLAS_OP_T : HIPBLAS_OP_N, ga.colMajor ? HIPBLAS_OP_T : HIPBLAS_OP_N, static_cast<int>(N),
      static_cast<int>(M), static_cast<int>(K), alpha, gb.ptr, t, static_cast<int>(gb.ld), gb.batchStride, ga.ptr, t,
      static_cast<int>(ga.ld), ga.batchStride, beta, gc.ptr, t, static_cast<int>(gc.ld), gc.batchStride,
      static_cast<int>(batchCount), ct, HIPBLAS_GEMM_DEFAULT);
  pending_ = true;
  if (st != HIPBLAS_STATUS_SUCCESS) {
    for (void *p : temps)
      (void)hipFreeAsync(p, stream_);
    throw RuntimeError(std::string("kernel 'matmul' on hip: BLAS gemm failed: ") + hipblasStatusToString(st));
  }
  if (!direct) copyView(out, om);
  for (void *p : temps)
    (void)hipFreeAsync(p, stream_);
}

} // namespace dq::rt::hipdev
