// CPU implementations of the Program.h kernels for the sim device. Floats compute in double and
// round once to the output dtype; integers compute in int64 and wrap to the output width.
#include "SimKernels.h"

#include "dq/runtime/Error.h"
#include "dq/runtime/Float16.h"
#include "dq/runtime/HostTensor.h"
#include "dq/runtime/SimDevice.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

namespace dq::rt::sim {
namespace {

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}

[[noreturn]] void fail(const std::string &kernel, const std::string &problem) {
  throw RuntimeError("kernel '" + kernel + "': " + problem);
}

void checkReadable(const Operand &o, int64_t e) {
  const uint8_t *st = o.state + e * static_cast<int64_t>(o.elementSize);
  for (size_t k = 0; k < o.elementSize; ++k) {
    if (st[k] == SimDevice::kWritten) continue;
    throw RuntimeError(std::string(st[k] == SimDevice::kDead ? "use after free: "
                                                             : "read of never-written memory: ") +
                       o.label + " element " + std::to_string(e) +
                       (st[k] == SimDevice::kDead ? " lies in a deallocated region"
                                                  : " was never written"));
  }
}

uint8_t *writable(Operand &o, int64_t e) {
  uint8_t *st = o.state + e * static_cast<int64_t>(o.elementSize);
  for (size_t k = 0; k < o.elementSize; ++k) {
    if (st[k] == SimDevice::kDead)
      throw RuntimeError("use after free: " + o.label + " element " + std::to_string(e) +
                         " lies in a deallocated region");
    st[k] = SimDevice::kWritten;
  }
  return o.data + e * static_cast<int64_t>(o.elementSize);
}

template <typename T> T rawLoad(const Operand &o, int64_t e) {
  checkReadable(o, e);
  T v;
  std::memcpy(&v, o.data + e * static_cast<int64_t>(o.elementSize), sizeof(T));
  return v;
}

template <typename T> void rawStore(Operand &o, int64_t e, T v) {
  std::memcpy(writable(o, e), &v, sizeof(T));
}

double loadF(const Operand &o, int64_t e) {
  switch (o.dtype) {
  case DType::F32: return rawLoad<float>(o, e);
  case DType::F64: return rawLoad<double>(o, e);
  case DType::F16: return halfToFloat(rawLoad<uint16_t>(o, e));
  case DType::BF16: return bf16ToFloat(rawLoad<uint16_t>(o, e));
  default: return static_cast<double>(0);
  }
}

int64_t loadI(const Operand &o, int64_t e) {
  switch (o.dtype) {
  case DType::I8: return rawLoad<int8_t>(o, e);
  case DType::U8: return rawLoad<uint8_t>(o, e);
  case DType::I32: return rawLoad<int32_t>(o, e);
  case DType::I64: return rawLoad<int64_t>(o, e);
  case DType::Bool: return rawLoad<uint8_t>(o, e) != 0;
  default: return 0;
  }
}

void storeF(Operand &o, int64_t e, double v) {
  switch (o.dtype) {
  case DType::F32: rawStore<float>(o, e, static_cast<float>(v)); break;
  case DType::F64: rawStore<double>(o, e, v); break;
  case DType::F16: rawStore<uint16_t>(o, e, doubleToHalf(v)); break;
  case DType::BF16: rawStore<uint16_t>(o, e, doubleToBF16(v)); break;
  default: break;
  }
}

// Two's-complement wrap to the output width (numpy/ONNX integer semantics).
void storeI(Operand &o, int64_t e, int64_t v) {
  switch (o.dtype) {
  case DType::I8: rawStore<int8_t>(o, e, static_cast<int8_t>(v)); break;
  case DType::U8: rawStore<uint8_t>(o, e, static_cast<uint8_t>(v)); break;
  case DType::I32: rawStore<int32_t>(o, e, static_cast<int32_t>(v)); break;
  case DType::I64: rawStore<int64_t>(o, e, v); break;
  case DType::Bool: rawStore<uint8_t>(o, e, v != 0 ? 1 : 0); break;
  default: break;
  }
}

// ONNX Cast from a float value: to bool is x != 0; to an integer truncates toward zero. NaN and
// out-of-range values are undefined in ONNX; here they become 0 and saturate (no UB).
int64_t floatToInteger(double v, DType to) {
  if (std::isnan(v)) return 0;
  double t = std::trunc(v);
  double lo, hi;
  switch (to) {
  case DType::I8: lo = -128; hi = 127; break;
  case DType::U8: lo = 0; hi = 255; break;
  case DType::I32: lo = -2147483648.0; hi = 2147483647.0; break;
  default: lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
  }
  if (t <= lo) return to == DType::I64 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(lo);
  if (t >= hi) return to == DType::I64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi);
  return static_cast<int64_t>(t);
}

void copyElement(Operand &dst, int64_t de, const Operand &src, int64_t se) {
  checkReadable(src, se);
  std::memmove(writable(dst, de), src.data + se * static_cast<int64_t>(src.elementSize),
              src.elementSize);
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// Calls f(index) for every index of `shape` in row-major order.
template <typename F> void forEachIndex(const std::vector<int64_t> &shape, F &&f) {
  int64_t n = numElements(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Element offset of `o` at out-index `idx` under numpy broadcasting (ranks right-aligned).
int64_t at(const Operand &o, const std::vector<int64_t> &idx) {
  int64_t off = o.offset;
  size_t shift = idx.size() - o.sizes.size();
  for (size_t d = 0; d < o.sizes.size(); ++d)
    if (o.sizes[d] != 1) off += idx[d + shift] * o.strides[d];
  return off;
}

void checkBroadcast(const std::string &kernel, const Operand &in, const Operand &out) {
  bool ok = in.sizes.size() <= out.sizes.size();
  for (size_t d = 0; ok && d < in.sizes.size(); ++d) {
    int64_t o = out.sizes[d + out.sizes.size() - in.sizes.size()];
    ok = in.sizes[d] == 1 || in.sizes[d] == o;
  }
  if (!ok)
    fail(kernel, in.label + " shape " + formatDims(in.sizes) + " does not broadcast to " +
                     out.label + " shape " + formatDims(out.sizes));
}

void checkArity(const std::string &kernel, const std::vector<Operand> &ins,
                const std::vector<Operand> &outs, size_t nIns) {
  if (ins.size() != nIns || outs.size() != 1)
    fail(kernel, "expects " + std::to_string(nIns) + " inputs and 1 output, got " +
                     std::to_string(ins.size()) + " and " + std::to_string(outs.size()));
}

void checkSameDType(const std::string &kernel, const Operand &a, const Operand &b) {
  if (a.dtype != b.dtype)
    fail(kernel, a.label + " is " + dtypeName(a.dtype) + " but " + b.label + " is " +
                     dtypeName(b.dtype));
}

void checkDType(const std::string &kernel, const Operand &a, DType t) {
  if (a.dtype != t)
    fail(kernel, a.label + " is " + dtypeName(a.dtype) + ", expected " + dtypeName(t));
}

// ---- elementwise binary ops: add a line here to add one ----------------------------------------

using FloatFn = double (*)(double, double);
using IntFn = int64_t (*)(int64_t, int64_t);
struct Binary {
  const char *name;
  FloatFn f;
  IntFn i;
  bool boolResult;  ///< output is bool (comparisons) instead of the input dtype
};

int64_t wrapAdd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wrapSub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t wrapMul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
int64_t truncDiv(int64_t a, int64_t b) {
  if (b == 0) throw RuntimeError("integer division by zero");
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return a;  // wraps
  return a / b;
}

const Binary kBinary[] = {
    {"add", [](double a, double b) { return a + b; }, wrapAdd, false},
    {"sub", [](double a, double b) { return a - b; }, wrapSub, false},
    {"mul", [](double a, double b) { return a * b; }, wrapMul, false},
    {"div", [](double a, double b) { return a / b; }, truncDiv, false},
    {"equal", [](double a, double b) { return a == b ? 1.0 : 0.0; },
     [](int64_t a, int64_t b) -> int64_t { return a == b; }, true},
};

void runBinary(const Binary &op, std::vector<Operand> &ins, std::vector<Operand> &outs) {
  checkArity(op.name, ins, outs, 2);
  Operand &out = outs[0];
  checkSameDType(op.name, ins[0], ins[1]);
  if (op.boolResult) checkDType(op.name, out, DType::Bool);
  else checkSameDType(op.name, ins[0], out);
  checkBroadcast(op.name, ins[0], out);
  checkBroadcast(op.name, ins[1], out);
  const bool fl = isFloat(ins[0].dtype);
  try {
    forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
      int64_t ea = at(ins[0], idx), eb = at(ins[1], idx), eo = at(out, idx);
      if (fl) {
        double r = op.f(loadF(ins[0], ea), loadF(ins[1], eb));
        if (op.boolResult) storeI(out, eo, r != 0.0);
        else storeF(out, eo, r);
      } else {
        storeI(out, eo, op.i(loadI(ins[0], ea), loadI(ins[1], eb)));
      }
    });
  } catch (const RuntimeError &e) {
    fail(op.name, e.what());
  }
}

// ---- data movement and the rest -----------------------------------------------------------------

void kWhere(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  checkArity("where", ins, outs, 3);
  Operand &out = outs[0];
  checkDType("where", ins[0], DType::Bool);
  checkSameDType("where", ins[1], out);
  checkSameDType("where", ins[2], out);
  for (const Operand &in : ins) checkBroadcast("where", in, out);
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    bool c = loadI(ins[0], at(ins[0], idx)) != 0;
    const Operand &src = c ? ins[1] : ins[2];
    copyElement(out, at(out, idx), src, at(src, idx));
  });
}

void kCast(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  checkArity("cast", ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkBroadcast("cast", in, out);
  const bool fromFloat = isFloat(in.dtype), toFloat = isFloat(out.dtype);
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    int64_t ei = at(in, idx), eo = at(out, idx);
    if (in.dtype == out.dtype) {
      copyElement(out, eo, in, ei);
    } else if (fromFloat) {
      double v = loadF(in, ei);
      if (toFloat) storeF(out, eo, v);
      else if (out.dtype == DType::Bool) storeI(out, eo, v != 0.0);
      else storeI(out, eo, floatToInteger(v, out.dtype));
    } else {
      int64_t v = loadI(in, ei);
      if (out.dtype == DType::F32) rawStore<float>(out, eo, static_cast<float>(v));
      else if (toFloat) storeF(out, eo, static_cast<double>(v));
      else storeI(out, eo, v);
    }
  });
}

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
      fail("slice", "axis " + std::to_string(d) + " reads indices " + std::to_string(first) +
                        ".." + std::to_string(last) + " of a dim of size " +
                        std::to_string(in.sizes[d]));
  }
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    int64_t e = in.offset;
    for (size_t d = 0; d < r; ++d) e += (args.scalars[d] + idx[d] * args.scalars[r + d]) * in.strides[d];
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
    fail("transpose", "perm " + formatDims(args.attrs) + " does not map " + formatDims(in.sizes) +
                          " to " + formatDims(out.sizes));
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    int64_t e = in.offset;
    for (size_t j = 0; j < r; ++j) e += idx[j] * in.strides[static_cast<size_t>(args.attrs[j])];
    copyElement(out, at(out, idx), in, e);
  });
}

size_t normalizeAxis(const std::string &kernel, const KernelArgs &args, size_t rank) {
  if (args.attrs.empty()) fail(kernel, "missing axis attribute");
  int64_t a = args.attrs[0];
  if (a < 0) a += static_cast<int64_t>(rank);
  if (a < 0 || static_cast<size_t>(a) >= rank)
    fail(kernel, "axis " + std::to_string(args.attrs[0]) + " out of range for rank " +
                     std::to_string(rank));
  return static_cast<size_t>(a);
}

void kConcat(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  if (ins.empty() || outs.size() != 1) fail("concat", "expects at least 1 input and 1 output");
  Operand &out = outs[0];
  const size_t axis = normalizeAxis("concat", args, out.sizes.size());
  int64_t total = 0;
  for (const Operand &in : ins) {
    checkSameDType("concat", in, out);
    bool ok = in.sizes.size() == out.sizes.size();
    for (size_t d = 0; ok && d < in.sizes.size(); ++d) ok = d == axis || in.sizes[d] == out.sizes[d];
    if (!ok)
      fail("concat", in.label + " shape " + formatDims(in.sizes) + " does not fit " +
                         formatDims(out.sizes) + " along axis " + std::to_string(axis));
    total += in.sizes[axis];
  }
  if (total != out.sizes[axis])
    fail("concat", "inputs sum to " + std::to_string(total) + " along axis " +
                       std::to_string(axis) + ", output has " + std::to_string(out.sizes[axis]));
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
  if (expect != out.sizes)
    fail("gather", "output shape " + formatDims(out.sizes) + ", expected " + formatDims(expect));
  const size_t ri = indices.sizes.size();
  const int64_t n = data.sizes[axis];
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    std::vector<int64_t> ii(idx.begin() + static_cast<long>(axis),
                            idx.begin() + static_cast<long>(axis + ri));
    int64_t k = loadI(indices, at(indices, ii));
    if (k < -n || k >= n)
      fail("gather", "index " + std::to_string(k) + " out of range for axis " +
                         std::to_string(axis) + " of size " + std::to_string(n));
    if (k < 0) k += n;
    int64_t e = data.offset + k * data.strides[axis];
    for (size_t d = 0; d < axis; ++d) e += idx[d] * data.strides[d];
    for (size_t d = axis + 1; d < data.sizes.size(); ++d) e += idx[d - 1 + ri] * data.strides[d];
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
    if (fl) storeF(out, e, loadF(ins[0], ins[0].offset) + static_cast<double>(i) * loadF(ins[1], ins[1].offset));
    else storeI(out, e, wrapAdd(loadI(ins[0], ins[0].offset), wrapMul(i, loadI(ins[1], ins[1].offset))));
  }
}

void kFill(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("fill", ins, outs, 0);
  Operand &out = outs[0];
  const bool fl = isFloat(out.dtype);
  if (fl ? args.fattrs.empty() : args.attrs.empty())
    fail("fill", std::string("missing value (") + (fl ? "fimm[0]" : "imm[1]") + ")");
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    if (fl) storeF(out, at(out, idx), args.fattrs[0]);
    else storeI(out, at(out, idx), args.attrs[0]);
  });
}

using KernelFn = void (*)(std::vector<Operand> &, std::vector<Operand> &, const KernelArgs &);
const std::map<std::string, KernelFn> &specialKernels() {
  static const std::map<std::string, KernelFn> table = {
      {"where", kWhere},   {"cast", kCast},     {"expand", kExpand}, {"slice", kSlice},
      {"transpose", kTranspose}, {"concat", kConcat}, {"gather", kGather}, {"range", kRange},
      {"fill", kFill}};
  return table;
}

const Binary *findBinary(const std::string &name) {
  for (const Binary &b : kBinary)
    if (name == b.name) return &b;
  return nullptr;
}

}  // namespace

bool hasKernel(const std::string &name) {
  return findBinary(name) || specialKernels().count(name);
}

void runKernel(const std::string &name, std::vector<Operand> &ins, std::vector<Operand> &outs,
               const KernelArgs &args) {
  for (const Operand &o : outs)
    for (size_t d = 0; d < o.sizes.size(); ++d)
      if (o.sizes[d] > 1 && o.strides[d] == 0)
        fail(name, o.label + " has stride 0 on dim " + std::to_string(d) +
                       ": an output may not write an element twice");
  if (const Binary *b = findBinary(name)) return runBinary(*b, ins, outs);
  auto it = specialKernels().find(name);
  if (it == specialKernels().end()) fail(name, "unsupported: no sim implementation");
  try {
    it->second(ins, outs, args);
  } catch (const RuntimeError &e) {
    std::string msg = e.what();
    if (msg.rfind("kernel '", 0) == 0) throw;
    fail(name, msg);
  }
}

void stridedCopy(Operand &dst, const Operand &src) {
  if (dst.dtype != src.dtype || dst.sizes != src.sizes)
    throw RuntimeError("strided copy: " + src.label + " " + dtypeName(src.dtype) +
                       formatDims(src.sizes) + " does not match " + dst.label + " " +
                       dtypeName(dst.dtype) + formatDims(dst.sizes));
  for (size_t d = 0; d < dst.sizes.size(); ++d)
    if (dst.sizes[d] > 1 && dst.strides[d] == 0)
      throw RuntimeError("strided copy: " + dst.label + " has stride 0 on dim " +
                         std::to_string(d) + ": a destination may not write an element twice");
  forEachIndex(dst.sizes, [&](const std::vector<int64_t> &idx) {
    copyElement(dst, at(dst, idx), src, at(src, idx));
  });
}

}  // namespace dq::rt::sim
