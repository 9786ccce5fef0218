// Ops that only change a tensor's shape (or read it), and inference Dropout: the bytes are kept
// in row-major order.
#include "OpFamilies.h"
#include "OpUtil.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace dynqual::reference {
namespace {

// Reshape-5/13/14 take the shape as input 1; Reshape-1 took it as attribute 'shape'.
std::vector<Tensor> reshape(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  const std::vector<int64_t> requested =
      ctx.opset() < 5 ? ctx.intsAttribute("shape") : intValues(ctx, ctx.input(1), "shape");
  const bool allowZero = ctx.intAttribute("allowzero", 0) != 0;
  std::vector<int64_t> dims(requested.size());
  int inferAt = -1;
  bool hasZero = false;
  for (std::size_t i = 0; i < requested.size(); ++i) {
    const int64_t r = requested[i];
    if (r == -1) {
      if (inferAt >= 0)
        ctx.fail("shape " + shapeToString(requested) + " has more than one -1");
      inferAt = static_cast<int>(i);
      dims[i] = 1;
    } else if (r == 0 && !allowZero) {
      if (i >= data.dims().size())
        ctx.fail("shape entry 0 at position " + std::to_string(i) + " has no input dim to copy (input " +
                 shapeToString(data.dims()) + ")");
      dims[i] = data.dims()[i];
    } else if (r < 0) {
      ctx.fail("invalid shape entry " + std::to_string(r));
    } else {
      hasZero |= r == 0;
      dims[i] = r;
    }
  }
  if (allowZero && hasZero && inferAt >= 0)
    ctx.fail("with allowzero=1 a shape may not hold both 0 and -1");
  if (inferAt >= 0) {
    const int64_t known = shapeNumel(dims);
    if (known == 0 || data.numel() % known != 0)
      ctx.fail("cannot infer -1 reshaping " + shapeToString(data.dims()) + " to " + shapeToString(requested));
    dims[inferAt] = data.numel() / known;
  }
  if (shapeNumel(dims) != data.numel())
    ctx.fail("cannot reshape " + shapeToString(data.dims()) + " to " + shapeToString(requested));
  return {data.reshaped(dims)};
}

std::vector<Tensor> expand(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  const std::vector<int64_t> shape = intValues(ctx, ctx.input(1), "shape");
  for (int64_t d : shape)
    if (d < 0)
      ctx.fail("negative dim in shape " + shapeToString(shape));
  const std::vector<int64_t> outDims = broadcastShape(ctx, {data.dims(), shape});
  ctx.checkOutputSize(outDims);
  Tensor out(data.dtype(), outDims);
  forEachBroadcast(outDims, {broadcastStrides(data.dims(), outDims)},
                   [&](int64_t o, const std::vector<int64_t>& off) { copyElement(data, off[0], out, o); });
  return {out};
}

// Unsqueeze-13 takes axes as input 1; earlier versions as attribute 'axes'.
std::vector<Tensor> unsqueeze(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  const std::vector<int64_t> axes = ctx.opset() < 13 ? ctx.intsAttribute("axes") : intValues(ctx, ctx.input(1), "axes");
  if (axes.empty())
    ctx.fail("axes is empty");
  const int64_t outRank = data.rank() + static_cast<int64_t>(axes.size());
  std::set<int64_t> inserted;
  for (int64_t a : axes)
    if (!inserted.insert(normalizeAxis(ctx, a, outRank)).second)
      ctx.fail("axis " + std::to_string(a) + " is repeated");
  std::vector<int64_t> dims;
  std::size_t next = 0;
  for (int64_t i = 0; i < outRank; ++i)
    dims.push_back(inserted.count(i) ? 1 : data.dims()[next++]);
  return {data.reshaped(dims)};
}

// Squeeze-13 takes axes as optional input 1; earlier versions as optional attribute 'axes'.
std::vector<Tensor> squeeze(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  std::vector<int64_t> axes;
  if (ctx.opset() < 13)
    axes = ctx.intsAttribute("axes");
  else if (ctx.hasInput(1))
    axes = intValues(ctx, ctx.input(1), "axes");
  std::set<int64_t> removed;
  if (axes.empty()) {
    for (int64_t i = 0; i < data.rank(); ++i)
      if (data.dims()[i] == 1)
        removed.insert(i);
  }
  for (int64_t a : axes) {
    const int64_t axis = normalizeAxis(ctx, a, data.rank());
    if (data.dims()[axis] != 1)
      ctx.fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(data.dims()[axis]));
    if (!removed.insert(axis).second)
      ctx.fail("axis " + std::to_string(a) + " is repeated");
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < data.rank(); ++i)
    if (!removed.count(i))
      dims.push_back(data.dims()[i]);
  return {data.reshaped(dims)};
}

std::vector<Tensor> flatten(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  int64_t axis = ctx.intAttribute("axis", 1);
  if (axis < -data.rank() || axis > data.rank())
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(data.rank()));
  if (axis < 0)
    axis += data.rank();
  const std::vector<int64_t> outer(data.dims().begin(), data.dims().begin() + axis);
  const std::vector<int64_t> inner(data.dims().begin() + axis, data.dims().end());
  return {data.reshaped({shapeNumel(outer), shapeNumel(inner)})};
}

// Shape-15 slices the shape with start/end, clamped to [0, rank] after adding rank to negatives.
std::vector<Tensor> shape(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  const int64_t rank = data.rank();
  auto clampIndex = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  const int64_t start = clampIndex(ctx.intAttribute("start", 0));
  const int64_t end = clampIndex(ctx.intAttribute("end", rank));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i)
    dims.push_back(data.dims()[i]);
  return {Tensor::fromInts(DType::Int64, {static_cast<int64_t>(dims.size())}, dims)};
}

std::vector<Tensor> identity(const OpContext& ctx) {
  return {ctx.input(0)};
}

// Dropout in inference: output = input, optional mask all true (bool from Dropout-10, the data
// dtype holding 1 before). Training mode (input 2 from Dropout-12, is_test = 0 before Dropout-7)
// with ratio > 0 zeroes random elements, so it is rejected; with ratio 0 it is the identity too.
std::vector<Tensor> dropout(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  double ratio = 0.5;
  bool training = false;
  if (ctx.opset() >= 12) {
    if (ctx.hasInput(1))
      ratio = ctx.input(1).getDouble(0);
    if (ctx.hasInput(2))
      training = ctx.input(2).getInt(0) != 0;
  } else {
    ratio = ctx.floatAttribute("ratio", 0.5f);
    training = ctx.opset() < 7 && ctx.intAttribute("is_test", 0) == 0;
  }
  if (training && ratio > 0)
    throw std::runtime_error("unsupported: Dropout in training mode (" + ctx.describe() +
                             "): its output is random; use training_mode = false or ratio = 0");
  Tensor mask(ctx.opset() >= 10 ? DType::Bool : data.dtype(), data.dims());
  for (int64_t i = 0; i < mask.numel(); ++i)
    mask.setInt(i, 1);
  return {data, mask};
}

// Size: the element count as a rank-0 int64.
std::vector<Tensor> size(const OpContext& ctx) {
  return {Tensor::fromInts(DType::Int64, {}, {ctx.input(0).numel()})};
}

} // namespace

void registerShapeOps(OpRegistry& registry) {
  registry.add("Reshape", reshape);
  registry.add("Expand", expand);
  registry.add("Unsqueeze", unsqueeze);
  registry.add("Squeeze", squeeze);
  registry.add("Flatten", flatten);
  registry.add("Shape", shape);
  registry.add("Size", size);
  registry.add("Identity", identity);
  registry.add("Dropout", dropout);
}

} // namespace dynqual::reference
