// Data-movement kernels of the sim device: copies, gathers, range and fill.
#include "SimKernelSupport.h"

namespace dq::rt::sim {
namespace {

void kExpand(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  checkArity("expand", ins, outs, 1);
  checkSameDType("expand", ins[0], outs[0]);
  checkBroadcast("expand", ins[0], outs[0]);
  forEachIndex(outs[0].sizes, [&](const std::vector<int64_t> &idx) {
    copyElement(outs[0], at(outs[0], idx), ins[0], at(ins[0], idx));
  });
}

void kSlice(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("slice", ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkSameDType("slice", in, out);
  const size_t r = out.sizes.size();
  if (in.sizes.size() != r || args.scalars.size() != 2 * r)
    fail("slice", "expects equal ranks and " + std::to_string(2 * r) + " scalars (starts, steps)");
  for (size_t d = 0; d < r; ++d) {
    if (out.sizes[d] == 0) return;
    int64_t first = args.scalars[d], step = args.scalars[r + d];
    int64_t last = first + (out.sizes[d] - 1) * step;
    if (first < 0 || first >= in.sizes[d] || last < 0 || last >= in.sizes[d])
      fail("slice", "axis " + std::to_string(d) + " reads indices " + std::to_string(first) + ".." +
                        std::to_string(last) + " of a dim of size " + std::to_string(in.sizes[d]));
  }
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    int64_t e = in.offset;
    for (size_t d = 0; d < r; ++d)
      e += (args.scalars[d] + idx[d] * args.scalars[r + d]) * in.strides[d];
    copyElement(out, at(out, idx), in, e);
  });
}

void kTranspose(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("transpose", ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
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
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    int64_t e = in.offset;
    for (size_t j = 0; j < r; ++j)
      e += idx[j] * in.strides[static_cast<size_t>(args.attrs[j])];
    copyElement(out, at(out, idx), in, e);
  });
}

void kConcat(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  if (ins.empty() || outs.size() != 1) fail("concat", "expects at least 1 input and 1 output");
  Operand &out = outs[0];
  const size_t axis = normalizeAxis("concat", args, out.sizes.size());
  int64_t total = 0;
  for (const Operand &in : ins) {
    checkSameDType("concat", in, out);
    bool ok = in.sizes.size() == out.sizes.size();
    for (size_t d = 0; ok && d < in.sizes.size(); ++d)
      ok = d == axis || in.sizes[d] == out.sizes[d];
    if (!ok)
      fail("concat", in.label + " shape " + formatDims(in.sizes) + " does not fit " + formatDims(out.sizes) +
                         " along axis " + std::to_string(axis));
    total += in.sizes[axis];
  }
  if (total != out.sizes[axis])
    fail("concat", "inputs sum to " + std::to_string(total) + " along axis " + std::to_string(axis) + ", output has " +
                       std::to_string(out.sizes[axis]));
  int64_t base = 0;
  for (const Operand &in : ins) {
    forEachIndex(in.sizes, [&](const std::vector<int64_t> &idx) {
      std::vector<int64_t> o = idx;
      o[axis] += base;
      copyElement(out, at(out, o), in, at(in, idx));
    });
    base += in.sizes[axis];
  }
}

void kGather(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("gather", ins, outs, 2);
  const Operand &data = ins[0], &indices = ins[1];
  Operand &out = outs[0];
  checkSameDType("gather", data, out);
  if (indices.dtype != DType::I32 && indices.dtype != DType::I64)
    fail("gather", "indices must be i32 or i64, got " + dtypeName(indices.dtype));
  const size_t axis = normalizeAxis("gather", args, data.sizes.size());
  std::vector<int64_t> expect(data.sizes.begin(), data.sizes.begin() + static_cast<long>(axis));
  expect.insert(expect.end(), indices.sizes.begin(), indices.sizes.end());
  expect.insert(expect.end(), data.sizes.begin() + static_cast<long>(axis) + 1, data.sizes.end());
  if (expect != out.sizes) fail("gather", "output shape " + formatDims(out.sizes) + ", expected " + formatDims(expect));
  const size_t ri = indices.sizes.size();
  const int64_t n = data.sizes[axis];
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    std::vector<int64_t> ii(idx.begin() + static_cast<long>(axis), idx.begin() + static_cast<long>(axis + ri));
    int64_t k = loadI(indices, at(indices, ii));
    if (k < -n || k >= n)
      fail("gather", "index " + std::to_string(k) + " out of range for axis " + std::to_string(axis) + " of size " +
                         std::to_string(n));
    if (k < 0) k += n;
    int64_t e = data.offset + k * data.strides[axis];
    for (size_t d = 0; d < axis; ++d)
      e += idx[d] * data.strides[d];
    for (size_t d = axis + 1; d < data.sizes.size(); ++d)
      e += idx[d - 1 + ri] * data.strides[d];
    copyElement(out, at(out, idx), data, e);
  });
}

void kRange(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  checkArity("range", ins, outs, 2);
  Operand &out = outs[0];
  checkSameDType("range", ins[0], out);
  checkSameDType("range", ins[1], out);
  if (numElements(ins[0].sizes) != 1 || numElements(ins[1].sizes) != 1 || out.sizes.size() != 1)
    fail("range", "expects one-element start and delta and a 1-D output");
  const bool fl = isFloat(out.dtype);
  for (int64_t i = 0; i < out.sizes[0]; ++i) {
    int64_t e = out.offset + i * out.strides[0];
    if (fl)
      storeF(out, e, loadF(ins[0], ins[0].offset) + static_cast<double>(i) * loadF(ins[1], ins[1].offset));
    else
      storeI(out, e, wrapAdd(loadI(ins[0], ins[0].offset), wrapMul(i, loadI(ins[1], ins[1].offset))));
  }
}

void kRangeLength(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  checkArity("range_length", ins, outs, 3);
  Operand &out = outs[0];
  checkAdmits("range_length", ins[0], kNumericTypes);
  checkSameDType("range_length", ins[0], ins[1]);
  checkSameDType("range_length", ins[0], ins[2]);
  if (out.dtype != DType::I64 || numElements(out.sizes) != 1) fail("range_length", "expects a one-element i64 output");
  for (const Operand &x : ins)
    if (numElements(x.sizes) != 1) fail("range_length", "expects one-element start, limit and delta");
  int64_t n = 0;
  if (isFloat(ins[0].dtype)) {
    const double s = loadF(ins[0], ins[0].offset), l = loadF(ins[1], ins[1].offset), d = loadF(ins[2], ins[2].offset);
    if (d == 0) fail("range_length", "delta is 0");
    const double c = std::ceil((l - s) / d);
    if (std::isnan(c)) fail("range_length", "the element count is NaN");
    if (c > 9.0e18) fail("range_length", "the element count does not fit in int64");
    n = c > 0 ? static_cast<int64_t>(c) : 0;
  } else {
    const __int128 s = loadI(ins[0], ins[0].offset), l = loadI(ins[1], ins[1].offset), d = loadI(ins[2], ins[2].offset);
    if (d == 0) fail("range_length", "delta is 0");
    const __int128 span = l - s;
    // Ceiling division rounding toward +infinity for either sign.
    __int128 q = span / d;
    if (span % d != 0 && ((span > 0) == (d > 0))) ++q;
    n = q > 0 ? static_cast<int64_t>(q) : 0;
  }
  storeI(out, out.offset, n);
}

void kFill(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("fill", ins, outs, 0);
  Operand &out = outs[0];
  const bool fl = isFloat(out.dtype);
  if (fl ? args.fattrs.empty() : args.attrs.empty())
    fail("fill", std::string("missing value (") + (fl ? "fimm[0]" : "imm[1]") + ")");
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    if (fl)
      storeF(out, at(out, idx), args.fattrs[0]);
    else
      storeI(out, at(out, idx), args.attrs[0]);
  });
}

void kTrilu(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("trilu", ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkSameDType("trilu", in, out);
  checkShape("trilu", out, in.sizes);
  const size_t r = in.sizes.size();
  if (r < 2) fail("trilu", "expects rank >= 2, got " + formatDims(in.sizes));
  const bool upper = flagAttr("trilu", args, 0, "upper");
  if (args.scalars.size() != 1) fail("trilu", "expects one scalar operand (k)");
  const int64_t k = args.scalars[0];
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    const int64_t diag = idx[r - 1] - idx[r - 2]; // column - row
    if (upper ? diag >= k : diag <= k)
      copyElement(out, at(out, idx), in, at(in, idx));
    else
      storeZero(out, at(out, idx));
  });
}

void kGatherElements(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("gather_elements", ins, outs, 2);
  const Operand &data = ins[0], &indices = ins[1];
  Operand &out = outs[0];
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
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    std::vector<int64_t> di = idx;
    di[axis] = checkIndex(loadI(indices, at(indices, idx)), data.sizes[axis], axis);
    copyElement(out, at(out, idx), data, at(data, di));
  });
}

void kGatherND(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("gather_nd", ins, outs, 2);
  const Operand &data = ins[0], &indices = ins[1];
  Operand &out = outs[0];
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
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &oi) {
    std::vector<int64_t> ii(oi.begin(), oi.begin() + static_cast<long>(q - 1));
    ii.push_back(0);
    std::vector<int64_t> di(oi.begin(), oi.begin() + static_cast<long>(b));
    for (int64_t t = 0; t < m; ++t) {
      ii[q - 1] = t;
      const size_t axis = b + static_cast<size_t>(t);
      di.push_back(checkIndex(loadI(indices, at(indices, ii)), data.sizes[axis], axis));
    }
    di.insert(di.end(), oi.begin() + static_cast<long>(q - 1), oi.end());
    copyElement(out, at(out, oi), data, at(data, di));
  });
}

} // namespace

void addDataKernels(KernelTable &table) {
  table["expand"] = kExpand;
  table["slice"] = kSlice;
  table["transpose"] = kTranspose;
  table["concat"] = kConcat;
  table["gather"] = kGather;
  table["range"] = kRange;
  table["range_length"] = kRangeLength;
  table["fill"] = kFill;
  table["trilu"] = kTrilu;
  table["gather_elements"] = kGatherElements;
  table["gather_nd"] = kGatherND;
}

} // namespace dq::rt::sim
