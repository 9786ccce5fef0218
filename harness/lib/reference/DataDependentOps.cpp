// Ops whose output extents depend on data or on shape inputs: NonZero, Compress, TopK, Tile, Pad.
#include "OpFamilies.h"
#include "OpUtil.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dynqual::reference {
namespace {

// Float elements compare as doubles (NaN is nonzero), everything else as int64.
bool isNonZero(const Tensor& t, int64_t i) {
  return isFloatDType(t.dtype()) ? t.getDouble(i) != 0.0 : t.getInt(i) != 0;
}

// NonZero-9/13: indices of the nonzero elements, one row per input axis, in row-major order.
std::vector<Tensor> nonZero(const OpContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (isNonZero(x, i))
      hits.push_back(i);
  const int64_t n = static_cast<int64_t>(hits.size()), r = x.rank();
  Tensor out(DType::Int64, {r, n});
  const std::vector<int64_t> strides = rowMajorStrides(x.dims());
  for (int64_t j = 0; j < n; ++j)
    for (int64_t d = 0; d < r; ++d)
      out.setInt(d * n + j, (hits[j] / strides[d]) % x.dims()[d]);
  return {out};
}

// Compress-9/11: the slices along `axis` (or the elements of the flattened input, without axis)
// whose condition is true. A condition shorter than the extent drops the rest; a longer one may
// only hold false beyond the extent (numpy.compress raises there too).
std::vector<Tensor> compress(const OpContext& ctx) {
  Tensor data = ctx.input(0);
  const Tensor& cond = ctx.input(1);
  if (cond.rank() != 1)
    ctx.fail("condition must have rank 1, got shape " + shapeToString(cond.dims()));
  int64_t axis = 0;
  if (ctx.hasAttribute("axis")) {
    if (data.rank() == 0)
      ctx.fail("axis given for a rank-0 input");
    axis = normalizeAxis(ctx, ctx.intAttribute("axis", 0), data.rank());
  } else {
    data = data.reshaped({data.numel()});
  }
  const int64_t extent = data.dims()[axis];
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond.numel(); ++i) {
    if (cond.getInt(i) == 0)
      continue;
    if (i >= extent)
      ctx.fail("condition is true at " + std::to_string(i) + ", beyond the extent " + std::to_string(extent) +
               " of axis " + std::to_string(axis));
    keep.push_back(i);
  }
  std::vector<int64_t> outDims = data.dims();
  outDims[axis] = static_cast<int64_t>(keep.size());
  Tensor out(data.dtype(), outDims);
  const int64_t outer = shapeNumel({data.dims().begin(), data.dims().begin() + axis});
  const int64_t inner = shapeNumel({data.dims().begin() + axis + 1, data.dims().end()});
  const int64_t kept = static_cast<int64_t>(keep.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < kept; ++k)
      for (int64_t i = 0; i < inner; ++i)
        copyElement(data, (o * extent + keep[k]) * inner + i, out, (o * kept + k) * inner + i);
  return {out};
}

// Total order used by TopK: NaN ranks above +inf (so it comes first when largest=1 and last when
// largest=0); equal values keep the lower index first.
bool ranksBefore(const Tensor& x, int64_t a, int64_t b, bool largest) {
  if (isFloatDType(x.dtype())) {
    const double va = x.getDouble(a), vb = x.getDouble(b);
    const bool na = std::isnan(va), nb = std::isnan(vb);
    if (na || nb)
      return na && nb ? a < b : (largest ? na : nb);
    if (va != vb)
      return largest ? va > vb : va < vb;
    return a < b;
  }
  const int64_t va = x.getInt(a), vb = x.getInt(b);
  if (va != vb)
    return largest ? va > vb : va < vb;
  return a < b;
}

// TopK-1 (k attribute), 10 (k input), 11 (largest, sorted, negative axis). Results are always
// sorted (sorted=0 leaves the order unspecified, so sorted order conforms).
std::vector<Tensor> topK(const OpContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0)
    ctx.fail("input must have rank >= 1");
  const int64_t k = ctx.opset() < 10 ? ctx.requiredIntAttribute("k") : intScalar(ctx, ctx.input(1), "k");
  const int64_t axis = normalizeAxis(ctx, ctx.intAttribute("axis", -1), x.rank());
  const bool largest = ctx.intAttribute("largest", 1) != 0;
  const int64_t n = x.dims()[axis];
  if (k < 0 || k > n)
    ctx.fail("k = " + std::to_string(k) + " is outside [0, " + std::to_string(n) + "] (extent of axis " +
             std::to_string(axis) + ")");
  std::vector<int64_t> outDims = x.dims();
  outDims[axis] = k;
  Tensor values(x.dtype(), outDims), indices(DType::Int64, outDims);
  const int64_t outer = shapeNumel({x.dims().begin(), x.dims().begin() + axis});
  const int64_t inner = shapeNumel({x.dims().begin() + axis + 1, x.dims().end()});
  std::vector<int64_t> order(static_cast<std::size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return ranksBefore(x, base + a * inner, base + b * inner, largest);
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t to = (o * k + j) * inner + i;
        copyElement(x, base + order[j] * inner, values, to);
        indices.setInt(to, order[j]);
      }
    }
  return {values, indices};
}

// Tile-6/13: out[i] = in[i mod dims] with out dims = dims * repeats.
std::vector<Tensor> tile(const OpContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> repeats = intValues(ctx, ctx.input(1), "repeats");
  if (static_cast<int64_t>(repeats.size()) != x.rank())
    ctx.fail("repeats has " + std::to_string(repeats.size()) + " values for an input of rank " +
             std::to_string(x.rank()));
  std::vector<int64_t> outDims = x.dims();
  for (std::size_t d = 0; d < outDims.size(); ++d) {
    if (repeats[d] < 0)
      ctx.fail("repeats[" + std::to_string(d) + "] = " + std::to_string(repeats[d]) + " is negative");
    outDims[d] *= repeats[d];
  }
  ctx.checkOutputSize(outDims);
  Tensor out(x.dtype(), outDims);
  const std::vector<int64_t> inStrides = rowMajorStrides(x.dims()), outStrides = rowMajorStrides(outDims);
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t src = 0;
    for (std::size_t d = 0; d < outDims.size(); ++d)
      src += ((o / outStrides[d]) % outDims[d] % x.dims()[d]) * inStrides[d];
    copyElement(x, src, out, o);
  }
  return {out};
}

// Source index along one axis for Pad's output index `i`, or -1 for the constant value. `begin`
// may be negative (cropping).
int64_t padSource(const OpContext& ctx, int64_t i, int64_t begin, int64_t n, const std::string& mode) {
  int64_t s = i - begin;
  if (s >= 0 && s < n)
    return s;
  if (mode == "constant")
    return -1;
  if (n == 0)
    ctx.fail("mode '" + mode + "' cannot pad an axis of extent 0");
  if (mode == "edge")
    return s < 0 ? 0 : n - 1;
  // reflect: mirror about the edge elements (edge not repeated); period 2(n-1), repeated as numpy.
  if (n == 1)
    return 0;
  const int64_t period = 2 * (n - 1);
  s = ((s % period) + period) % period;
  return s < n ? s : period - s;
}

// Pad-2 (pads and value attributes), 11/13 (pads and constant_value inputs), 18 (axes input).
// Modes constant, reflect, edge; negative pads remove elements. Pad-19's wrap mode is refused.
std::vector<Tensor> pad(const OpContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  std::string mode = "constant";
  if (const auto* a = ctx.attribute("mode"))
    mode = a->s();
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    ctx.fail("unsupported: mode '" + mode + "'");
  std::vector<int64_t> pads;
  Tensor value(x.dtype(), {});
  if (ctx.opset() < 11) {
    pads = ctx.intsAttribute("pads");
    value.setDouble(0, ctx.floatAttribute("value", 0.0f));
  } else {
    pads = intValues(ctx, ctx.input(1), "pads");
    if (ctx.hasInput(2) && ctx.input(2).numel() > 0) {
      if (ctx.input(2).dtype() != x.dtype() || ctx.input(2).numel() != 1)
        ctx.fail("constant_value must be one element of the input's dtype");
      copyElement(ctx.input(2), 0, value, 0);
    }
  }
  std::vector<int64_t> axes;
  if (ctx.hasInput(3))
    for (int64_t a : intValues(ctx, ctx.input(3), "axes"))
      axes.push_back(normalizeAxis(ctx, a, r));
  else
    for (int64_t a = 0; a < r; ++a)
      axes.push_back(a);
  if (pads.size() != 2 * axes.size())
    ctx.fail("pads has " + std::to_string(pads.size()) + " values, expected " + std::to_string(2 * axes.size()));
  std::vector<int64_t> begin(r, 0), outDims = x.dims();
  std::vector<bool> seen(r, false);
  for (std::size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = axes[k];
    if (seen[a])
      ctx.fail("axis " + std::to_string(a) + " is repeated");
    seen[a] = true;
    begin[a] = pads[k];
    outDims[a] += pads[k] + pads[k + axes.size()];
    if (outDims[a] < 0)
      ctx.fail("pads make axis " + std::to_string(a) + " negative");
  }
  ctx.checkOutputSize(outDims);
  Tensor out(x.dtype(), outDims);
  const std::vector<int64_t> inStrides = rowMajorStrides(x.dims()), outStrides = rowMajorStrides(outDims);
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t src = 0;
    bool constant = false;
    for (int64_t d = 0; d < r && !constant; ++d) {
      const int64_t s = padSource(ctx, (o / outStrides[d]) % outDims[d], begin[d], x.dims()[d], mode);
      constant = s < 0;
      src += s * inStrides[d];
    }
    if (constant)
      copyElement(value, 0, out, o);
    else
      copyElement(x, src, out, o);
  }
  return {out};
}

} // namespace

void registerDataDependentOps(OpRegistry& registry) {
  registry.add("NonZero", nonZero);
  registry.add("Compress", compress);
  registry.add("TopK", topK);
  registry.add("Tile", tile);
  registry.add("Pad", pad);
}

} // namespace dynqual::reference
