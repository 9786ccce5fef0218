// Data-movement kernels of the sim device: copies, gathers, range and fill.
#include "SimKernelSupport.h"

namespace dq::rt::sim {
namespace {

void kExpand(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  kernel::validateExpand(ins, outs);
  forEachIndex(outs[0].sizes, [&](const std::vector<int64_t> &idx) {
    copyElement(outs[0], at(outs[0], idx), ins[0], at(ins[0], idx));
  });
}

void kSlice(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  if (kernel::validateSlice(ins, outs, args)) return;
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const size_t r = out.sizes.size();
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    int64_t e = in.offset;
    for (size_t d = 0; d < r; ++d)
      e += (args.scalars[d] + idx[d] * args.scalars[r + d]) * in.strides[d];
    copyElement(out, at(out, idx), in, e);
  });
}

void kTranspose(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  kernel::validateTranspose(ins, outs, args);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const size_t r = in.sizes.size();
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    int64_t e = in.offset;
    for (size_t j = 0; j < r; ++j)
      e += idx[j] * in.strides[static_cast<size_t>(args.attrs[j])];
    copyElement(out, at(out, idx), in, e);
  });
}

void kConcat(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const size_t axis = kernel::validateConcat(ins, outs, args);
  Operand &out = outs[0];
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
  const size_t axis = kernel::validateGather(ins, outs, args);
  const Operand &data = ins[0], &indices = ins[1];
  Operand &out = outs[0];
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
  kernel::validateRange(ins, outs);
  Operand &out = outs[0];
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
  kernel::validateRangeLength(ins, outs);
  Operand &out = outs[0];
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
  const bool fl = kernel::validateFill(ins, outs, args);
  Operand &out = outs[0];
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    if (fl)
      storeF(out, at(out, idx), args.fattrs[0]);
    else
      storeI(out, at(out, idx), args.attrs[0]);
  });
}

void kTrilu(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const bool upper = kernel::validateTrilu(ins, outs, args);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const size_t r = in.sizes.size();
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
  const size_t axis = kernel::validateGatherElements(ins, outs, args);
  const Operand &data = ins[0], &indices = ins[1];
  Operand &out = outs[0];
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    std::vector<int64_t> di = idx;
    di[axis] = checkIndex(loadI(indices, at(indices, idx)), data.sizes[axis], axis);
    copyElement(out, at(out, idx), data, at(data, di));
  });
}

void kGatherND(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const kernel::GatherND g = kernel::validateGatherND(ins, outs, args);
  const Operand &data = ins[0], &indices = ins[1];
  Operand &out = outs[0];
  const size_t q = indices.sizes.size(), b = g.batchDims;
  const int64_t m = g.m;
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
