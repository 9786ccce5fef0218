// `hip` device: host sides of the kernels that work along one axis per line: softmax and
// log_softmax, arg_max/arg_min, layer norm, reductions and cumsum.
#include "HipDeviceImpl.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace dq::rt::hipdev {
void HipDevice::kSoftmax(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args, bool logOut) {
  const char *kernel = logOut ? "log_softmax" : "softmax";
  checkArity(kernel, ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkAdmits(kernel, in, kFloatTypes);
  checkSameDType(kernel, in, out);
  checkShape(kernel, out, in.sizes);
  const size_t axis = axisAttr(kernel, args, 0, in.sizes.size(), false);
  lineKernel(in, out, axis, [&](hipk::Opd o, hipk::Opd i, hipk::Shape lines, int64_t n, int64_t si, int64_t so) {
    return hipk::softmax(stream_, o, i, lines, n, si, so, logOut);
  });
}

void HipDevice::kArgExtreme(const char *kernel, bool isMax, std::vector<Operand> &ins, std::vector<Operand> &outs,
                            const KernelArgs &args) {
  checkArity(kernel, ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkAdmits(kernel, in, kNumericTypes);
  checkDType(kernel, out, DType::I64);
  const size_t axis = axisAttr(kernel, args, 0, in.sizes.size(), false);
  const bool last = flagAttr(kernel, args, 1, "select_last_index");
  std::vector<int64_t> expect = in.sizes;
  expect[axis] = 1;
  checkShape(kernel, out, expect);
  if (in.sizes[axis] == 0 && numel(expect) > 0) fail(kernel, "the reduced axis has extent 0");
  lineKernel(in, out, axis, [&](hipk::Opd o, hipk::Opd i, hipk::Shape lines, int64_t n, int64_t si, int64_t) {
    return hipk::argExtreme(stream_, o, i, lines, n, si, isMax, last);
  });
}

void HipDevice::kLayerNorm(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  if ((ins.size() != 2 && ins.size() != 3) || outs.size() != 1)
    fail("layer_norm", "expects 2 or 3 inputs (X, scale[, bias]) and 1 output, got " + std::to_string(ins.size()) +
                           " and " + std::to_string(outs.size()));
  const Operand &x = ins[0];
  Operand &out = outs[0];
  checkAdmits("layer_norm", x, kFloatTypes);
  for (size_t i = 1; i < ins.size(); ++i) {
    checkSameDType("layer_norm", ins[i], x);
    checkBroadcast("layer_norm", ins[i], out);
  }
  checkSameDType("layer_norm", x, out);
  checkShape("layer_norm", out, x.sizes);
  const size_t rank = x.sizes.size();
  const size_t axis = axisAttr("layer_norm", args, 0, rank, true);
  if (args.fattrs.empty()) fail("layer_norm", "missing epsilon (fimm[0])");
  std::vector<int64_t> rows = x.sizes, inner = x.sizes;
  for (size_t d = 0; d < rank; ++d)
    (d < axis ? inner : rows)[d] = 1;
  const bool hasBias = ins.size() == 3;
  launched(hipk::layerNorm(stream_, aligned(out, rank), aligned(x, rank), aligned(ins[1], rank),
                           hasBias ? aligned(ins[2], rank) : hipk::Opd{}, hasBias, shapeOf(rows), shapeOf(inner),
                           args.fattrs[0]));
}

void HipDevice::kReduce(const char *kernel, int kind, std::vector<Operand> &ins, std::vector<Operand> &outs,
                        const KernelArgs &args) {
  checkArity(kernel, ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkAdmits(kernel, in, kind == 2 || kind == 3 ? kAllTypes : kWideTypes);
  checkSameDType(kernel, in, out);
  const size_t rank = in.sizes.size();
  std::vector<int64_t> extent(rank, 1), expect = in.sizes;
  std::vector<int64_t> axes = args.attrs;
  if (!args.scalars.empty()) {
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
  const int64_t count = numel(extent);
  if (count == 0 && numel(out.sizes) > 0) {
    try {
      if (kind == 2 || kind == 3)
        throw RuntimeError(std::string(kernel) + " over an empty extent " + formatDims(extent));
      if ((kind == 1 || kind == 7) && !isFloat(in.dtype))
        throw RuntimeError(std::string("integer ") + kernel + " over an empty extent " + formatDims(extent));
    } catch (const RuntimeError &e) {
      fail(kernel, e.what());
    }
  }
  launched(hipk::reduce(stream_, kind, aligned(out, rank), own(in), shapeOf(expect), shapeOf(extent)));
}

void HipDevice::kCumsum(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("cumsum", ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkAdmits("cumsum", in, kWideTypes);
  checkSameDType("cumsum", in, out);
  checkShape("cumsum", out, in.sizes);
  size_t axis = 0;
  if (args.scalars.empty()) {
    axis = axisAttr("cumsum", args, 0, in.sizes.size(), true);
  } else {
    const int64_t r = static_cast<int64_t>(in.sizes.size()), a = args.scalars[0];
    if (args.scalars.size() != 1 || a < -r || a >= r)
      fail("cumsum", "axis s[0] = " + std::to_string(a) + " out of range for rank " + std::to_string(r));
    axis = static_cast<size_t>(a < 0 ? a + r : a);
  }
  const bool exclusive = flagAttr("cumsum", args, 1, "exclusive");
  const bool reverse = flagAttr("cumsum", args, 2, "reverse");
  lineKernel(in, out, axis, [&](hipk::Opd o, hipk::Opd i, hipk::Shape lines, int64_t n, int64_t si, int64_t so) {
    return hipk::cumsum(stream_, o, i, lines, n, si, so, exclusive, reverse);
  });
}

} // namespace dq::rt::hipdev
