// Index-producing and index-consuming kernels of the sim device: arg_max, arg_min, one_hot.
#include "SimKernelSupport.h"

namespace dq::rt::sim {
namespace {

// arg_max / arg_min along imm[1]; imm[2] = select_last_index. A NaN counts as the extreme (the
// first NaN wins, or the last one with select_last_index), as numpy's argmax / argmin.
void argExtreme(const char *kernel, bool isMax, std::vector<Operand> &ins, std::vector<Operand> &outs,
                const KernelArgs &args) {
  const kernel::ArgExtreme a = kernel::validateArgExtreme(kernel, ins, outs, args);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const size_t axis = a.axis;
  const bool last = a.last;
  const int64_t n = in.sizes[axis];
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
  const size_t axis = kernel::validateOneHot(ins, outs, args);
  const Operand &indices = ins[0], &values = ins[1];
  Operand &out = outs[0];
  const int64_t depth = out.sizes[axis];
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
