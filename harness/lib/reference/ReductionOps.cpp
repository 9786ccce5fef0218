// Ops that reduce over axes: ReduceMean, Softmax, LayerNormalization. Double accumulation.
#include "OpFamilies.h"
#include "OpUtil.h"

#include <cmath>
#include <set>

namespace dynqual::reference {
namespace {

// Visits every "row" of a tensor split at `axis` into [outer, reduced, inner] and calls
// f(offsets of the row's elements) for each (outer, inner) pair.
template <typename F> void forEachRow(const std::vector<int64_t>& dims, int64_t axisBegin, int64_t axisEnd, F&& f) {
  const int64_t outer = shapeNumel({dims.begin(), dims.begin() + axisBegin});
  const int64_t reduced = shapeNumel({dims.begin() + axisBegin, dims.begin() + axisEnd});
  const int64_t inner = shapeNumel({dims.begin() + axisEnd, dims.end()});
  std::vector<int64_t> row(reduced);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t r = 0; r < reduced; ++r)
        row[r] = (o * reduced + r) * inner + i;
      f(row);
    }
}

// ReduceMean-18 takes axes as optional input 1; earlier versions as attribute 'axes'. No axes
// means all axes unless noop_with_empty_axes (18) is set. The mean of zero elements is NaN.
std::vector<Tensor> reduceMean(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  if (!isFloatDType(data.dtype()))
    ctx.fail(std::string("unsupported: ") + dtypeName(data.dtype()) + " ReduceMean (float types only)");
  std::vector<int64_t> axes;
  if (ctx.opset() < 18)
    axes = ctx.intsAttribute("axes");
  else if (ctx.hasInput(1))
    axes = intValues(ctx, ctx.input(1), "axes");
  const bool keepDims = ctx.intAttribute("keepdims", 1) != 0;
  if (axes.empty() && ctx.intAttribute("noop_with_empty_axes", 0) != 0)
    return {data};
  std::set<int64_t> reduced;
  for (int64_t a : axes)
    reduced.insert(normalizeAxis(ctx, a, data.rank()));
  if (axes.empty())
    for (int64_t i = 0; i < data.rank(); ++i)
      reduced.insert(i);
  std::vector<int64_t> keptDims, outDims;
  for (int64_t i = 0; i < data.rank(); ++i) {
    const bool r = reduced.count(i) > 0;
    keptDims.push_back(r ? 1 : data.dims()[i]);
    if (!r || keepDims)
      outDims.push_back(r ? 1 : data.dims()[i]);
  }
  std::vector<double> sums(static_cast<std::size_t>(shapeNumel(keptDims)), 0.0);
  const std::vector<int64_t> strides = broadcastStrides(keptDims, data.dims());
  forEachBroadcast(data.dims(), {strides},
                   [&](int64_t i, const std::vector<int64_t>& off) { sums[off[0]] += data.getDouble(i); });
  const int64_t count = data.numel() / std::max<int64_t>(shapeNumel(keptDims), 1);
  Tensor out(data.dtype(), outDims);
  for (int64_t i = 0; i < out.numel(); ++i)
    out.setDouble(i, count == 0 ? std::nan("") : sums[i] / static_cast<double>(count));
  return {out};
}

// Softmax-13: over one axis (default -1). Softmax-1/11: over the flattened dims [axis, rank)
// (default axis 1).
std::vector<Tensor> softmax(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  if (!isFloatDType(data.dtype()))
    ctx.fail("operand must be a float type");
  const bool perAxis = ctx.opset() >= 13;
  int64_t axis = ctx.intAttribute("axis", perAxis ? -1 : 1);
  if (perAxis)
    axis = normalizeAxis(ctx, axis, data.rank());
  else if (axis < -data.rank() || axis > data.rank())
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(data.rank()));
  else if (axis < 0)
    axis += data.rank();
  Tensor out(data.dtype(), data.dims());
  forEachRow(data.dims(), axis, perAxis ? axis + 1 : data.rank(), [&](const std::vector<int64_t>& row) {
    double maxValue = -INFINITY;
    for (int64_t e : row)
      maxValue = std::max(maxValue, data.getDouble(e));
    double sum = 0;
    for (int64_t e : row)
      sum += std::exp(data.getDouble(e) - maxValue);
    for (int64_t e : row)
      out.setDouble(e, std::exp(data.getDouble(e) - maxValue) / sum);
  });
  return {out};
}

// LayerNormalization-17: Y = (X - mean) / sqrt(var + epsilon) * Scale + B over dims [axis, rank),
// var the biased (population) variance. Optional outputs Mean and InvStdDev have X's dims with
// the normalized dims set to 1 and the stash_type dtype.
std::vector<Tensor> layerNormalization(const OpContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  if (!isFloatDType(x.dtype()))
    ctx.fail("operand must be a float type");
  const int64_t axis = normalizeAxis(ctx, ctx.intAttribute("axis", -1), x.rank());
  const double epsilon = ctx.floatAttribute("epsilon", 1e-5f);
  const int64_t stash = ctx.intAttribute("stash_type", onnx::TensorProto::FLOAT);
  if (!isSupportedOnnxDType(static_cast<int32_t>(stash)) || !isFloatDType(static_cast<DType>(stash)))
    ctx.fail("unsupported stash_type " + std::to_string(stash));
  const std::vector<int64_t> scaleStrides = broadcastStrides(scale.dims(), x.dims());
  std::vector<int64_t> biasStrides;
  if (ctx.hasInput(2))
    biasStrides = broadcastStrides(ctx.input(2).dims(), x.dims());
  for (const Tensor* p : {&scale, ctx.hasInput(2) ? &ctx.input(2) : nullptr})
    if (p && p->rank() > x.rank() - axis)
      ctx.fail("Scale/B shape " + shapeToString(p->dims()) + " does not broadcast to the normalized dims");
  broadcastShape(ctx, {x.dims(), scale.dims()});
  if (ctx.hasInput(2))
    broadcastShape(ctx, {x.dims(), ctx.input(2).dims()});
  std::vector<int64_t> statDims = x.dims();
  for (int64_t i = axis; i < x.rank(); ++i)
    statDims[i] = 1;
  Tensor y(x.dtype(), x.dims());
  Tensor meanOut(static_cast<DType>(stash), statDims), invStdOut(static_cast<DType>(stash), statDims);
  const std::vector<int64_t> xStrides = rowMajorStrides(x.dims());
  int64_t rowIndex = 0;
  forEachRow(x.dims(), axis, x.rank(), [&](const std::vector<int64_t>& row) {
    double mean = 0, var = 0;
    for (int64_t e : row)
      mean += x.getDouble(e);
    mean /= static_cast<double>(row.size());
    for (int64_t e : row)
      var += (x.getDouble(e) - mean) * (x.getDouble(e) - mean);
    var /= static_cast<double>(row.size());
    const double invStd = 1.0 / std::sqrt(var + epsilon);
    for (int64_t e : row) {
      // Offsets into Scale/B from the multi-index of e.
      int64_t so = 0, bo = 0, rem = e;
      for (std::size_t d = 0; d < xStrides.size(); ++d) {
        const int64_t id = rem / xStrides[d];
        rem %= xStrides[d];
        so += id * scaleStrides[d];
        if (!biasStrides.empty())
          bo += id * biasStrides[d];
      }
      double v = (x.getDouble(e) - mean) * invStd * scale.getDouble(so);
      if (!biasStrides.empty())
        v += ctx.input(2).getDouble(bo);
      y.setDouble(e, v);
    }
    if (rowIndex < meanOut.numel()) {
      meanOut.setDouble(rowIndex, mean);
      invStdOut.setDouble(rowIndex, invStd);
    }
    ++rowIndex;
  });
  return {y, meanOut, invStdOut};
}

} // namespace

void registerReductionOps(OpRegistry& registry) {
  registry.add("ReduceMean", reduceMean);
  registry.add("Softmax", softmax);
  registry.add("LayerNormalization", layerNormalization);
}

} // namespace dynqual::reference
