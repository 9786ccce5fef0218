// The kernel contract, per kernel (internal to dq_runtime): the operand and attribute checks of
// one kernel, in the order both devices run them, with their messages. The sim kernels
// (Sim*Kernels.cpp) and the hip launches (hip/Hip*Launch.cpp, hip/HipMatmul.cpp) call these
// before they compute, so a program one device rejects is rejected by the other with the same
// words. Each throws RuntimeError "kernel 'NAME': ..." (kernel::fail) on the first failed check;
// the values a device needs afterwards (an axis, a flag) are returned. Operands are any device's
// operand type O, as in KernelContract.h.
#pragma once

#include "KernelContract.h"

#include "dq/runtime/Program.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace dq::rt::kernel {

/// Product of `sizes` (1 for rank 0).
inline int64_t elementCount(const std::vector<int64_t> &sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

/// No output may have stride 0 on a dim of extent > 1 (it would write one element twice).
template <typename O> void checkOutputsWriteOnce(const std::string &kernel, const std::vector<O> &outs) {
  for (const O &o : outs)
    for (size_t d = 0; d < o.sizes.size() && elementCount(o.sizes) > 0; ++d)
      if (o.sizes[d] > 1 && o.strides[d] == 0)
        fail(kernel, operandLabel(o) + " has stride 0 on dim " + std::to_string(d) +
                         ": an output may not write an element twice");
}

/// A strided copy: equal dtypes and sizes, and a destination that writes no element twice.
template <typename O> void validateStridedCopy(const O &dst, const O &src) {
  if (dst.dtype != src.dtype || dst.sizes != src.sizes)
    throw RuntimeError("strided copy: " + operandLabel(src) + " " + dtypeName(src.dtype) + formatDims(src.sizes) +
                       " does not match " + operandLabel(dst) + " " + dtypeName(dst.dtype) + formatDims(dst.sizes));
  for (size_t d = 0; d < dst.sizes.size() && elementCount(dst.sizes) > 0; ++d)
    if (dst.sizes[d] > 1 && dst.strides[d] == 0)
      throw RuntimeError("strided copy: " + operandLabel(dst) + " has stride 0 on dim " + std::to_string(d) +
                         ": a destination may not write an element twice");
}

// ---- elementwise ---------------------------------------------------------------------------------

/// A unary (1 input) or binary (2 inputs) elementwise kernel: ins[0] in `types`, ins[1] in
/// `exponent` when that is not empty (Pow) else the dtype of ins[0]; out bool when `boolResult`
/// else the dtype of ins[0]; every input broadcasts to out.
template <typename O>
void validateElementwise(const std::string &kernel, const std::vector<O> &ins, const std::vector<O> &outs, bool binary,
                         TypeSet types, TypeSet exponent, bool boolResult) {
  checkArity(kernel, ins, outs, binary ? 2 : 1);
  const O &out = outs[0];
  checkAdmits(kernel, ins[0], types);
  if (binary) {
    if (exponent)
      checkAdmits(kernel, ins[1], exponent);
    else
      checkSameDType(kernel, ins[0], ins[1]);
  }
  if (boolResult)
    checkDType(kernel, out, DType::Bool);
  else
    checkSameDType(kernel, ins[0], out);
  checkBroadcast(kernel, ins[0], out);
  if (binary) checkBroadcast(kernel, ins[1], out);
}

/// where(cond, x, y): cond bool, x and y of the out dtype, all broadcasting to out.
template <typename O> void validateWhere(const std::vector<O> &ins, const std::vector<O> &outs) {
  checkArity("where", ins, outs, 3);
  const O &out = outs[0];
  checkDType("where", ins[0], DType::Bool);
  checkSameDType("where", ins[1], out);
  checkSameDType("where", ins[2], out);
  for (const O &in : ins)
    checkBroadcast("where", in, out);
}

/// leaky_relu: a float input of the out dtype and shape; returns alpha (fimm[0]).
template <typename O>
double validateLeakyRelu(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  checkArity("leaky_relu", ins, outs, 1);
  const O &in = ins[0];
  const O &out = outs[0];
  checkAdmits("leaky_relu", in, kFloatTypes);
  checkSameDType("leaky_relu", in, out);
  checkShape("leaky_relu", out, in.sizes);
  if (args.fattrs.size() != 1) fail("leaky_relu", "expects alpha as fimm[0]");
  return args.fattrs[0];
}

/// fused_elementwise: 1..kFusedMaxInputs float inputs of the out dtype broadcasting to out, and a
/// step program that checkFusedProgram accepts.
template <typename O>
void validateFusedElementwise(const std::string &kernel, const std::vector<O> &ins, const std::vector<O> &outs,
                              const KernelArgs &args) {
  if (outs.size() != 1 || ins.empty())
    fail(kernel, "expects 1 to " + std::to_string(kFusedMaxInputs) + " inputs and 1 output, got " +
                     std::to_string(ins.size()) + " and " + std::to_string(outs.size()));
  const std::string problem = checkFusedProgram(static_cast<int64_t>(ins.size()), args.attrs);
  if (!problem.empty()) fail(kernel, problem);
  const O &out = outs[0];
  checkAdmits(kernel, out, kFloatTypes);
  for (const O &in : ins) {
    checkSameDType(kernel, in, out);
    checkBroadcast(kernel, in, out);
  }
}

// ---- data movement -------------------------------------------------------------------------------

template <typename O> void validateExpand(const std::vector<O> &ins, const std::vector<O> &outs) {
  checkArity("expand", ins, outs, 1);
  checkSameDType("expand", ins[0], outs[0]);
  checkBroadcast("expand", ins[0], outs[0]);
}

/// slice: scalars = starts, steps (one per dim). Returns true when out is empty (nothing to do);
/// dims after the first empty one are then not checked.
template <typename O>
bool validateSlice(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  checkArity("slice", ins, outs, 1);
  const O &in = ins[0];
  const O &out = outs[0];
  checkSameDType("slice", in, out);
  const size_t r = out.sizes.size();
  if (in.sizes.size() != r || args.scalars.size() != 2 * r)
    fail("slice", "expects equal ranks and " + std::to_string(2 * r) + " scalars (starts, steps)");
  for (size_t d = 0; d < r; ++d) {
    if (out.sizes[d] == 0) return true;
    int64_t first = args.scalars[d], step = args.scalars[r + d];
    int64_t last = first + (out.sizes[d] - 1) * step;
    if (first < 0 || first >= in.sizes[d] || last < 0 || last >= in.sizes[d])
      fail("slice", "axis " + std::to_string(d) + " reads indices " + std::to_string(first) + ".." +
                        std::to_string(last) + " of a dim of size " + std::to_string(in.sizes[d]));
  }
  return false;
}

/// transpose: attrs = perm, out.sizes[j] == in.sizes[perm[j]].
template <typename O>
void validateTranspose(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  checkArity("transpose", ins, outs, 1);
  const O &in = ins[0];
  const O &out = outs[0];
  checkSameDType("transpose", in, out);
  const size_t r = in.sizes.size();
  std::vector<bool> seen(r, false);
  bool ok = args.attrs.size() == r && out.sizes.size() == r;
  for (size_t j = 0; ok && j < r; ++j) {
    int64_t p = args.attrs[j];
    ok = p >= 0 && static_cast<size_t>(p) < r && !seen[static_cast<size_t>(p)] &&
         out.sizes[j] == in.sizes[static_cast<size_t>(p)];
    if (ok) seen[static_cast<size_t>(p)] = true;
  }
  if (!ok)
    fail("transpose",
         "perm " + formatDims(args.attrs) + " does not map " + formatDims(in.sizes) + " to " + formatDims(out.sizes));
}

/// concat along attrs[0]; returns the normalized axis.
template <typename O>
size_t validateConcat(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  if (ins.empty() || outs.size() != 1) fail("concat", "expects at least 1 input and 1 output");
  const O &out = outs[0];
  const size_t axis = normalizeAxis("concat", args, out.sizes.size());
  int64_t total = 0;
  for (const O &in : ins) {
    checkSameDType("concat", in, out);
    bool ok = in.sizes.size() == out.sizes.size();
    for (size_t d = 0; ok && d < in.sizes.size(); ++d)
      ok = d == axis || in.sizes[d] == out.sizes[d];
    if (!ok)
      fail("concat", operandLabel(in) + " shape " + formatDims(in.sizes) + " does not fit " + formatDims(out.sizes) +
                         " along axis " + std::to_string(axis));
    total += in.sizes[axis];
  }
  if (total != out.sizes[axis])
    fail("concat", "inputs sum to " + std::to_string(total) + " along axis " + std::to_string(axis) + ", output has " +
                       std::to_string(out.sizes[axis]));
  return axis;
}

/// gather(data, indices) along attrs[0]; returns the normalized axis.
template <typename O>
size_t validateGather(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  checkArity("gather", ins, outs, 2);
  const O &data = ins[0], &indices = ins[1];
  const O &out = outs[0];
  checkSameDType("gather", data, out);
  if (indices.dtype != DType::I32 && indices.dtype != DType::I64)
    fail("gather", "indices must be i32 or i64, got " + dtypeName(indices.dtype));
  const size_t axis = normalizeAxis("gather", args, data.sizes.size());
  std::vector<int64_t> expect(data.sizes.begin(), data.sizes.begin() + static_cast<long>(axis));
  expect.insert(expect.end(), indices.sizes.begin(), indices.sizes.end());
  expect.insert(expect.end(), data.sizes.begin() + static_cast<long>(axis) + 1, data.sizes.end());
  if (expect != out.sizes) fail("gather", "output shape " + formatDims(out.sizes) + ", expected " + formatDims(expect));
  return axis;
}

/// range(start, delta): one-element inputs of the out dtype, a 1-D output.
template <typename O> void validateRange(const std::vector<O> &ins, const std::vector<O> &outs) {
  checkArity("range", ins, outs, 2);
  const O &out = outs[0];
  checkSameDType("range", ins[0], out);
  checkSameDType("range", ins[1], out);
  if (elementCount(ins[0].sizes) != 1 || elementCount(ins[1].sizes) != 1 || out.sizes.size() != 1)
    fail("range", "expects one-element start and delta and a 1-D output");
}

/// range_length(start, limit, delta): one-element numeric inputs of one dtype, a one-element i64
/// output.
template <typename O> void validateRangeLength(const std::vector<O> &ins, const std::vector<O> &outs) {
  checkArity("range_length", ins, outs, 3);
  const O &out = outs[0];
  checkAdmits("range_length", ins[0], kNumericTypes);
  checkSameDType("range_length", ins[0], ins[1]);
  checkSameDType("range_length", ins[0], ins[2]);
  if (out.dtype != DType::I64 || elementCount(out.sizes) != 1) fail("range_length", "expects a one-element i64 output");
  for (const O &x : ins)
    if (elementCount(x.sizes) != 1) fail("range_length", "expects one-element start, limit and delta");
}

/// fill: the value is fimm[0] for a float out, else imm[1]. Returns true for a float out.
template <typename O> bool validateFill(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  checkArity("fill", ins, outs, 0);
  const bool fl = isFloat(outs[0].dtype);
  if (fl ? args.fattrs.empty() : args.attrs.empty())
    fail("fill", std::string("missing value (") + (fl ? "fimm[0]" : "imm[1]") + ")");
  return fl;
}

/// trilu: rank >= 2, out of the input dtype and shape, k as the one scalar. Returns `upper`.
template <typename O>
bool validateTrilu(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  checkArity("trilu", ins, outs, 1);
  const O &in = ins[0];
  const O &out = outs[0];
  checkSameDType("trilu", in, out);
  checkShape("trilu", out, in.sizes);
  const size_t r = in.sizes.size();
  if (r < 2) fail("trilu", "expects rank >= 2, got " + formatDims(in.sizes));
  const bool upper = flagAttr("trilu", args, 0, "upper");
  if (args.scalars.size() != 1) fail("trilu", "expects one scalar operand (k)");
  return upper;
}

/// gather_elements(data, indices) along attrs[0]; returns the normalized axis.
template <typename O>
size_t validateGatherElements(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  checkArity("gather_elements", ins, outs, 2);
  const O &data = ins[0], &indices = ins[1];
  const O &out = outs[0];
  checkSameDType("gather_elements", data, out);
  checkAdmits("gather_elements", indices, kIndexTypes);
  checkShape("gather_elements", out, indices.sizes);
  const size_t r = data.sizes.size();
  const size_t axis = axisAttr("gather_elements", args, 0, r, true);
  bool ok = indices.sizes.size() == r;
  for (size_t d = 0; ok && d < r; ++d)
    ok = d == axis || indices.sizes[d] <= data.sizes[d];
  if (!ok)
    fail("gather_elements", "indices shape " + formatDims(indices.sizes) + " does not fit data " +
                                formatDims(data.sizes) + " (same rank, no larger off axis " + std::to_string(axis) +
                                ")");
  return axis;
}

/// What gather_nd needs after its checks: batch_dims and the last indices dim m.
struct GatherND {
  size_t batchDims = 0;
  int64_t m = 0;
};

/// gather_nd(data, indices) with batch_dims = attrs[0].
template <typename O>
GatherND validateGatherND(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  checkArity("gather_nd", ins, outs, 2);
  const O &data = ins[0], &indices = ins[1];
  const O &out = outs[0];
  checkSameDType("gather_nd", data, out);
  checkAdmits("gather_nd", indices, kIndexTypes);
  const size_t r = data.sizes.size(), q = indices.sizes.size();
  if (args.attrs.empty() || args.attrs[0] < 0 || static_cast<size_t>(args.attrs[0]) >= std::min(q, r))
    fail("gather_nd", "batch_dims (imm[1]) must be in [0, min(data rank, indices rank)) = [0, " +
                          std::to_string(std::min(q, r)) + ")");
  const size_t b = static_cast<size_t>(args.attrs[0]);
  const int64_t m = indices.sizes[q - 1];
  if (m < 1 || static_cast<size_t>(m) > r - b)
    fail("gather_nd", "the last indices dim is " + std::to_string(m) + ", must be in [1, " + std::to_string(r - b) +
                          "] (data rank - batch_dims)");
  for (size_t d = 0; d < b; ++d)
    if (data.sizes[d] != indices.sizes[d])
      fail("gather_nd", "batch dim " + std::to_string(d) + " differs: data " + formatDims(data.sizes) + ", indices " +
                            formatDims(indices.sizes));
  std::vector<int64_t> expect(indices.sizes.begin(), indices.sizes.end() - 1);
  expect.insert(expect.end(), data.sizes.begin() + static_cast<long>(b) + m, data.sizes.end());
  checkShape("gather_nd", out, expect);
  return {b, m};
}

// ---- index kernels -------------------------------------------------------------------------------

/// What arg_max / arg_min need after their checks.
struct ArgExtreme {
  size_t axis = 0;
  bool last = false; ///< select_last_index
};

/// arg_max / arg_min along attrs[0], attrs[1] = select_last_index; an i64 output.
template <typename O>
ArgExtreme validateArgExtreme(const std::string &kernel, const std::vector<O> &ins, const std::vector<O> &outs,
                              const KernelArgs &args) {
  checkArity(kernel, ins, outs, 1);
  const O &in = ins[0];
  const O &out = outs[0];
  checkAdmits(kernel, in, kNumericTypes);
  checkDType(kernel, out, DType::I64);
  const size_t axis = axisAttr(kernel, args, 0, in.sizes.size(), false);
  const bool last = flagAttr(kernel, args, 1, "select_last_index");
  std::vector<int64_t> expect = in.sizes;
  expect[axis] = 1;
  checkShape(kernel, out, expect);
  if (in.sizes[axis] == 0 && elementCount(expect) > 0) fail(kernel, "the reduced axis has extent 0");
  return {axis, last};
}

/// one_hot(indices, values [off, on]) with the depth axis attrs[0] of out; returns that axis.
template <typename O>
size_t validateOneHot(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  checkArity("one_hot", ins, outs, 2);
  const O &indices = ins[0], &values = ins[1];
  const O &out = outs[0];
  checkAdmits("one_hot", indices, kNumericTypes);
  checkSameDType("one_hot", values, out);
  if (values.sizes.size() != 1 || values.sizes[0] != 2)
    fail("one_hot", operandLabel(values) + " shape " + formatDims(values.sizes) + ", expected [2] (off, on)");
  const size_t axis = axisAttr("one_hot", args, 0, out.sizes.size(), false);
  std::vector<int64_t> expect = indices.sizes;
  expect.insert(expect.begin() + static_cast<long>(axis), out.sizes[axis]);
  checkShape("one_hot", out, expect);
  return axis;
}

// ---- math ----------------------------------------------------------------------------------------

/// The sizes of a checked matmul: a[..., M, K] x b[..., K, N] -> out[batch..., M, N].
struct Matmul {
  int64_t M = 0, K = 0, N = 0;
  std::vector<int64_t> batch; ///< out's batch dims
};

/// matmul(a, b): one dtype of kWideTypes, ranks >= 2, batch dims broadcasting to out's.
template <typename O> Matmul validateMatmul(const std::vector<O> &ins, const std::vector<O> &outs) {
  checkArity("matmul", ins, outs, 2);
  const O &a = ins[0], &b = ins[1];
  const O &out = outs[0];
  checkAdmits("matmul", a, kWideTypes);
  checkSameDType("matmul", a, b);
  checkSameDType("matmul", a, out);
  const size_t ra = a.sizes.size(), rb = b.sizes.size(), ro = out.sizes.size();
  if (ra < 2 || rb < 2 || ro != std::max(ra, rb))
    fail("matmul", "expects ins of rank >= 2 and an output of the larger rank, got " + formatDims(a.sizes) + " x " +
                       formatDims(b.sizes) + " -> " + formatDims(out.sizes));
  const int64_t M = a.sizes[ra - 2], K = a.sizes[ra - 1], N = b.sizes[rb - 1];
  std::vector<int64_t> batch(out.sizes.begin(), out.sizes.end() - 2);
  bool ok = b.sizes[rb - 2] == K && out.sizes[ro - 2] == M && out.sizes[ro - 1] == N;
  for (const O *x : {&a, &b})
    for (size_t d = 0, rx = x->sizes.size() - 2; ok && d < rx; ++d)
      ok = x->sizes[d] == 1 || x->sizes[d] == batch[d + batch.size() - rx];
  if (!ok)
    fail("matmul", formatDims(a.sizes) + " x " + formatDims(b.sizes) + " does not give " + formatDims(out.sizes) +
                       " (a[..., M, K] x b[..., K, N], batch dims broadcast)");
  return {M, K, N, std::move(batch)};
}

/// softmax / log_softmax along attrs[0] (non-negative); returns that axis.
template <typename O>
size_t validateSoftmax(const std::string &kernel, const std::vector<O> &ins, const std::vector<O> &outs,
                       const KernelArgs &args) {
  checkArity(kernel, ins, outs, 1);
  const O &in = ins[0];
  const O &out = outs[0];
  checkAdmits(kernel, in, kFloatTypes);
  checkSameDType(kernel, in, out);
  checkShape(kernel, out, in.sizes);
  return axisAttr(kernel, args, 0, in.sizes.size(), false);
}

/// layer_norm(X, scale[, bias]) from axis attrs[0], epsilon fimm[0]; returns the axis.
template <typename O>
size_t validateLayerNorm(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  if ((ins.size() != 2 && ins.size() != 3) || outs.size() != 1)
    fail("layer_norm", "expects 2 or 3 inputs (X, scale[, bias]) and 1 output, got " + std::to_string(ins.size()) +
                           " and " + std::to_string(outs.size()));
  const O &x = ins[0];
  const O &out = outs[0];
  checkAdmits("layer_norm", x, kFloatTypes);
  for (size_t i = 1; i < ins.size(); ++i) {
    checkSameDType("layer_norm", ins[i], x);
    checkBroadcast("layer_norm", ins[i], out);
  }
  checkSameDType("layer_norm", x, out);
  checkShape("layer_norm", out, x.sizes);
  const size_t axis = axisAttr("layer_norm", args, 0, x.sizes.size(), true);
  if (args.fattrs.empty()) fail("layer_norm", "missing epsilon (fimm[0])");
  return axis;
}

/// The shapes of a checked reduction over the axes in attrs or flagged in scalars: `extent` has
/// the input size on the reduced axes and 1 elsewhere, `kept` (the out shape) the reverse.
struct Reduction {
  std::vector<int64_t> extent, kept;
};

/// reduce_*: `extremum` (max, min) admits every dtype, the others kWideTypes.
template <typename O>
Reduction validateReduce(const std::string &kernel, bool extremum, const std::vector<O> &ins,
                         const std::vector<O> &outs, const KernelArgs &args) {
  checkArity(kernel, ins, outs, 1);
  const O &in = ins[0];
  const O &out = outs[0];
  checkAdmits(kernel, in, extremum ? kAllTypes : kWideTypes);
  checkSameDType(kernel, in, out);
  const size_t rank = in.sizes.size();
  std::vector<int64_t> extent(rank, 1), expect = in.sizes;
  std::vector<int64_t> axes = args.attrs;
  if (!args.scalars.empty()) {
    // Axes known only at run time: one 0/1 flag per input axis.
    if (!args.attrs.empty() || args.scalars.size() != rank)
      fail(kernel,
           "expects either axes in imm or one 0/1 flag scalar per input axis (" + std::to_string(rank) + "), not both");
    axes.clear();
    for (size_t d = 0; d < rank; ++d) {
      if (args.scalars[d] != 0 && args.scalars[d] != 1)
        fail(kernel, "axis flag s[" + std::to_string(d) + "] must be 0 or 1");
      if (args.scalars[d] == 1) axes.push_back(static_cast<int64_t>(d));
    }
  }
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = axes[k];
    if (a < 0 || static_cast<size_t>(a) >= rank || (k > 0 && a <= axes[k - 1]))
      fail(kernel, "axes " + formatDims(axes) + " must be strictly increasing in [0, " + std::to_string(rank) + ")");
    extent[static_cast<size_t>(a)] = in.sizes[static_cast<size_t>(a)];
    expect[static_cast<size_t>(a)] = 1;
  }
  checkShape(kernel, out, expect);
  return {std::move(extent), std::move(expect)};
}

/// What cumsum needs after its checks.
struct Cumsum {
  size_t axis = 0;
  bool exclusive = false, reverse = false;
};

/// cumsum along attrs[0], or along scalars[0] when the axis is known only at run time;
/// attrs[1] = exclusive, attrs[2] = reverse.
template <typename O>
Cumsum validateCumsum(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  checkArity("cumsum", ins, outs, 1);
  const O &in = ins[0];
  const O &out = outs[0];
  checkAdmits("cumsum", in, kWideTypes);
  checkSameDType("cumsum", in, out);
  checkShape("cumsum", out, in.sizes);
  size_t axis = 0;
  if (args.scalars.empty()) {
    axis = axisAttr("cumsum", args, 0, in.sizes.size(), true);
  } else {
    // Axis known only at run time.
    const int64_t r = static_cast<int64_t>(in.sizes.size()), a = args.scalars[0];
    if (args.scalars.size() != 1 || a < -r || a >= r)
      fail("cumsum", "axis s[0] = " + std::to_string(a) + " out of range for rank " + std::to_string(r));
    axis = static_cast<size_t>(a < 0 ? a + r : a);
  }
  const bool exclusive = flagAttr("cumsum", args, 1, "exclusive");
  const bool reverse = flagAttr("cumsum", args, 2, "reverse");
  return {axis, exclusive, reverse};
}

// ---- data-dependent kernels ----------------------------------------------------------------------

/// minIns..maxIns inputs and nOuts outputs.
template <typename O>
void checkCounts(const std::string &k, const std::vector<O> &ins, const std::vector<O> &outs, size_t minIns,
                 size_t maxIns, size_t nOuts) {
  if (ins.size() < minIns || ins.size() > maxIns || outs.size() != nOuts)
    fail(k, "expects " + std::to_string(minIns) + (maxIns != minIns ? "-" + std::to_string(maxIns) : "") +
                " inputs and " + std::to_string(nOuts) + " outputs, got " + std::to_string(ins.size()) + " and " +
                std::to_string(outs.size()));
}

/// The immediate args.attrs[i], named `what` when it is missing.
inline int64_t immAttr(const std::string &k, const KernelArgs &args, size_t i, const char *what) {
  if (args.attrs.size() <= i) fail(k, std::string("missing imm[") + std::to_string(i + 1) + "] (" + what + ")");
  return args.attrs[i];
}

/// The scatter reduction args.attrs[i]: 0 none, 1 add, 2 mul, 3 max, 4 min.
inline int64_t reductionAttr(const std::string &k, const KernelArgs &args, size_t i) {
  const int64_t red = immAttr(k, args, i, "reduction");
  if (red < 0 || red > 4) fail(k, "reduction " + std::to_string(red) + " is not in [0, 4]");
  return red;
}

/// count_nonzero: one input, a one-element i64 output.
template <typename O> void validateCountNonzero(const std::vector<O> &ins, const std::vector<O> &outs) {
  checkCounts("count_nonzero", ins, outs, 1, 1, 1);
  checkDType("count_nonzero", outs[0], DType::I64);
  if (elementCount(outs[0].sizes) != 1) fail("count_nonzero", "the output must hold one element");
}

/// nonzero: an i64 output [rank, n] where n is the read-back count.
template <typename O> void validateNonzero(const std::vector<O> &ins, const std::vector<O> &outs) {
  checkCounts("nonzero", ins, outs, 1, 1, 1);
  const O &x = ins[0];
  const O &out = outs[0];
  checkDType("nonzero", out, DType::I64);
  const int64_t r = static_cast<int64_t>(x.sizes.size());
  if (out.sizes.size() != 2 || out.sizes[0] != r)
    fail("nonzero",
         operandLabel(out) + " shape " + formatDims(out.sizes) + ", expected [" + std::to_string(r) + ", n]");
}

// The dtype checks of top_k, scatter_nd and scatter_elements still differ between the devices
// (their messages do), so only the shape and attribute checks after them are shared.

/// What top_k needs after its checks.
struct TopK {
  size_t axis = 0;
  int64_t n = 0, k = 0; ///< the axis extent of x and of the outputs
  bool largest = false;
};

/// top_k after its dtype checks: axis attrs[0] (non-negative), largest attrs[1], k (the values'
/// extent on the axis) in [0, n], values and indices of x's shape with k on the axis.
template <typename O> TopK validateTopKShapes(const O &x, const O &values, const O &indices, const KernelArgs &args) {
  const int64_t axis = immAttr("top_k", args, 0, "axis");
  const bool largest = immAttr("top_k", args, 1, "largest") != 0;
  if (axis < 0 || axis >= static_cast<int64_t>(x.sizes.size()))
    fail("top_k", "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(x.sizes.size()));
  const size_t a = static_cast<size_t>(axis);
  const int64_t n = x.sizes[a], k = values.sizes.size() == x.sizes.size() ? values.sizes[a] : -1;
  if (k < 0 || k > n) fail("top_k", "k = " + std::to_string(k) + " is outside [0, " + std::to_string(n) + "]");
  std::vector<int64_t> expect = x.sizes;
  expect[a] = k;
  checkShape("top_k", values, expect);
  checkShape("top_k", indices, expect);
  return {a, n, k, largest};
}

/// scatter_nd after its dtype checks: reduction attrs[0]; data and indices of rank >= 1; the last
/// indices dim m in [1, data rank]; updates of shape indices[:-1] + data[m:]. Returns the
/// reduction.
template <typename O>
int64_t validateScatterNDShapes(const std::string &k, const O &data, const O &indices, const O &updates,
                                const KernelArgs &args) {
  const int64_t red = reductionAttr(k, args, 0);
  const size_t r = data.sizes.size(), q = indices.sizes.size();
  if (r < 1 || q < 1) fail(k, "data and indices must have rank >= 1");
  const int64_t m = indices.sizes[q - 1];
  if (m < 1 || static_cast<size_t>(m) > r)
    fail(k, "the last indices dim is " + std::to_string(m) + ", must be in [1, " + std::to_string(r) + "]");
  std::vector<int64_t> expect(indices.sizes.begin(), indices.sizes.end() - 1);
  expect.insert(expect.end(), data.sizes.begin() + m, data.sizes.end());
  checkShape(k, updates, expect);
  return red;
}

/// What scatter_elements needs after its checks.
struct ScatterElements {
  size_t axis = 0;
  int64_t reduction = 0;
};

/// scatter_elements after its dtype checks: axis attrs[0] (non-negative), reduction attrs[1];
/// indices and updates of one shape, of data's rank and no larger than data off the axis.
template <typename O>
ScatterElements validateScatterElementsShapes(const std::string &k, const O &data, const O &indices, const O &updates,
                                              const KernelArgs &args) {
  const size_t r = data.sizes.size();
  const int64_t axis = immAttr(k, args, 0, "axis");
  const int64_t red = reductionAttr(k, args, 1);
  if (axis < 0 || axis >= static_cast<int64_t>(r))
    fail(k, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(r));
  bool ok = indices.sizes.size() == r && updates.sizes == indices.sizes;
  for (size_t d = 0; ok && d < r; ++d)
    ok = static_cast<int64_t>(d) == axis || indices.sizes[d] <= data.sizes[d];
  if (!ok)
    fail(k, "indices " + formatDims(indices.sizes) + " and updates " + formatDims(updates.sizes) +
                " must have one shape that fits data " + formatDims(data.sizes));
  return {static_cast<size_t>(axis), red};
}

} // namespace dq::rt::kernel
