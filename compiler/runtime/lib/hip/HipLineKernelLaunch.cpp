// `hip` device: host sides of the kernels that work along one axis per line: softmax and
// log_softmax, arg_max/arg_min, layer norm, reductions and cumsum.
#include "HipDeviceImpl.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace dq::rt::hipdev {
void HipDevice::kSoftmax(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args, bool logOut) {
  const char *kernel = logOut ? "log_softmax" : "softmax";
  const size_t axis = kernel::validateSoftmax(kernel, ins, outs, args);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  lineKernel(in, out, axis, [&](hipk::Opd o, hipk::Opd i, hipk::Shape lines, int64_t n, int64_t si, int64_t so) {
    return hipk::softmax(stream_, o, i, lines, n, si, so, logOut);
  });
}

void HipDevice::kArgExtreme(const char *kernel, bool isMax, std::vector<Operand> &ins, std::vector<Operand> &outs,
                            const KernelArgs &args) {
  const kernel::ArgExtreme a = kernel::validateArgExtreme(kernel, ins, outs, args);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const size_t axis = a.axis;
  const bool last = a.last;
  lineKernel(in, out, axis, [&](hipk::Opd o, hipk::Opd i, hipk::Shape lines, int64_t n, int64_t si, int64_t) {
    return hipk::argExtreme(stream_, o, i, lines, n, si, isMax, last);
  });
}

void HipDevice::kLayerNorm(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const size_t axis = kernel::validateLayerNorm(ins, outs, args);
  const Operand &x = ins[0];
  Operand &out = outs[0];
  const size_t rank = x.sizes.size();
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
  const kernel::Reduction shapes = kernel::validateReduce(kernel, kind == 2 || kind == 3, ins, outs, args);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const size_t rank = in.sizes.size();
  const std::vector<int64_t> &extent = shapes.extent, &expect = shapes.kept;
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
  const kernel::Cumsum c = kernel::validateCumsum(ins, outs, args);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const size_t axis = c.axis;
  const bool exclusive = c.exclusive, reverse = c.reverse;
  lineKernel(in, out, axis, [&](hipk::Opd o, hipk::Opd i, hipk::Shape lines, int64_t n, int64_t si, int64_t so) {
    return hipk::cumsum(stream_, o, i, lines, n, si, so, exclusive, reverse);
  });
}

} // namespace dq::rt::hipdev
