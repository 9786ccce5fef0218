// MatMul (numpy semantics: 1-D operands are promoted and the added dim removed again, leading
// batch dims broadcast) and Gemm. Sums are accumulated in double (floats) or wrapping int64.
#include "OpFamilies.h"
#include "OpUtil.h"

namespace dynqual::reference {
namespace {

std::vector<Tensor> matmul(const OpContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype())
    ctx.fail(std::string("operand dtypes differ: ") + dtypeName(a.dtype()) + " and " + dtypeName(b.dtype()));
  if (a.dtype() == DType::Bool)
    ctx.fail("unsupported: bool MatMul");
  if (a.rank() == 0 || b.rank() == 0)
    ctx.fail("operands must have rank >= 1");
  std::vector<int64_t> aDims = a.dims(), bDims = b.dims();
  const bool aVector = aDims.size() == 1, bVector = bDims.size() == 1;
  if (aVector)
    aDims.insert(aDims.begin(), 1);
  if (bVector)
    bDims.push_back(1);
  const int64_t m = aDims[aDims.size() - 2], k = aDims.back();
  const int64_t kb = bDims[bDims.size() - 2], n = bDims.back();
  if (k != kb)
    ctx.fail("inner dims differ: " + shapeToString(a.dims()) + " x " + shapeToString(b.dims()));
  const std::vector<int64_t> aBatch(aDims.begin(), aDims.end() - 2), bBatch(bDims.begin(), bDims.end() - 2);
  const std::vector<int64_t> batch = broadcastShape(ctx, {aBatch, bBatch});
  std::vector<int64_t> outDims = batch;
  if (!aVector)
    outDims.push_back(m);
  if (!bVector)
    outDims.push_back(n);
  Tensor out(a.dtype(), outDims);
  const bool useFloat = isFloatDType(a.dtype());
  int64_t outBase = 0;
  forEachBroadcast(batch, {broadcastStrides(aBatch, batch), broadcastStrides(bBatch, batch)},
                   [&](int64_t, const std::vector<int64_t>& off) {
                     const int64_t aBase = off[0] * m * k, bBase = off[1] * k * n;
                     for (int64_t i = 0; i < m; ++i)
                       for (int64_t j = 0; j < n; ++j) {
                         const int64_t o = outBase + i * n + j;
                         if (useFloat) {
                           double sum = 0;
                           for (int64_t p = 0; p < k; ++p)
                             sum += a.getDouble(aBase + i * k + p) * b.getDouble(bBase + p * n + j);
                           out.setDouble(o, sum);
                         } else {
                           uint64_t sum = 0;
                           for (int64_t p = 0; p < k; ++p)
                             sum += static_cast<uint64_t>(a.getInt(aBase + i * k + p)) *
                                    static_cast<uint64_t>(b.getInt(bBase + p * n + j));
                           out.setInt(o, static_cast<int64_t>(sum));
                         }
                       }
                     outBase += m * n;
                   });
  return {out};
}

// Gemm: Y = alpha * A' * B' + beta * C with A' = transA ? A^T : A (M x K), B' likewise (K x N)
// and the optional C broadcast one way to [M, N]. Integer operands with alpha = beta = 1 are
// exact (wrapping); other scales go through double and truncate toward zero.
std::vector<Tensor> gemm(const OpContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype())
    ctx.fail(std::string("operand dtypes differ: ") + dtypeName(a.dtype()) + " and " + dtypeName(b.dtype()));
  if (a.dtype() == DType::Bool)
    ctx.fail("unsupported: bool Gemm");
  if (a.rank() != 2 || b.rank() != 2)
    ctx.fail("A and B must be 2-D, got " + shapeToString(a.dims()) + " and " + shapeToString(b.dims()));
  const bool transA = ctx.intAttribute("transA", 0) != 0;
  const bool transB = ctx.intAttribute("transB", 0) != 0;
  const double alpha = ctx.floatAttribute("alpha", 1.0f);
  const double beta = ctx.floatAttribute("beta", 1.0f);
  const int64_t m = a.dims()[transA ? 1 : 0], k = a.dims()[transA ? 0 : 1];
  const int64_t kb = b.dims()[transB ? 1 : 0], n = b.dims()[transB ? 0 : 1];
  if (k != kb)
    ctx.fail("inner dims differ: A " + shapeToString(a.dims()) + (transA ? " (transposed)" : "") + ", B " +
             shapeToString(b.dims()) + (transB ? " (transposed)" : ""));
  const Tensor* c = ctx.hasInput(2) ? &ctx.input(2) : nullptr;
  std::vector<int64_t> cStrides;
  const std::vector<int64_t> outDims{m, n};
  if (c) {
    if (c->dtype() != a.dtype())
      ctx.fail(std::string("C is ") + dtypeName(c->dtype()) + ", A is " + dtypeName(a.dtype()));
    if (c->rank() > 2 || broadcastShape(ctx, {c->dims(), outDims}) != outDims)
      ctx.fail("C shape " + shapeToString(c->dims()) + " does not broadcast to " + shapeToString(outDims));
    cStrides = broadcastStrides(c->dims(), outDims);
  }
  // Element (i, p) of A' and (p, j) of B' in the stored row-major operands.
  auto aAt = [&](int64_t i, int64_t p) { return transA ? p * m + i : i * k + p; };
  auto bAt = [&](int64_t p, int64_t j) { return transB ? j * k + p : p * n + j; };
  Tensor out(a.dtype(), outDims);
  const bool useFloat = isFloatDType(a.dtype());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const int64_t o = i * n + j;
      const int64_t co = c ? i * cStrides[0] + j * cStrides[1] : 0;
      if (useFloat) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += a.getDouble(aAt(i, p)) * b.getDouble(bAt(p, j));
        out.setDouble(o, alpha * sum + (c ? beta * c->getDouble(co) : 0.0));
        continue;
      }
      uint64_t sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += static_cast<uint64_t>(a.getInt(aAt(i, p))) * static_cast<uint64_t>(b.getInt(bAt(p, j)));
      if (alpha == 1.0 && beta == 1.0)
        out.setInt(o, static_cast<int64_t>(sum + (c ? static_cast<uint64_t>(c->getInt(co)) : 0)));
      else
        out.setDouble(o, alpha * static_cast<double>(static_cast<int64_t>(sum)) +
                             (c ? beta * static_cast<double>(c->getInt(co)) : 0.0));
    }
  return {out};
}

} // namespace

void registerMatMulOps(OpRegistry& registry) {
  registry.add("MatMul", matmul);
  registry.add("Gemm", gemm);
}

} // namespace dynqual::reference
