// Ops that reduce over axes: ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceL2,
// ReduceSumSquare, ReduceLogSumExp, Softmax, LogSoftmax, LayerNormalization, CumSum. Double accumulation for floats,
// wrapping int64 for integers.
#include "OpFamilies.h"
#include "OpUtil.h"

#include <cmath>
#include <limits>
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

// The shape of a reduction over some axes: keptDims has the reduced dims set to 1 (the layout of
// the accumulators), outDims drops them unless keepdims.
struct Reduction {
  bool noop = false; // empty axes with noop_with_empty_axes: the output is the input
  std::vector<int64_t> keptDims, outDims;
  int64_t count = 0; // input elements per output element
};

// Reads the axes (input 1 from `axesInputOpset`, attribute 'axes' before), keepdims (default 1)
// and noop_with_empty_axes (default 0). No axes means all axes.
Reduction planReduction(const OpContext& ctx, int64_t axesInputOpset) {
  const Tensor& data = ctx.input(0);
  std::vector<int64_t> axes;
  if (ctx.opset() < axesInputOpset)
    axes = ctx.intsAttribute("axes");
  else if (ctx.hasInput(1))
    axes = intValues(ctx, ctx.input(1), "axes");
  Reduction plan;
  if (axes.empty() && ctx.intAttribute("noop_with_empty_axes", 0) != 0) {
    plan.noop = true;
    return plan;
  }
  const bool keepDims = ctx.intAttribute("keepdims", 1) != 0;
  std::set<int64_t> reduced;
  for (int64_t a : axes)
    reduced.insert(normalizeAxis(ctx, a, data.rank()));
  if (axes.empty())
    for (int64_t i = 0; i < data.rank(); ++i)
      reduced.insert(i);
  for (int64_t i = 0; i < data.rank(); ++i) {
    const bool r = reduced.count(i) > 0;
    plan.keptDims.push_back(r ? 1 : data.dims()[i]);
    if (!r || keepDims)
      plan.outDims.push_back(r ? 1 : data.dims()[i]);
  }
  plan.count = data.numel() / std::max<int64_t>(shapeNumel(plan.keptDims), 1);
  return plan;
}

// Calls f(inputIndex, outputIndex) for every input element.
template <typename F> void forEachReduced(const Tensor& data, const Reduction& plan, F&& f) {
  forEachBroadcast(data.dims(), {broadcastStrides(plan.keptDims, data.dims())},
                   [&](int64_t i, const std::vector<int64_t>& off) { f(i, off[0]); });
}

// Sum in double (floats) or wrapping int64 (integers); ReduceMean divides by the count (NaN for
// zero elements), ReduceSum does not (0 for zero elements).
Tensor reduceSumOrMean(const OpContext& ctx, const Reduction& plan, bool mean) {
  const Tensor& data = ctx.input(0);
  const bool useFloat = isFloatDType(data.dtype());
  const auto n = static_cast<std::size_t>(shapeNumel(plan.keptDims));
  std::vector<double> sums(n, 0.0);
  std::vector<uint64_t> intSums(n, 0);
  forEachReduced(data, plan, [&](int64_t i, int64_t o) {
    if (useFloat)
      sums[o] += data.getDouble(i);
    else
      intSums[o] += static_cast<uint64_t>(data.getInt(i));
  });
  Tensor out(data.dtype(), plan.outDims);
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (mean)
      out.setDouble(i, plan.count == 0 ? std::nan("") : sums[i] / static_cast<double>(plan.count));
    else if (useFloat)
      out.setDouble(i, sums[i]);
    else
      out.setInt(i, static_cast<int64_t>(intSums[i]));
  }
  return out;
}

// ReduceMean-18 takes axes as optional input 1; earlier versions as attribute 'axes'.
std::vector<Tensor> reduceMean(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  if (!isFloatDType(data.dtype()))
    ctx.fail(std::string("unsupported: ") + dtypeName(data.dtype()) + " ReduceMean (float types only)");
  const Reduction plan = planReduction(ctx, 18);
  if (plan.noop)
    return {data};
  return {reduceSumOrMean(ctx, plan, true)};
}

// ReduceSum-13 takes axes as optional input 1; earlier versions as attribute 'axes'.
std::vector<Tensor> reduceSum(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  if (data.dtype() == DType::Bool)
    ctx.fail("unsupported: bool ReduceSum");
  const Reduction plan = planReduction(ctx, 13);
  if (plan.noop)
    return {data};
  return {reduceSumOrMean(ctx, plan, false)};
}

// The smallest value of an integer dtype.
int64_t lowestInt(DType dtype) {
  switch (dtype) {
  case DType::Uint8:
    return 0;
  case DType::Int8:
    return std::numeric_limits<int8_t>::min();
  case DType::Int32:
    return std::numeric_limits<int32_t>::min();
  default:
    return std::numeric_limits<int64_t>::min();
  }
}

// ReduceMax-18 takes axes as optional input 1; earlier versions as attribute 'axes'. A NaN
// makes its group NaN (numpy maximum.reduce); an empty group is -inf (floats) or the dtype's
// minimum (integers), as ReduceMax-18 specifies.
std::vector<Tensor> reduceMax(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  if (data.dtype() == DType::Bool)
    ctx.fail("unsupported: bool ReduceMax");
  const Reduction plan = planReduction(ctx, 18);
  if (plan.noop)
    return {data};
  const bool useFloat = isFloatDType(data.dtype());
  const auto n = static_cast<std::size_t>(shapeNumel(plan.keptDims));
  std::vector<double> maxima(n, -INFINITY);
  std::vector<int64_t> intMaxima(n, std::numeric_limits<int64_t>::min());
  if (!useFloat)
    intMaxima.assign(n, lowestInt(data.dtype()));
  forEachReduced(data, plan, [&](int64_t i, int64_t o) {
    if (useFloat) {
      const double v = data.getDouble(i);
      if (std::isnan(v) || std::isnan(maxima[o]))
        maxima[o] = std::nan("");
      else
        maxima[o] = std::max(maxima[o], v);
    } else {
      intMaxima[o] = std::max(intMaxima[o], data.getInt(i));
    }
  });
  Tensor out(data.dtype(), plan.outDims);
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (useFloat)
      out.setDouble(i, maxima[i]);
    else
      out.setInt(i, intMaxima[i]);
  }
  return {out};
}

// The largest value of an integer dtype.
int64_t highestInt(DType dtype) {
  switch (dtype) {
  case DType::Uint8:
    return std::numeric_limits<uint8_t>::max();
  case DType::Int8:
    return std::numeric_limits<int8_t>::max();
  case DType::Int32:
    return std::numeric_limits<int32_t>::max();
  default:
    return std::numeric_limits<int64_t>::max();
  }
}

// ReduceMin-18 takes axes as optional input 1; earlier versions as attribute 'axes'. A NaN
// makes its group NaN (numpy minimum.reduce); an empty group is +inf (floats) or the dtype's
// maximum (integers), as ReduceMin-18 specifies.
std::vector<Tensor> reduceMin(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  if (data.dtype() == DType::Bool)
    ctx.fail("unsupported: bool ReduceMin");
  const Reduction plan = planReduction(ctx, 18);
  if (plan.noop)
    return {data};
  const bool useFloat = isFloatDType(data.dtype());
  const auto n = static_cast<std::size_t>(shapeNumel(plan.keptDims));
  std::vector<double> minima(n, INFINITY);
  std::vector<int64_t> intMinima(n, highestInt(data.dtype()));
  forEachReduced(data, plan, [&](int64_t i, int64_t o) {
    if (useFloat) {
      const double v = data.getDouble(i);
      minima[o] = (std::isnan(v) || std::isnan(minima[o])) ? std::nan("") : std::min(minima[o], v);
    } else {
      intMinima[o] = std::min(intMinima[o], data.getInt(i));
    }
  });
  Tensor out(data.dtype(), plan.outDims);
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (useFloat)
      out.setDouble(i, minima[i]);
    else
      out.setInt(i, intMinima[i]);
  }
  return {out};
}

// ReduceProd, ReduceL2, ReduceSumSquare, ReduceLogSumExp (axes as input from opset 18). Floats
// accumulate in double and round once. Integers: product and sum of squares in wrapping int64;
// L2 = sqrt(sum of squares) and LogSumExp = log(sum exp(x)) in double, truncated toward zero as
// numpy's astype does. Empty groups: product 1, sums 0, LogSumExp -inf.
enum class Fold { Prod, L2, SumSquare, LogSumExp };

OpEvaluator reduceFold(Fold fold, const char* name) {
  return [fold, name](const OpContext& ctx) -> std::vector<Tensor> {
    const Tensor& data = ctx.input(0);
    if (data.dtype() == DType::Bool)
      ctx.fail(std::string("unsupported: bool ") + name);
    const Reduction plan = planReduction(ctx, 18);
    if (plan.noop)
      return {data};
    const bool viaDouble = isFloatDType(data.dtype()) || fold == Fold::L2 || fold == Fold::LogSumExp;
    const auto n = static_cast<std::size_t>(shapeNumel(plan.keptDims));
    std::vector<double> acc(n, fold == Fold::Prod ? 1.0 : 0.0);
    std::vector<uint64_t> intAcc(n, fold == Fold::Prod ? 1 : 0);
    forEachReduced(data, plan, [&](int64_t i, int64_t o) {
      if (viaDouble) {
        const double v = data.getDouble(i);
        if (fold == Fold::Prod)
          acc[o] *= v;
        else if (fold == Fold::LogSumExp)
          acc[o] += std::exp(v);
        else
          acc[o] += v * v;
      } else {
        const auto v = static_cast<uint64_t>(data.getInt(i));
        intAcc[o] = fold == Fold::Prod ? intAcc[o] * v : intAcc[o] + v * v;
      }
    });
    Tensor out(data.dtype(), plan.outDims);
    for (int64_t i = 0; i < out.numel(); ++i) {
      if (!viaDouble) {
        out.setInt(i, static_cast<int64_t>(intAcc[i]));
        continue;
      }
      double r = acc[i];
      if (fold == Fold::L2)
        r = std::sqrt(r);
      else if (fold == Fold::LogSumExp)
        r = std::log(r);
      if (!isFloatDType(data.dtype()) && !std::isfinite(r))
        ctx.fail(std::string("integer ") + name + " result is not finite");
      out.setDouble(i, isFloatDType(data.dtype()) ? r : std::trunc(r));
    }
    return {out};
  };
}

// Softmax-13: over one axis (default -1). Softmax-1/11: over the flattened dims [axis, rank)
// (default axis 1).
Tensor softmaxLike(const OpContext& ctx, bool log) {
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
    for (int64_t e : row) {
      const double shifted = data.getDouble(e) - maxValue;
      out.setDouble(e, log ? shifted - std::log(sum) : std::exp(shifted) / sum);
    }
  });
  return out;
}

std::vector<Tensor> softmax(const OpContext& ctx) {
  return {softmaxLike(ctx, false)};
}

// LogSoftmax: (x - max) - log(sum exp(x - max)), with Softmax's axis rules per opset.
std::vector<Tensor> logSoftmax(const OpContext& ctx) {
  return {softmaxLike(ctx, true)};
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

// CumSum-14: running sum along the axis given as a one-element input. exclusive leaves out the
// element itself (the first sum is 0), reverse runs from the end of the axis.
std::vector<Tensor> cumSum(const OpContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.dtype() == DType::Bool)
    ctx.fail("unsupported: bool CumSum");
  const int64_t axis = normalizeAxis(ctx, intScalar(ctx, ctx.input(1), "axis"), x.rank());
  const bool exclusive = ctx.intAttribute("exclusive", 0) != 0;
  const bool reverse = ctx.intAttribute("reverse", 0) != 0;
  const bool useFloat = isFloatDType(x.dtype());
  Tensor out(x.dtype(), x.dims());
  forEachRow(x.dims(), axis, axis + 1, [&](const std::vector<int64_t>& row) {
    const auto n = static_cast<int64_t>(row.size());
    double sum = 0;
    uint64_t intSum = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t e = row[reverse ? n - 1 - k : k];
      if (!exclusive) {
        sum += useFloat ? x.getDouble(e) : 0.0;
        intSum += useFloat ? 0 : static_cast<uint64_t>(x.getInt(e));
      }
      if (useFloat)
        out.setDouble(e, sum);
      else
        out.setInt(e, static_cast<int64_t>(intSum));
      if (exclusive) {
        sum += useFloat ? x.getDouble(e) : 0.0;
        intSum += useFloat ? 0 : static_cast<uint64_t>(x.getInt(e));
      }
    }
  });
  return {out};
}

} // namespace

void registerReductionOps(OpRegistry& registry) {
  registry.add("ReduceMean", reduceMean);
  registry.add("ReduceSum", reduceSum);
  registry.add("ReduceMax", reduceMax);
  registry.add("ReduceMin", reduceMin);
  registry.add("ReduceProd", reduceFold(Fold::Prod, "ReduceProd"));
  registry.add("ReduceL2", reduceFold(Fold::L2, "ReduceL2"));
  registry.add("ReduceSumSquare", reduceFold(Fold::SumSquare, "ReduceSumSquare"));
  registry.add("ReduceLogSumExp", reduceFold(Fold::LogSumExp, "ReduceLogSumExp"));
  registry.add("LogSoftmax", logSoftmax);
  registry.add("Softmax", softmax);
  registry.add("LayerNormalization", layerNormalization);
  registry.add("CumSum", cumSum);
}

} // namespace dynqual::reference
