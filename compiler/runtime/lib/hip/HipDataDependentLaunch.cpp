// `hip` device: host sides of the data-dependent and shape-input kernels (kernels in
// HipDataDependentKernels.hip).
#include "HipDeviceImpl.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace dq::rt::hipdev {
void HipDevice::checkCounts(const std::string &k, const std::vector<Operand> &ins, const std::vector<Operand> &outs,
                            size_t minIns, size_t maxIns, size_t nOuts) {
  if (ins.size() < minIns || ins.size() > maxIns || outs.size() != nOuts)
    fail(k, "expects " + std::to_string(minIns) + (maxIns != minIns ? "-" + std::to_string(maxIns) : "") +
                " inputs and " + std::to_string(nOuts) + " outputs, got " + std::to_string(ins.size()) + " and " +
                std::to_string(outs.size()));
}

int64_t HipDevice::immAt(const std::string &k, const KernelArgs &args, size_t i, const char *what) {
  if (args.attrs.size() <= i) fail(k, std::string("missing imm[") + std::to_string(i + 1) + "] (" + what + ")");
  return args.attrs[i];
}

void HipDevice::kCountNonzero(std::vector<Operand> &ins, std::vector<Operand> &outs) {
  checkCounts("count_nonzero", ins, outs, 1, 1, 1);
  checkDType("count_nonzero", outs[0], DType::I64);
  if (numel(outs[0].sizes) != 1) fail("count_nonzero", "the output must hold one element");
  launched(hipk::countNonzero(stream_, own(outs[0]), own(ins[0]), shapeOf(ins[0].sizes)));
}

void HipDevice::kNonzero(std::vector<Operand> &ins, std::vector<Operand> &outs) {
  checkCounts("nonzero", ins, outs, 1, 1, 1);
  const Operand &x = ins[0];
  Operand &out = outs[0];
  checkDType("nonzero", out, DType::I64);
  const int64_t r = static_cast<int64_t>(x.sizes.size());
  if (out.sizes.size() != 2 || out.sizes[0] != r)
    fail("nonzero", out.label() + " shape " + formatDims(out.sizes) + ", expected [" + std::to_string(r) + ", n]");
  launched(hipk::nonzero(stream_, own(out), own(x), shapeOf(x.sizes), out.sizes[1], errDev_));
  checkDataError("nonzero");
}

void HipDevice::kCompress(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkCounts("compress", ins, outs, 2, 2, 1);
  const Operand &data = ins[0], &cond = ins[1];
  Operand &out = outs[0];
  if (cond.sizes.size() != 1) fail("compress", "the condition must have rank 1");
  checkSameDType("compress", data, out);
  const int64_t axis = immAt("compress", args, 0, "axis");
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
  const int64_t axis = immAt("top_k", args, 0, "axis");
  const bool largest = immAt("top_k", args, 1, "largest") != 0;
  if (axis < 0 || axis >= static_cast<int64_t>(x.sizes.size()))
    fail("top_k", "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(x.sizes.size()));
  const size_t a = static_cast<size_t>(axis);
  const int64_t n = x.sizes[a], k = values.sizes.size() == x.sizes.size() ? values.sizes[a] : -1;
  if (k < 0 || k > n) fail("top_k", "k = " + std::to_string(k) + " is outside [0, " + std::to_string(n) + "]");
  std::vector<int64_t> expect = x.sizes, lines = x.sizes;
  expect[a] = k;
  lines[a] = 1;
  checkShape("top_k", values, expect);
  checkShape("top_k", indices, expect);
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
  const int64_t mode = immAt("pad", args, 0, "mode");
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

int HipDevice::reductionOf(const std::string &k, const KernelArgs &args, size_t i) {
  const int64_t red = immAt(k, args, i, "reduction");
  if (red < 0 || red > 4) fail(k, "reduction " + std::to_string(red) + " is not in [0, 4]");
  return static_cast<int>(red);
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
  const int red = reductionOf(k, args, 0);
  const size_t r = data.sizes.size(), q = indices.sizes.size();
  if (r < 1 || q < 1) fail(k, "data and indices must have rank >= 1");
  const int64_t m = indices.sizes[q - 1];
  if (m < 1 || static_cast<size_t>(m) > r)
    fail(k, "the last indices dim is " + std::to_string(m) + ", must be in [1, " + std::to_string(r) + "]");
  std::vector<int64_t> tuples(indices.sizes.begin(), indices.sizes.end() - 1);
  std::vector<int64_t> slice(data.sizes.begin() + m, data.sizes.end());
  std::vector<int64_t> expect = tuples;
  expect.insert(expect.end(), slice.begin(), slice.end());
  checkShape(k, updates, expect);
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
  const size_t r = data.sizes.size();
  const int64_t axis = immAt(k, args, 0, "axis");
  const int red = reductionOf(k, args, 1);
  if (axis < 0 || axis >= static_cast<int64_t>(r))
    fail(k, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(r));
  bool ok = indices.sizes.size() == r && updates.sizes == indices.sizes;
  for (size_t d = 0; ok && d < r; ++d)
    ok = static_cast<int64_t>(d) == axis || indices.sizes[d] <= data.sizes[d];
  if (!ok)
    fail(k, "indices " + formatDims(indices.sizes) + " and updates " + formatDims(updates.sizes) +
                " must have one shape that fits data " + formatDims(data.sizes));
  copyView(out, data);
  launched(hipk::scatterElements(stream_, own(out), data.sizes.data(), own(indices), own(updates),
                                 shapeOf(indices.sizes), static_cast<int>(axis), red, errDev_));
  checkDataError(k);
}

} // namespace dq::rt::hipdev
