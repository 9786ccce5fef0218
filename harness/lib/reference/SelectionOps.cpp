// Ops that pick positions along an axis: ArgMax, ArgMin, OneHot.
#include "OpFamilies.h"
#include "OpUtil.h"

#include <cmath>

namespace dynqual::reference {
namespace {

// ArgMax / ArgMin: int64 index of the extreme along 'axis' (default 0); keepdims (default 1);
// select_last_index (opset 12+, default 0) takes the last of equal extremes instead of the
// first. NaN is the extreme, as numpy argmax / argmin (which the ONNX reference uses).
OpEvaluator argExtreme(bool isMax) {
  return [isMax](const OpContext& ctx) -> std::vector<Tensor> {
    const Tensor& in = ctx.input(0);
    if (in.dtype() == DType::Bool)
      ctx.fail("unsupported: bool operand");
    if (in.rank() == 0)
      ctx.fail("operand must have rank >= 1");
    const int64_t axis = normalizeAxis(ctx, ctx.intAttribute("axis", 0), in.rank());
    const bool keep = ctx.intAttribute("keepdims", 1) != 0;
    const bool last = ctx.intAttribute("select_last_index", 0) != 0;
    const int64_t n = in.dims()[axis];
    std::vector<int64_t> outDims;
    for (int64_t d = 0; d < in.rank(); ++d)
      if (d != axis || keep)
        outDims.push_back(d == axis ? 1 : in.dims()[d]);
    const int64_t outer = shapeNumel({in.dims().begin(), in.dims().begin() + axis});
    const int64_t inner = shapeNumel({in.dims().begin() + axis + 1, in.dims().end()});
    if (n == 0 && outer * inner > 0)
      ctx.fail("the reduced axis has extent 0");
    Tensor out(DType::Int64, outDims);
    const bool useFloat = isFloatDType(in.dtype());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        auto elem = [&](int64_t j) { return (o * n + j) * inner + i; };
        int64_t best = 0;
        for (int64_t j = 1; j < n; ++j) {
          bool better, tie;
          if (useFloat) {
            const double v = in.getDouble(elem(j)), b = in.getDouble(elem(best));
            if (std::isnan(b)) {
              better = false;
              tie = std::isnan(v);
            } else if (std::isnan(v)) {
              better = true;
              tie = false;
            } else {
              better = isMax ? v > b : v < b;
              tie = v == b;
            }
          } else {
            const int64_t v = in.getInt(elem(j)), b = in.getInt(elem(best));
            better = isMax ? v > b : v < b;
            tie = v == b;
          }
          if (better || (last && tie))
            best = j;
        }
        out.setInt(o * inner + i, best);
      }
    return {out};
  };
}

// OneHot-11: depth (one element, any numeric type, truncated) inserted at 'axis' (default -1);
// values = [off, on]. An index in [-depth, depth) (negative counts from depth; float indices are
// truncated) marks one position 'on'; any other index leaves its row 'off'.
std::vector<Tensor> oneHot(const OpContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Tensor& depthT = ctx.input(1);
  const Tensor& values = ctx.input(2);
  if (indices.dtype() == DType::Bool || depthT.dtype() == DType::Bool)
    ctx.fail("unsupported: bool indices or depth");
  if (depthT.numel() != 1)
    ctx.fail("depth must hold one element");
  if (values.rank() != 1 || values.numel() != 2)
    ctx.fail("values must be a 1-D tensor of 2 elements [off, on]");
  const double depthD = depthT.getDouble(0);
  if (!std::isfinite(depthD) || std::trunc(depthD) < 1)
    ctx.fail("depth must be a positive finite number");
  const auto depth = static_cast<int64_t>(std::trunc(depthD));
  const int64_t axis = normalizeAxis(ctx, ctx.intAttribute("axis", -1), indices.rank() + 1);
  std::vector<int64_t> outDims = indices.dims();
  outDims.insert(outDims.begin() + axis, depth);
  const int64_t outer = shapeNumel({indices.dims().begin(), indices.dims().begin() + axis});
  const int64_t inner = shapeNumel({indices.dims().begin() + axis, indices.dims().end()});
  ctx.checkOutputSize(outDims);
  Tensor out(values.dtype(), outDims);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t at = o * inner + i;
      int64_t k = depth; // off everywhere unless in range
      if (isFloatDType(indices.dtype())) {
        const double v = indices.getDouble(at);
        if (std::isfinite(v) && std::fabs(v) < 9.0e18)
          k = static_cast<int64_t>(std::trunc(v));
      } else {
        k = indices.getInt(at);
      }
      if (k < 0 && k >= -depth)
        k += depth;
      for (int64_t j = 0; j < depth; ++j)
        copyElement(values, j == k ? 1 : 0, out, (o * depth + j) * inner + i);
    }
  return {out};
}

} // namespace

void registerSelectionOps(OpRegistry& registry) {
  registry.add("ArgMax", argExtreme(true));
  registry.add("ArgMin", argExtreme(false));
  registry.add("OneHot", oneHot);
}

} // namespace dynqual::reference
