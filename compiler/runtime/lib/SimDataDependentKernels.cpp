// Sim kernels of the data-dependent and shape-input ops: count_nonzero, nonzero, compress, top_k,
// tile, pad, scatter_nd, scatter_elements (semantics in Program.h). Element access re-checks the
// byte states like every sim kernel; floats compare and combine in double and round once per
// stored element, as the reference does, so exact mode is bit-exact.
#include "SimDataDependentKernels.h"
#include "SimKernelSupport.h"

#include "dq/runtime/Error.h"
#include "dq/runtime/Float16.h"
#include "dq/runtime/HostTensor.h"
#include "dq/runtime/SimDevice.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <set>

namespace dq::rt::sim {
namespace {

bool nonZeroAt(const Operand &o, int64_t e) { return isFloat(o.dtype) ? loadF(o, e) != 0.0 : loadI(o, e) != 0; }

void checkIndexType(const std::string &k, const Operand &o) {
  if (o.dtype != DType::I32 && o.dtype != DType::I64)
    fail(k, "unsupported: " + o.label + " is " + dtypeName(o.dtype) + "; indices must be i32 or i64");
}

int64_t wrapIndex(const std::string &k, int64_t v, int64_t n, size_t axis) {
  if (v < -n || v >= n)
    fail(k, "index " + std::to_string(v) + " out of range for axis " + std::to_string(axis) + " of size " +
                std::to_string(n));
  return v < 0 ? v + n : v;
}

// ---- kernels ------------------------------------------------------------------------------------

void kCountNonzero(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  kernel::validateCountNonzero(ins, outs);
  int64_t n = 0;
  forEachIndex(ins[0].sizes, [&](const std::vector<int64_t> &idx) { n += nonZeroAt(ins[0], at(ins[0], idx)); });
  storeI(outs[0], outs[0].offset, n);
}

void kNonzero(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  kernel::validateNonzero(ins, outs);
  const Operand &x = ins[0];
  Operand &out = outs[0];
  const int64_t r = static_cast<int64_t>(x.sizes.size());
  const int64_t n = out.sizes[1];
  int64_t j = 0;
  forEachIndex(x.sizes, [&](const std::vector<int64_t> &idx) {
    if (!nonZeroAt(x, at(x, idx))) return;
    if (j >= n) fail("nonzero", "more than " + std::to_string(n) + " nonzero elements (the read-back count)");
    for (int64_t d = 0; d < r; ++d)
      storeI(out, at(out, {d, j}), idx[d]);
    ++j;
  });
  if (j != n) fail("nonzero", std::to_string(j) + " nonzero elements, the output holds " + std::to_string(n));
}

void kCompress(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkCounts("compress", ins, outs, 2, 2, 1);
  const Operand &data = ins[0], &cond = ins[1];
  Operand &out = outs[0];
  if (cond.sizes.size() != 1) fail("compress", "the condition must have rank 1");
  const int64_t axisAttr = immAttr("compress", args, 0, "axis");
  if (axisAttr < 0 || axisAttr >= static_cast<int64_t>(data.sizes.size()))
    fail("compress",
         "axis " + std::to_string(axisAttr) + " out of range for rank " + std::to_string(data.sizes.size()));
  const size_t axis = static_cast<size_t>(axisAttr);
  const int64_t extent = data.sizes[axis];
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond.sizes[0]; ++i) {
    if (!nonZeroAt(cond, cond.offset + i * cond.strides[0])) continue;
    if (i >= extent)
      fail("compress", "condition is true at " + std::to_string(i) + ", beyond the extent " + std::to_string(extent) +
                           " of axis " + std::to_string(axis));
    keep.push_back(i);
  }
  std::vector<int64_t> expect = data.sizes;
  expect[axis] = static_cast<int64_t>(keep.size());
  checkShape("compress", out, expect);
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    std::vector<int64_t> di = idx;
    di[axis] = keep[static_cast<size_t>(idx[axis])];
    copyElement(out, at(out, idx), data, at(data, di));
  });
}

// TopK order: NaN above +inf, equal values keep the lower index first (same rule as the reference).
bool ranksBefore(const Operand &x, int64_t ea, int64_t eb, int64_t a, int64_t b, bool largest) {
  if (isFloat(x.dtype)) {
    const double va = loadF(x, ea), vb = loadF(x, eb);
    const bool na = std::isnan(va), nb = std::isnan(vb);
    if (na || nb) return na && nb ? a < b : (largest ? na : nb);
    if (va != vb) return largest ? va > vb : va < vb;
    return a < b;
  }
  const int64_t va = loadI(x, ea), vb = loadI(x, eb);
  if (va != vb) return largest ? va > vb : va < vb;
  return a < b;
}

void kTopK(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkCounts("top_k", ins, outs, 1, 1, 2);
  const Operand &x = ins[0];
  Operand &values = outs[0], &indices = outs[1];
  if (x.dtype == DType::Bool) fail("top_k", "unsupported: " + x.label + " is bool");
  checkDType("top_k", values, x.dtype);
  checkDType("top_k", indices, DType::I64);
  const kernel::TopK t = kernel::validateTopKShapes(x, values, indices, args);
  const size_t axis = t.axis;
  const int64_t n = t.n, k = t.k;
  const bool largest = t.largest;
  std::vector<int64_t> lines = x.sizes;
  lines[axis] = 1;
  std::vector<int64_t> order(static_cast<size_t>(n));
  forEachIndex(lines, [&](const std::vector<int64_t> &base) {
    const int64_t xb = at(x, base);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return ranksBefore(x, xb + a * x.strides[axis], xb + b * x.strides[axis], a, b, largest);
    });
    std::vector<int64_t> oi = base;
    for (int64_t j = 0; j < k; ++j) {
      oi[axis] = j;
      copyElement(values, at(values, oi), x, xb + order[j] * x.strides[axis]);
      storeI(indices, at(indices, oi), order[j]);
    }
  });
}

void kTile(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  checkCounts("tile", ins, outs, 1, 1, 1);
  const Operand &x = ins[0];
  Operand &out = outs[0];
  checkDType("tile", out, x.dtype);
  bool ok = out.sizes.size() == x.sizes.size();
  for (size_t d = 0; ok && d < x.sizes.size(); ++d)
    ok = x.sizes[d] == 0 ? out.sizes[d] == 0 : out.sizes[d] % x.sizes[d] == 0;
  if (!ok) fail("tile", out.label + " shape " + formatDims(out.sizes) + " is not a multiple of " + formatDims(x.sizes));
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    std::vector<int64_t> si = idx;
    for (size_t d = 0; d < si.size(); ++d)
      si[d] %= x.sizes[d];
    copyElement(out, at(out, idx), x, at(x, si));
  });
}

// Source index along one axis for Pad's output index i, or -1 for the constant value.
int64_t padSource(int64_t i, int64_t begin, int64_t n, int64_t mode) {
  int64_t s = i - begin;
  if (s >= 0 && s < n) return s;
  if (mode == 0) return -1;
  if (n == 0)
    fail("pad", std::string("mode '") + (mode == 1 ? "reflect" : "edge") + "' cannot pad an axis of extent 0");
  if (mode == 2) return s < 0 ? 0 : n - 1;
  if (n == 1) return 0;
  const int64_t period = 2 * (n - 1);
  s = ((s % period) + period) % period;
  return s < n ? s : period - s;
}

void kPad(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkCounts("pad", ins, outs, 1, 2, 1);
  const Operand &x = ins[0];
  Operand &out = outs[0];
  checkDType("pad", out, x.dtype);
  const int64_t mode = immAttr("pad", args, 0, "mode");
  if (mode < 0 || mode > 2)
    fail("pad", "mode " + std::to_string(mode) + " is not 0 (constant), 1 (reflect) or 2 (edge)");
  const size_t r = x.sizes.size();
  if (out.sizes.size() != r || args.scalars.size() != r)
    fail("pad", "expects an output of rank " + std::to_string(r) + " and one begin pad per axis");
  if (ins.size() == 2) {
    checkDType("pad", ins[1], x.dtype);
    if (numElements(ins[1].sizes) != 1) fail("pad", "the constant value must hold one element");
  }
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    std::vector<int64_t> si(r);
    for (size_t d = 0; d < r; ++d) {
      si[d] = padSource(idx[d], args.scalars[d], x.sizes[d], mode);
      if (si[d] < 0) {
        if (ins.size() == 2)
          copyElement(out, at(out, idx), ins[1], ins[1].offset);
        else if (isFloat(out.dtype))
          storeF(out, at(out, idx), 0.0);
        else
          storeI(out, at(out, idx), 0);
        return;
      }
    }
    copyElement(out, at(out, idx), x, at(x, si));
  });
}

// out[e] = reduce(out[e], update) with reduction code 0 none, 1 add, 2 mul, 3 max, 4 min; floats
// in double rounded per step, integers wrapping, max/min propagate NaN.
void combine(Operand &out, int64_t e, const Operand &upd, int64_t ue, int64_t red) {
  if (red == 0) return copyElement(out, e, upd, ue);
  if (isFloat(out.dtype)) {
    const double a = loadF(out, e), b = loadF(upd, ue);
    double v;
    if (red == 1)
      v = a + b;
    else if (red == 2)
      v = a * b;
    else if (std::isnan(a) || std::isnan(b))
      v = NAN;
    else
      v = red == 3 ? std::max(a, b) : std::min(a, b);
    return storeF(out, e, v);
  }
  const int64_t a = loadI(out, e), b = loadI(upd, ue);
  int64_t v;
  if (red == 1)
    v = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else if (red == 2)
    v = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else
    v = red == 3 ? std::max(a, b) : std::min(a, b);
  storeI(out, e, v);
}

void copyAll(const std::string &k, Operand &out, const Operand &data) {
  checkDType(k, out, data.dtype);
  checkShape(k, out, data.sizes);
  forEachIndex(out.sizes,
               [&](const std::vector<int64_t> &idx) { copyElement(out, at(out, idx), data, at(data, idx)); });
}

void checkUnique(const std::string &k, std::set<int64_t> &seen, int64_t e, int64_t red) {
  if (red == 0 && !seen.insert(e).second)
    fail(k, "two updates write output element " + std::to_string(e) + " with reduction 'none' (undefined in ONNX)");
}

void kScatterND(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const std::string k = "scatter_nd";
  checkCounts(k, ins, outs, 3, 3, 1);
  const Operand &data = ins[0], &indices = ins[1], &updates = ins[2];
  Operand &out = outs[0];
  checkIndexType(k, indices);
  checkDType(k, updates, data.dtype);
  const int64_t red = kernel::validateScatterNDShapes(k, data, indices, updates, args);
  const size_t q = indices.sizes.size();
  const int64_t m = indices.sizes[q - 1];
  copyAll(k, out, data);
  std::vector<int64_t> tuples(indices.sizes.begin(), indices.sizes.end() - 1);
  std::vector<int64_t> slice(data.sizes.begin() + m, data.sizes.end());
  std::set<int64_t> seen;
  forEachIndex(tuples, [&](const std::vector<int64_t> &ti) {
    std::vector<int64_t> ii = ti, oi;
    ii.push_back(0);
    for (int64_t t = 0; t < m; ++t) {
      ii[q - 1] = t;
      oi.push_back(
          wrapIndex(k, loadI(indices, at(indices, ii)), data.sizes[static_cast<size_t>(t)], static_cast<size_t>(t)));
    }
    forEachIndex(slice, [&](const std::vector<int64_t> &si) {
      std::vector<int64_t> full = oi, ui = ti;
      full.insert(full.end(), si.begin(), si.end());
      ui.insert(ui.end(), si.begin(), si.end());
      const int64_t e = at(out, full);
      checkUnique(k, seen, e, red);
      combine(out, e, updates, at(updates, ui), red);
    });
  });
}

void kScatterElements(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const std::string k = "scatter_elements";
  checkCounts(k, ins, outs, 3, 3, 1);
  const Operand &data = ins[0], &indices = ins[1], &updates = ins[2];
  Operand &out = outs[0];
  checkIndexType(k, indices);
  checkDType(k, updates, data.dtype);
  const kernel::ScatterElements s = kernel::validateScatterElementsShapes(k, data, indices, updates, args);
  const size_t axis = s.axis;
  const int64_t red = s.reduction;
  copyAll(k, out, data);
  std::set<int64_t> seen;
  forEachIndex(indices.sizes, [&](const std::vector<int64_t> &idx) {
    std::vector<int64_t> oi = idx;
    oi[axis] = wrapIndex(k, loadI(indices, at(indices, idx)), data.sizes[axis], axis);
    const int64_t e = at(out, oi);
    checkUnique(k, seen, e, red);
    combine(out, e, updates, at(updates, idx), red);
  });
}

} // namespace

DataDependentKernelFn findDataDependentKernel(const std::string &name) {
  static const std::map<std::string, DataDependentKernelFn> table = {{"count_nonzero", kCountNonzero},
                                                                     {"nonzero", kNonzero},
                                                                     {"compress", kCompress},
                                                                     {"top_k", kTopK},
                                                                     {"tile", kTile},
                                                                     {"pad", kPad},
                                                                     {"scatter_nd", kScatterND},
                                                                     {"scatter_elements", kScatterElements}};
  auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

} // namespace dq::rt::sim
