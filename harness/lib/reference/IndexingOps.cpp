// Ops that select or rearrange elements: each output element is a copy of one input element.
#include "OpFamilies.h"
#include "OpUtil.h"

#include <algorithm>
#include <limits>
#include <set>

namespace dynqual::reference {
namespace {

// Calls f(outIndex, inOffset) for a strided view: out index (i0, i1, ...) reads the input at
// sum_k (start[k] + i_k * step[k]) * inStride[k].
template <typename F>
void forEachStrided(const std::vector<int64_t>& outDims, const std::vector<int64_t>& start,
                    const std::vector<int64_t>& step, const std::vector<int64_t>& inStrides, F&& f) {
  std::vector<int64_t> strides(outDims.size());
  int64_t base = 0;
  for (std::size_t k = 0; k < outDims.size(); ++k) {
    base += start[k] * inStrides[k];
    strides[k] = step[k] * inStrides[k];
  }
  forEachBroadcast(outDims, {strides}, [&](int64_t o, const std::vector<int64_t>& off) { f(o, base + off[0]); });
}

// Slice-10/11/13 take starts, ends, axes, steps as inputs; Slice-1 took starts, ends, axes as
// attributes with step 1.
std::vector<Tensor> slice(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  const int64_t rank = data.rank();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.intsAttribute("starts");
    ends = ctx.intsAttribute("ends");
    axes = ctx.intsAttribute("axes");
  } else {
    starts = intValues(ctx, ctx.input(1), "starts");
    ends = intValues(ctx, ctx.input(2), "ends");
    if (ctx.hasInput(3))
      axes = intValues(ctx, ctx.input(3), "axes");
    if (ctx.hasInput(4))
      steps = intValues(ctx, ctx.input(4), "steps");
  }
  if (axes.empty())
    for (std::size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    ctx.fail("starts, ends, axes and steps must have the same length");

  std::vector<int64_t> outDims = data.dims();
  std::vector<int64_t> begin(rank, 0), stride(rank, 1);
  std::set<int64_t> seen;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const int64_t axis = normalizeAxis(ctx, axes[i], rank);
    if (!seen.insert(axis).second)
      ctx.fail("axis " + std::to_string(axes[i]) + " is repeated");
    const int64_t dim = data.dims()[axis];
    const int64_t step = steps[i];
    if (step == 0)
      ctx.fail("step 0 on axis " + std::to_string(axes[i]));
    // Negative indices count from the end; then clamp to [0, dim] for positive steps and to
    // [-1, dim-1] for negative ones (ONNX Slice semantics).
    int64_t s = starts[i], e = ends[i];
    if (s < 0)
      s = s < std::numeric_limits<int64_t>::min() + dim ? std::numeric_limits<int64_t>::min() : s + dim;
    if (e < 0)
      e = e < std::numeric_limits<int64_t>::min() + dim ? std::numeric_limits<int64_t>::min() : e + dim;
    int64_t count;
    if (step > 0) {
      s = std::clamp(s, int64_t{0}, dim);
      e = std::clamp(e, int64_t{0}, dim);
      count = e > s ? (e - s - 1) / step + 1 : 0;
    } else {
      s = std::clamp(s, int64_t{-1}, dim - 1);
      e = std::clamp(e, int64_t{-1}, dim - 1);
      // -(step + 1) avoids negating INT64_MIN; (s - e - 1) / |step| + 1 elements.
      count =
          s > e ? static_cast<int64_t>(static_cast<uint64_t>(s - e - 1) / (static_cast<uint64_t>(-(step + 1)) + 1)) + 1
                : 0;
    }
    outDims[axis] = count;
    begin[axis] = count > 0 ? s : 0;
    stride[axis] = step;
  }
  Tensor out(data.dtype(), outDims);
  forEachStrided(outDims, begin, stride, rowMajorStrides(data.dims()),
                 [&](int64_t o, int64_t in) { copyElement(data, in, out, o); });
  return {out};
}

std::vector<Tensor> concat(const OpContext& ctx) {
  if (ctx.inputCount() == 0)
    ctx.fail("needs at least one input");
  const Tensor& first = ctx.input(0);
  const int64_t axis = normalizeAxis(ctx, ctx.requiredIntAttribute("axis"), first.rank());
  std::vector<int64_t> outDims = first.dims();
  outDims[axis] = 0;
  for (std::size_t i = 0; i < ctx.inputCount(); ++i) {
    const Tensor& t = ctx.input(i);
    if (t.dtype() != first.dtype())
      ctx.fail("input " + std::to_string(i) + " is " + dtypeName(t.dtype()) + ", input 0 is " +
               dtypeName(first.dtype()));
    bool compatible = t.rank() == first.rank();
    for (int64_t d = 0; compatible && d < t.rank(); ++d)
      compatible = d == axis || t.dims()[d] == first.dims()[d];
    if (!compatible)
      ctx.fail("input " + std::to_string(i) + " shape " + shapeToString(t.dims()) + " does not match input 0 shape " +
               shapeToString(first.dims()) + " off axis " + std::to_string(axis));
    outDims[axis] += t.dims()[axis];
  }
  Tensor out(first.dtype(), outDims);
  const int64_t outer = shapeNumel({outDims.begin(), outDims.begin() + axis});
  const int64_t inner = shapeNumel({outDims.begin() + axis + 1, outDims.end()});
  const std::size_t esize = first.elementSize();
  int64_t axisOffset = 0;
  for (std::size_t i = 0; i < ctx.inputCount(); ++i) {
    const Tensor& t = ctx.input(i);
    const int64_t chunk = t.dims()[axis] * inner; // elements per outer index
    for (int64_t o = 0; o < outer && chunk > 0; ++o)
      std::memcpy(out.elementPtr((o * outDims[axis] + axisOffset) * inner), t.elementPtr(o * chunk), chunk * esize);
    axisOffset += t.dims()[axis];
  }
  return {out};
}

std::vector<Tensor> transpose(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  const int64_t rank = data.rank();
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i)
    perm[i] = rank - 1 - i;
  perm = ctx.intsAttribute("perm", perm);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < rank; ++i)
    if (static_cast<int64_t>(sorted.size()) != rank || sorted[i] != i)
      ctx.fail("perm " + shapeToString(perm) + " is not a permutation of rank " + std::to_string(rank));
  const std::vector<int64_t> inStrides = rowMajorStrides(data.dims());
  std::vector<int64_t> outDims(rank), strides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    outDims[i] = data.dims()[perm[i]];
    strides[i] = inStrides[perm[i]];
  }
  Tensor out(data.dtype(), outDims);
  forEachBroadcast(outDims, {strides},
                   [&](int64_t o, const std::vector<int64_t>& off) { copyElement(data, off[0], out, o); });
  return {out};
}

std::vector<Tensor> gather(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indicesT = ctx.input(1);
  const int64_t axis = normalizeAxis(ctx, ctx.intAttribute("axis", 0), data.rank());
  const std::vector<int64_t> indices = intValues(ctx, indicesT, "indices");
  const int64_t dim = data.dims()[axis];
  std::vector<int64_t> outDims(data.dims().begin(), data.dims().begin() + axis);
  outDims.insert(outDims.end(), indicesT.dims().begin(), indicesT.dims().end());
  outDims.insert(outDims.end(), data.dims().begin() + axis + 1, data.dims().end());
  const int64_t outer = shapeNumel({data.dims().begin(), data.dims().begin() + axis});
  const int64_t inner = shapeNumel({data.dims().begin() + axis + 1, data.dims().end()});
  Tensor out(data.dtype(), outDims);
  const auto n = static_cast<int64_t>(indices.size());
  const std::size_t esize = data.elementSize();
  for (int64_t k = 0; k < n; ++k) {
    int64_t index = indices[k];
    if (index < -dim || index >= dim)
      ctx.fail("index " + std::to_string(index) + " is out of range for axis " + std::to_string(axis) + " of size " +
               std::to_string(dim));
    if (index < 0)
      index += dim;
    for (int64_t o = 0; o < outer && inner > 0; ++o)
      std::memcpy(out.elementPtr((o * n + k) * inner), data.elementPtr((o * dim + index) * inner), inner * esize);
  }
  return {out};
}

std::vector<Tensor> gatherElements(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indicesT = ctx.input(1);
  const int64_t rank = data.rank();
  const int64_t axis = normalizeAxis(ctx, ctx.intAttribute("axis", 0), rank);
  if (indicesT.rank() != rank)
    ctx.fail("indices rank " + std::to_string(indicesT.rank()) + " differs from data rank " + std::to_string(rank));
  const std::vector<int64_t> indices = intValues(ctx, indicesT, "indices");
  const std::vector<int64_t> dataStrides = rowMajorStrides(data.dims());
  // Offset of out[i] in data without the axis term: same index as out on every other axis.
  std::vector<int64_t> strides = dataStrides;
  strides[axis] = 0;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indicesT.dims()[d] > data.dims()[d])
      ctx.fail("indices shape " + shapeToString(indicesT.dims()) + " exceeds data shape " + shapeToString(data.dims()));
  Tensor out(data.dtype(), indicesT.dims());
  const int64_t dim = data.dims()[axis];
  forEachBroadcast(indicesT.dims(), {strides}, [&](int64_t o, const std::vector<int64_t>& off) {
    int64_t index = indices[o];
    if (index < -dim || index >= dim)
      ctx.fail("index " + std::to_string(index) + " is out of range for axis size " + std::to_string(dim));
    if (index < 0)
      index += dim;
    copyElement(data, off[0] + index * dataStrides[axis], out, o);
  });
  return {out};
}

// Trilu keeps element (i, j) of each trailing matrix when j - i >= k (upper) or j - i <= k (lower).
std::vector<Tensor> trilu(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  if (data.rank() < 2)
    ctx.fail("input must have rank >= 2, got " + shapeToString(data.dims()));
  const int64_t k = ctx.hasInput(1) ? intScalar(ctx, ctx.input(1), "k") : 0;
  const bool upper = ctx.intAttribute("upper", 1) != 0;
  const int64_t rows = data.dims()[data.rank() - 2];
  const int64_t cols = data.dims()[data.rank() - 1];
  Tensor out(data.dtype(), data.dims());
  for (int64_t e = 0; e < data.numel(); ++e) {
    const int64_t j = e % cols;
    const int64_t i = (e / cols) % rows;
    const bool keep = upper ? j - i >= k : j - i <= k;
    if (keep)
      copyElement(data, e, out, e);
  }
  return {out};
}

// Split sizes along `dim`: input 'split' (Split-13+) or attribute (before); otherwise
// num_outputs parts (Split-18) or one per declared output, equal when `dim` divides evenly.
// Split-18 lets the last part be smaller (parts of ceil(dim / n)); earlier versions require
// an even split.
std::vector<int64_t> splitSizes(const OpContext& ctx, int64_t dim) {
  std::vector<int64_t> sizes;
  if (ctx.opset() >= 13) {
    if (ctx.hasInput(1))
      sizes = intValues(ctx, ctx.input(1), "split");
  } else {
    sizes = ctx.intsAttribute("split");
  }
  const auto outputs = static_cast<int64_t>(ctx.outputCount());
  if (!sizes.empty()) {
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0)
        ctx.fail("split sizes must be >= 0, got " + shapeToString(sizes));
      total += s;
    }
    if (total != dim || static_cast<int64_t>(sizes.size()) != outputs)
      ctx.fail("split " + shapeToString(sizes) + " must sum to the axis size " + std::to_string(dim) +
               " and have one entry per output (" + std::to_string(outputs) + ")");
    return sizes;
  }
  const int64_t parts = ctx.opset() >= 18 ? ctx.intAttribute("num_outputs", outputs) : outputs;
  if (parts != outputs || parts <= 0)
    ctx.fail("num_outputs " + std::to_string(parts) + " differs from the " + std::to_string(outputs) +
             " declared outputs");
  if (ctx.opset() < 18 && dim % parts != 0)
    ctx.fail("axis size " + std::to_string(dim) + " does not split evenly into " + std::to_string(parts) + " parts");
  const int64_t chunk = (dim + parts - 1) / parts;
  const int64_t last = dim - chunk * (parts - 1);
  if (last < 0)
    ctx.fail("axis size " + std::to_string(dim) + " cannot be split into " + std::to_string(parts) + " parts of " +
             std::to_string(chunk));
  sizes.assign(parts, chunk);
  sizes.back() = last;
  return sizes;
}

std::vector<Tensor> split(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  const int64_t axis = normalizeAxis(ctx, ctx.intAttribute("axis", 0), data.rank());
  const std::vector<int64_t> sizes = splitSizes(ctx, data.dims()[axis]);
  const int64_t outer = shapeNumel({data.dims().begin(), data.dims().begin() + axis});
  const int64_t inner = shapeNumel({data.dims().begin() + axis + 1, data.dims().end()});
  const int64_t dim = data.dims()[axis];
  const std::size_t esize = data.elementSize();
  std::vector<Tensor> outs;
  int64_t begin = 0;
  for (int64_t size : sizes) {
    std::vector<int64_t> dims = data.dims();
    dims[axis] = size;
    Tensor out(data.dtype(), dims);
    for (int64_t o = 0; o < outer && size * inner > 0; ++o)
      std::memcpy(out.elementPtr(o * size * inner), data.elementPtr((o * dim + begin) * inner), size * inner * esize);
    begin += size;
    outs.push_back(std::move(out));
  }
  return outs;
}

// GatherND-12/13: indices [i_0 .. i_{q-2}, k] pick slices data[b..., idx_0 .. idx_{k-1}, ...]
// where the first batch_dims dims of data and indices are shared. Output dims:
// indices.dims[0 .. q-2] ++ data.dims[batch_dims + k ..]. Negative indices count from the end.
std::vector<Tensor> gatherND(const OpContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indicesT = ctx.input(1);
  const int64_t r = data.rank(), q = indicesT.rank();
  const int64_t b = ctx.intAttribute("batch_dims", 0);
  if (q < 1 || r < 1)
    ctx.fail("data and indices must have rank >= 1");
  if (b < 0 || b >= std::min(q, r))
    ctx.fail("batch_dims " + std::to_string(b) + " must be in [0, min(rank(data), rank(indices)))");
  const int64_t k = indicesT.dims().back();
  if (k < 1 || k > r - b)
    ctx.fail("indices last dim " + std::to_string(k) + " must be in [1, " + std::to_string(r - b) + "]");
  for (int64_t d = 0; d < b; ++d)
    if (data.dims()[d] != indicesT.dims()[d])
      ctx.fail("batch dims differ: data " + shapeToString(data.dims()) + ", indices " + shapeToString(indicesT.dims()));
  const std::vector<int64_t> indices = intValues(ctx, indicesT, "indices");
  std::vector<int64_t> outDims(indicesT.dims().begin(), indicesT.dims().end() - 1);
  outDims.insert(outDims.end(), data.dims().begin() + b + k, data.dims().end());
  Tensor out(data.dtype(), outDims);
  const int64_t batch = shapeNumel({data.dims().begin(), data.dims().begin() + b});
  const int64_t tuplesPerBatch = shapeNumel({indicesT.dims().begin() + b, indicesT.dims().end() - 1});
  const int64_t slice = shapeNumel({data.dims().begin() + b + k, data.dims().end()});
  const int64_t dataPerBatch = shapeNumel({data.dims().begin() + b, data.dims().end()});
  const std::vector<int64_t> strides = rowMajorStrides(data.dims());
  const std::size_t esize = data.elementSize();
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t t = 0; t < tuplesPerBatch; ++t) {
      const int64_t tuple = bi * tuplesPerBatch + t;
      int64_t offset = bi * dataPerBatch;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t dim = data.dims()[b + j];
        int64_t index = indices[tuple * k + j];
        if (index < -dim || index >= dim)
          ctx.fail("index " + std::to_string(index) + " is out of range for data axis " + std::to_string(b + j) +
                   " of size " + std::to_string(dim));
        if (index < 0)
          index += dim;
        offset += index * strides[b + j];
      }
      if (slice > 0)
        std::memcpy(out.elementPtr(tuple * slice), data.elementPtr(offset), slice * esize);
    }
  return {out};
}

} // namespace

void registerIndexingOps(OpRegistry& registry) {
  registry.add("Slice", slice);
  registry.add("Concat", concat);
  registry.add("Transpose", transpose);
  registry.add("Gather", gather);
  registry.add("GatherElements", gatherElements);
  registry.add("Trilu", trilu);
  registry.add("Split", split);
  registry.add("GatherND", gatherND);
}

} // namespace dynqual::reference
