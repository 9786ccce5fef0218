// Index-producing and index-consuming kernels of the sim device: arg_max, arg_min, one_hot.
#include "SimKernelSupport.h"

namespace dq::rt::sim {
namespace {

// arg_max / arg_min along imm[1]; imm[2] = select_last_index. A NaN counts as the extreme (the
// first NaN wins, or the last one with select_last_index), as numpy's argmax / argmin.
void argExtreme(const char *kernel, bool isMax, std::vector<Operand> &ins, std::vector<Operand> &outs,
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
  const int64_t n = in.sizes[axis];
  if (n == 0 && numElements(expect) > 0) fail(kernel, "the reduced axis has extent 0");
  const bool fl = isFloat(in.dtype);
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    int64_t best = 0;
    double fb = fl ? loadF(in, alongAxis(in, idx, axis, 0)) : 0;
    int64_t ib = fl ? 0 : loadI(in, alongAxis(in, idx, axis, 0));
    for (int64_t j = 1; j < n; ++j) {
      const int64_t e = alongAxis(in, idx, axis, j);
      bool better, tie;
      if (fl) {
        const double v = loadF(in, e);
        const bool vn = std::isnan(v), bn = std::isnan(fb);
        better = bn ? false : vn ? true : (isMax ? v > fb : v < fb);
        tie = (vn && bn) || (!vn && !bn && v == fb);
        if (better || (last && tie)) fb = v;
      } else {
        const int64_t v = loadI(in, e);
        better = isMax ? v > ib : v < ib;
        tie = v == ib;
        if (better || (last && tie)) ib = v;
      }
      if (better || (last && tie)) best = j;
    }
    storeI(out, at(out, idx), best);
  });
}

void kArgMax(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) {
  argExtreme("arg_max", true, i, o, a);
}
void kArgMin(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) {
  argExtreme("arg_min", false, i, o, a);
}

// one_hot: ins indices (numeric; floats truncated toward zero), values [off, on]; imm[1] = the
// depth axis of out (non-negative). out[.., j, ..] = on where j == index (a negative index counts
// from depth), else off; an index outside [-depth, depth) gives a row of off.
void kOneHot(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("one_hot", ins, outs, 2);
  const Operand &indices = ins[0], &values = ins[1];
  Operand &out = outs[0];
  checkAdmits("one_hot", indices, kNumericTypes);
  checkSameDType("one_hot", values, out);
  if (values.sizes.size() != 1 || values.sizes[0] != 2)
    fail("one_hot", values.label + " shape " + formatDims(values.sizes) + ", expected [2] (off, on)");
  const size_t axis = axisAttr("one_hot", args, 0, out.sizes.size(), false);
  std::vector<int64_t> expect = indices.sizes;
  const int64_t depth = out.sizes[axis];
  expect.insert(expect.begin() + static_cast<long>(axis), depth);
  checkShape("one_hot", out, expect);
  const int64_t off = values.offset, on = values.offset + values.strides[0];
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    std::vector<int64_t> ii = idx;
    ii.erase(ii.begin() + static_cast<long>(axis));
    const int64_t ie = at(indices, ii);
    int64_t k;
    if (isFloat(indices.dtype)) {
      const double v = loadF(indices, ie);
      k = std::isfinite(v) && std::fabs(v) < 9.0e18 ? static_cast<int64_t>(std::trunc(v)) : depth;
    } else {
      k = loadI(indices, ie);
    }
    if (k < 0 && k >= -depth) k += depth;
    copyElement(out, at(out, idx), values, idx[axis] == k ? on : off);
  });
}

} // namespace

void addIndexKernels(KernelTable &table) {
  table["arg_max"] = kArgMax;
  table["arg_min"] = kArgMin;
  table["one_hot"] = kOneHot;
}

} // namespace dq::rt::sim
