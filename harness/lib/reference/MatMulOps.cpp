// MatMul with numpy semantics: 1-D operands are promoted (and the added dim removed again),
// leading batch dims broadcast. Sums are accumulated in double (floats) or wrapping int64.
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

} // namespace

void registerMatMulOps(OpRegistry& registry) { registry.add("MatMul", matmul); }

} // namespace dynqual::reference
