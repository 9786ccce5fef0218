// `hip` device: host sides of the data-dependent and shape-input kernels (kernels in
// HipDataDependentKernels.hip).
#include "HipDeviceImpl.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace dq::rt::hipdev {
void HipDevice::kCountNonzero(std::vector<Operand> &ins, std::vector<Operand> &outs) {
  kernel::validateCountNonzero(ins, outs);
  launched(hipk::countNonzero(stream_, own(outs[0]), own(ins[0]), shapeOf(ins[0].sizes)));
}

void HipDevice::kNonzero(std::vector<Operand> &ins, std::vector<Operand> &outs) {
  kernel::validateNonzero(ins, outs);
  const Operand &x = ins[0];
  Operand &out = outs[0];
  launched(hipk::nonzero(stream_, own(out), own(x), shapeOf(x.sizes), out.sizes[1], errDev_));
  checkDataError("nonzero");
}

void HipDevice::kCompress(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkCounts("compress", ins, outs, 2, 2, 1);
  const Operand &data = ins[0], &cond = ins[1];
  Operand &out = outs[0];
  if (cond.sizes.size() != 1) fail("compress", "the condition must have rank 1");
  checkSameDType("compress", data, out);
  const int64_t axis = immAttr("compress", args, 0, "axis");
  if (axis < 0 || axis >= static_cast<int64_t>(data.sizes.size()))
    fail("compress", "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(data.sizes.size()));
  if (out.sizes.size() != data.sizes.size())
    fail("compress",
         out.label() + " shape " + formatDims(out.sizes) + " does not match data " + formatDims(data.sizes));
  for (size_t d = 0; d < data.sizes.size(); ++d)
    if (static_cast<int64_t>(d) != axis && out.sizes[d] != data.sizes[d])
      fail("compress",
           out.label() + " shape " + formatDims(out.sizes) + " does not match data " + formatDims(data.sizes));
  // The out extent is the read-back count; the kernel trusts it, as the count kernel produced it.
  launched(hipk::compress(stream_, own(out), shapeOf(out.sizes), own(data), own(cond), cond.sizes[0],
                          static_cast<int>(axis), data.sizes[static_cast<size_t>(axis)], errDev_));
  checkDataError("compress");
}

void HipDevice::kTopK(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkCounts("top_k", ins, outs, 1, 1, 2);
  const Operand &x = ins[0];
  Operand &values = outs[0], &indices = outs[1];
  checkAdmits("top_k", x, kNumericTypes);
  checkSameDType("top_k", x, values);
  checkDType("top_k", indices, DType::I64);
  const kernel::TopK t = kernel::validateTopKShapes(x, values, indices, args);
  const size_t a = t.axis;
  const int64_t n = t.n, k = t.k;
  const bool largest = t.largest;
  std::vector<int64_t> lines = x.sizes;
  lines[a] = 1;
  launched(hipk::topK(stream_, own(values), own(indices), own(x), shapeOf(lines), static_cast<int>(a), n, k, largest));
}

void HipDevice::kTile(std::vector<Operand> &ins, std::vector<Operand> &outs) {
  checkCounts("tile", ins, outs, 1, 1, 1);
  const Operand &x = ins[0];
  Operand &out = outs[0];
  checkSameDType("tile", x, out);
  bool ok = out.sizes.size() == x.sizes.size();
  for (size_t d = 0; ok && d < x.sizes.size(); ++d)
    ok = x.sizes[d] == 0 ? out.sizes[d] == 0 : out.sizes[d] % x.sizes[d] == 0;
  if (!ok)
    fail("tile", out.label() + " shape " + formatDims(out.sizes) + " is not a multiple of " + formatDims(x.sizes));
  launched(hipk::tile(stream_, own(out), shapeOf(out.sizes), own(x), x.sizes.data()));
}

void HipDevice::kPad(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkCounts("pad", ins, outs, 1, 2, 1);
  const Operand &x = ins[0];
  Operand &out = outs[0];
  checkSameDType("pad", x, out);
  const int64_t mode = immAttr("pad", args, 0, "mode");
  if (mode < 0 || mode > 2)
    fail("pad", "mode " + std::to_string(mode) + " is not 0 (constant), 1 (reflect) or 2 (edge)");
  const size_t r = x.sizes.size();
  if (out.sizes.size() != r || args.scalars.size() != r)
    fail("pad", "expects an output of rank " + std::to_string(r) + " and one begin pad per axis");
  hipk::Opd value;
  if (ins.size() == 2) {
    checkSameDType("pad", x, ins[1]);
    if (numel(ins[1].sizes) != 1) fail("pad", "the constant value must hold one element");
    value = own(ins[1]);
  }
  launched(hipk::pad(stream_, own(out), shapeOf(out.sizes), own(x), x.sizes.data(), args.scalars.data(),
                     static_cast<int>(mode), value, ins.size() == 2, errDev_));
  checkDataError("pad");
}

void HipDevice::kScatterND(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const std::string k = "scatter_nd";
  checkCounts(k, ins, outs, 3, 3, 1);
  const Operand &data = ins[0], &indices = ins[1], &updates = ins[2];
  Operand &out = outs[0];
  checkAdmits(k, indices, kIndexTypes);
  checkSameDType(k, data, updates);
  checkSameDType(k, data, out);
  checkShape(k, out, data.sizes);
  const int red = static_cast<int>(kernel::validateScatterNDShapes(k, data, indices, updates, args));
  const size_t r = data.sizes.size(), q = indices.sizes.size();
  const int64_t m = indices.sizes[q - 1];
  std::vector<int64_t> tuples(indices.sizes.begin(), indices.sizes.end() - 1);
  std::vector<int64_t> slice(data.sizes.begin() + m, data.sizes.end());
  copyView(out, data);
  launched(hipk::scatterND(stream_, own(out), data.sizes.data(), static_cast<int>(r), own(indices), shapeOf(tuples),
                           static_cast<int>(m), own(updates), shapeOf(slice), red, errDev_));
  checkDataError(k);
}

void HipDevice::kScatterElements(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const std::string k = "scatter_elements";
  checkCounts(k, ins, outs, 3, 3, 1);
  const Operand &data = ins[0], &indices = ins[1], &updates = ins[2];
  Operand &out = outs[0];
  checkAdmits(k, indices, kIndexTypes);
  checkSameDType(k, data, updates);
  checkSameDType(k, data, out);
  checkShape(k, out, data.sizes);
  const kernel::ScatterElements s = kernel::validateScatterElementsShapes(k, data, indices, updates, args);
  const int64_t axis = static_cast<int64_t>(s.axis);
  const int red = static_cast<int>(s.reduction);
  copyView(out, data);
  launched(hipk::scatterElements(stream_, own(out), data.sizes.data(), own(indices), own(updates),
                                 shapeOf(indices.sizes), static_cast<int>(axis), red, errDev_));
  checkDataError(k);
}

} // namespace dq::rt::hipdev
