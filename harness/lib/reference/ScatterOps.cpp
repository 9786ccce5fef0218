// ScatterND and ScatterElements: a copy of data with updates written (or combined) at indices.
#include "OpFamilies.h"
#include "OpUtil.h"

#include <cmath>
#include <set>

namespace dynqual::reference {
namespace {

enum class Reduction { None, Add, Mul, Max, Min };

// reduction attribute: opset 16 adds add/mul, opset 18 max/min.
Reduction reductionOf(const OpContext& ctx) {
  std::string r = "none";
  if (const auto* a = ctx.attribute("reduction"))
    r = a->s();
  if (r == "none")
    return Reduction::None;
  if (r == "add")
    return Reduction::Add;
  if (r == "mul")
    return Reduction::Mul;
  if (r == "max")
    return Reduction::Max;
  if (r == "min")
    return Reduction::Min;
  ctx.fail("unsupported: reduction '" + r + "'");
}

// out[to] = reduce(out[to], updates[from]). Floats combine in double and round to the dtype at
// every step (the order is the row-major order of the updates); integers wrap; max/min propagate
// NaN.
void combine(Tensor& out, int64_t to, const Tensor& updates, int64_t from, Reduction red) {
  if (red == Reduction::None) {
    copyElement(updates, from, out, to);
    return;
  }
  if (isFloatDType(out.dtype())) {
    const double a = out.getDouble(to), b = updates.getDouble(from);
    double v = 0;
    switch (red) {
    case Reduction::Add:
      v = a + b;
      break;
    case Reduction::Mul:
      v = a * b;
      break;
    case Reduction::Max:
      v = std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
      break;
    default:
      v = std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
      break;
    }
    out.setDouble(to, v);
    return;
  }
  const uint64_t a = static_cast<uint64_t>(out.getInt(to)), b = static_cast<uint64_t>(updates.getInt(from));
  int64_t v = 0;
  switch (red) {
  case Reduction::Add:
    v = static_cast<int64_t>(a + b);
    break;
  case Reduction::Mul:
    v = static_cast<int64_t>(a * b);
    break;
  case Reduction::Max:
    v = std::max(static_cast<int64_t>(a), static_cast<int64_t>(b));
    break;
  default:
    v = std::min(static_cast<int64_t>(a), static_cast<int64_t>(b));
    break;
  }
  out.setInt(to, v);
}

int64_t checkedIndex(const OpContext& ctx, int64_t index, int64_t dim, int64_t axis) {
  if (index < -dim || index >= dim)
    ctx.fail("index " + std::to_string(index) + " is out of range for axis " + std::to_string(axis) + " of size " +
             std::to_string(dim));
  return index < 0 ? index + dim : index;
}

// Duplicate targets with reduction none are undefined in ONNX; both ops refuse them.
void checkUnique(const OpContext& ctx, std::set<int64_t>& seen, int64_t offset, Reduction red) {
  if (red == Reduction::None && !seen.insert(offset).second)
    ctx.fail("two updates write data element " + std::to_string(offset) + " with reduction 'none' (undefined in ONNX)");
}

// ScatterND-11/13/16/18: indices [..., k] name slices data[idx_0 .. idx_{k-1}, ...]; updates have
// dims indices.dims[:-1] ++ data.dims[k:]. Negative indices count from the end.
std::vector<Tensor> scatterND(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indicesT = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  const Reduction red = reductionOf(ctx);
  const int64_t r = data.rank(), q = indicesT.rank();
  if (q < 1 || r < 1)
    ctx.fail("data and indices must have rank >= 1");
  const int64_t k = indicesT.dims().back();
  if (k < 1 || k > r)
    ctx.fail("indices last dim " + std::to_string(k) + " must be in [1, " + std::to_string(r) + "]");
  std::vector<int64_t> expect(indicesT.dims().begin(), indicesT.dims().end() - 1);
  expect.insert(expect.end(), data.dims().begin() + k, data.dims().end());
  if (updates.dims() != expect)
    ctx.fail("updates shape " + shapeToString(updates.dims()) + ", expected " + shapeToString(expect));
  if (updates.dtype() != data.dtype())
    ctx.fail("updates must have data's dtype");
  const std::vector<int64_t> indices = intValues(ctx, indicesT, "indices");
  Tensor out = data;
  const std::vector<int64_t> strides = rowMajorStrides(data.dims());
  const int64_t slice = shapeNumel({data.dims().begin() + k, data.dims().end()});
  const int64_t tuples = shapeNumel({indicesT.dims().begin(), indicesT.dims().end() - 1});
  std::set<int64_t> seen;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j)
      offset += checkedIndex(ctx, indices[t * k + j], data.dims()[j], j) * strides[j];
    for (int64_t e = 0; e < slice; ++e) {
      checkUnique(ctx, seen, offset + e, red);
      combine(out, offset + e, updates, t * slice + e, red);
    }
  }
  return {out};
}

// ScatterElements-11/13/16/18 (and Scatter-9/11, the same op): out[idx with idx[axis] replaced by
// indices[idx]] = updates[idx] for every idx of indices.
std::vector<Tensor> scatterElements(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indicesT = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  const Reduction red = reductionOf(ctx);
  const int64_t r = data.rank();
  if (r < 1)
    ctx.fail("data must have rank >= 1");
  const int64_t axis = normalizeAxis(ctx, ctx.intAttribute("axis", 0), r);
  if (indicesT.dims() != updates.dims() || indicesT.rank() != r)
    ctx.fail("indices " + shapeToString(indicesT.dims()) + " and updates " + shapeToString(updates.dims()) +
             " must have one shape of data's rank");
  for (int64_t d = 0; d < r; ++d)
    if (d != axis && indicesT.dims()[d] > data.dims()[d])
      ctx.fail("indices dim " + std::to_string(d) + " exceeds data's");
  if (updates.dtype() != data.dtype())
    ctx.fail("updates must have data's dtype");
  const std::vector<int64_t> indices = intValues(ctx, indicesT, "indices");
  Tensor out = data;
  const std::vector<int64_t> dataStrides = rowMajorStrides(data.dims()), idxStrides = rowMajorStrides(indicesT.dims());
  std::set<int64_t> seen;
  for (int64_t e = 0; e < indicesT.numel(); ++e) {
    int64_t offset = 0;
    for (int64_t d = 0; d < r; ++d) {
      int64_t i = (e / idxStrides[d]) % indicesT.dims()[d];
      if (d == axis)
        i = checkedIndex(ctx, indices[e], data.dims()[d], d);
      offset += i * dataStrides[d];
    }
    checkUnique(ctx, seen, offset, red);
    combine(out, offset, updates, e, red);
  }
  return {out};
}

} // namespace

void registerScatterOps(OpRegistry& registry) {
  registry.add("ScatterND", scatterND);
  registry.add("ScatterElements", scatterElements);
  registry.add("Scatter", scatterElements); // Scatter-9/11: the deprecated name, same semantics
}

} // namespace dynqual::reference
