// `hip` device: a launch resolves and checks its operands, then dispatches by kernel name; the
// elementwise, data-movement and index kernels' host sides are here.
#include "HipDeviceImpl.h"
#include "dq/runtime/Program.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace dq::rt::hipdev {
struct ElemInfo {
  const char *name;
  hipk::ElemOp op;
  bool binary;
  bool hasInt; ///< has an integer form (else integers go through double, truncated)
  bool boolResult;
  TypeSet types;
  TypeSet exponent;
};

namespace {

const ElemInfo kElems[] = {
    {"add", hipk::kAdd, true, true, false, kAllTypes, 0},
    {"sub", hipk::kSub, true, true, false, kAllTypes, 0},
    {"mul", hipk::kMul, true, true, false, kAllTypes, 0},
    {"div", hipk::kDiv, true, true, false, kAllTypes, 0},
    {"equal", hipk::kEqual, true, true, true, kAllTypes, 0},
    {"pow", hipk::kPow, true, true, false, kWideTypes, kNumericTypes},
    {"max", hipk::kMax, true, true, false, kNumericTypes, 0},
    {"min", hipk::kMin, true, true, false, kNumericTypes, 0},
    {"and", hipk::kAnd, true, true, false, kBoolTypes, 0},
    {"or", hipk::kOr, true, true, false, kBoolTypes, 0},
    {"less", hipk::kLess, true, true, true, kNumericTypes, 0},
    {"less_equal", hipk::kLessEqual, true, true, true, kNumericTypes, 0},
    {"greater", hipk::kGreater, true, true, true, kNumericTypes, 0},
    {"greater_equal", hipk::kGreaterEqual, true, true, true, kNumericTypes, 0},
    {"neg", hipk::kNeg, false, true, false, kSignedTypes, 0},
    {"sqrt", hipk::kSqrt, false, false, false, kFloatTypes, 0},
    {"reciprocal", hipk::kReciprocal, false, false, false, kFloatTypes, 0},
    {"sigmoid", hipk::kSigmoid, false, false, false, kFloatTypes, 0},
    {"tanh", hipk::kTanh, false, false, false, kFloatTypes, 0},
    {"erf", hipk::kErf, false, false, false, kNumericTypes, 0},
    {"exp", hipk::kExp, false, false, false, kFloatTypes, 0},
    {"cos", hipk::kCos, false, false, false, kFloatTypes, 0},
    {"sin", hipk::kSin, false, false, false, kFloatTypes, 0},
    {"not", hipk::kNot, false, true, false, kBoolTypes, 0},
    {"isnan", hipk::kIsNan, false, false, true, kFloatTypes, 0},
    {"relu", hipk::kRelu, false, true, false, kSignedTypes, 0},
    {"abs", hipk::kAbs, false, true, false, kNumericTypes, 0},
    {"log", hipk::kLog, false, false, false, kFloatTypes, 0},
    {"floor", hipk::kFloor, false, false, false, kFloatTypes, 0},
    {"ceil", hipk::kCeil, false, false, false, kFloatTypes, 0},
    {"round", hipk::kRound, false, false, false, kFloatTypes, 0},
    {"sign", hipk::kSign, false, true, false, kNumericTypes, 0},
    {"xor", hipk::kXor, true, true, false, kBoolTypes, 0},
    {"mod", hipk::kMod, true, true, false, kIntegerTypes, 0},
    {"fmod", hipk::kFmod, true, true, false, kNumericTypes, 0},
};

} // namespace

void HipDevice::launch(const std::string &kernel, const std::vector<BufferView> &ins,
                       const std::vector<BufferView> &outs, const KernelArgs &args) {
  const KernelEntry *entry = findKernel(kernel);
  if (!entry) throw RuntimeError("unsupported: kernel '" + kernel + "' on hip");
  // Reused across launches: their vectors keep their capacity, so a launch allocates nothing.
  std::vector<Operand> &inOps = inOps_, &outOps = outOps_;
  inOps.resize(ins.size());
  outOps.resize(outs.size());
  for (size_t i = 0; i < ins.size(); ++i)
    resolveOperand(ins[i], "in", static_cast<int>(i), kernel, inOps[i]);
  for (size_t i = 0; i < outs.size(); ++i)
    resolveOperand(outs[i], "out", static_cast<int>(i), kernel, outOps[i]);
  ++counters_.kernelLaunches;
  for (const Operand &o : outOps)
    for (size_t d = 0; d < o.sizes.size() && numel(o.sizes) > 0; ++d)
      if (o.sizes[d] > 1 && o.strides[d] == 0)
        fail(kernel,
             o.label() + " has stride 0 on dim " + std::to_string(d) + ": an output may not write an element twice");
  gKernel = kernel;
  {
    HipProfile::Scope timed(profile_.get(), profile_ ? profileLabel(kernel, inOps, outOps) : std::string(), true);
    if (entry->elem)
      runElem(*entry->elem, inOps, outOps);
    else
      entry->run(*this, inOps, outOps, args);
  }
  if (profile_ && profile_->full()) syncQuiet();
  for (size_t i = 0; i < outs.size(); ++i)
    if (outOps[i].space != MemSpace::Device) markDeviceWrite(outs[i]);
}

std::string HipDevice::profileLabel(const std::string &kernel, const std::vector<Operand> &ins,
                                    const std::vector<Operand> &outs) {
  if (kernel != "matmul" || ins.size() != 2 || outs.size() != 1 || outs[0].sizes.size() < 2) return kernel;
  const std::vector<int64_t> &o = outs[0].sizes;
  int64_t batch = 1;
  for (size_t d = 0; d + 2 < o.size(); ++d)
    batch *= o[d];
  if (batch > 1) return "matmul " + dtypeName(ins[0].dtype) + " batched";
  return "matmul " + dtypeName(ins[0].dtype) + " M" + std::to_string(o[o.size() - 2]) + " K" +
         std::to_string(ins[0].sizes.back()) + " N" + std::to_string(o.back());
}

void HipDevice::resolveOperand(const BufferView &v, const char *role, int index, const std::string &kernel,
                               Operand &o) const {
  makeOperand(v, role, index, o, &kernel);
  if (o.space == MemSpace::Host)
    throw RuntimeError("kernel '" + kernel + "' " + role + " " + std::to_string(index) + " touches " +
                       bufferName(v.buffer) +
                       ", pageable host memory that device code cannot access; use host-mapped "
                       "memory or a memcpy/copy2d transfer");
}

void HipDevice::makeOperand(const BufferView &v, const char *role, int index, Operand &o,
                            const std::string *kernel) const {
  o.role = role;
  o.index = index;
  o.buffer = v.buffer;
  auto found = allocations_.find(v.buffer);
  if (found == allocations_.end()) {
    std::string what = index >= 0 ? std::string(role) + " " + std::to_string(index) : std::string(role);
    if (kernel) what = "kernel '" + *kernel + "' " + what;
    live(v.buffer, what.c_str()); // throws the unknown-buffer or use-after-free message
  }
  const Allocation &a = found->second;
  o.space = a.space;
  if (dtypeSize(v.dtype) == 0) throw RuntimeError(o.label() + ": unknown dtype");
  if (v.sizes.size() != v.strides.size())
    throw RuntimeError(o.label() + ": " + std::to_string(v.sizes.size()) + " sizes but " +
                       std::to_string(v.strides.size()) + " strides");
  for (int64_t s : v.sizes)
    if (s < 0) throw RuntimeError(o.label() + ": negative size in " + formatDims(v.sizes));
  o.base = a.devPtr;
  o.dtype = v.dtype;
  o.offset = v.offset;
  o.sizes = v.sizes;
  o.strides = v.strides;
  auto [lo, hi] = v.elementRange();
  const int64_t capacity = static_cast<int64_t>(a.size / dtypeSize(v.dtype));
  if (lo <= hi && (lo < 0 || hi >= capacity))
    throw RuntimeError("out of bounds: " + o.label() + " with offset " + std::to_string(v.offset) + ", sizes " +
                       formatDims(v.sizes) + ", strides " + formatDims(v.strides) + " touches elements [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "] of an allocation holding " +
                       std::to_string(capacity) + " " + dtypeName(v.dtype) + " elements");
}

void HipDevice::checkDataError(const std::string &kernel) {
  syncQuiet();
  hipk::DevError e = *errHost_;
  if (e.code == hipk::kErrNone) return;
  std::memset(errHost_, 0, sizeof(hipk::DevError));
  switch (e.code) {
  case hipk::kErrIntDivZero:
    fail(kernel, "integer division by zero");
  case hipk::kErrIntPowNeg:
    fail(kernel, "integer 0 raised to the negative power " + std::to_string(e.a));
  case hipk::kErrIndex:
    fail(kernel, "index " + std::to_string(e.a) + " out of range for axis " + std::to_string(e.b) + " of size " +
                     std::to_string(e.c));
  case hipk::kErrRangeDeltaZero:
    fail(kernel, "delta is 0");
  case hipk::kErrRangeNaN:
    fail(kernel, "the element count is NaN");
  case hipk::kErrRangeBig:
    fail(kernel, "the element count does not fit in int64");
  case hipk::kErrIntModZero:
    fail(kernel, "integer modulo by zero");
  case hipk::kErrCountMismatch:
    fail(kernel, std::to_string(e.a) + " nonzero elements, the output holds " + std::to_string(e.b));
  case hipk::kErrBeyondExtent:
    fail(kernel, "condition is true at " + std::to_string(e.a) + ", beyond the extent " + std::to_string(e.b) +
                     " of axis " + std::to_string(e.c));
  case hipk::kErrPadEmpty:
    fail(kernel, std::string("mode '") + (e.b == 1 ? "reflect" : "edge") + "' cannot pad an axis of extent 0");
  case hipk::kErrDuplicate:
    fail(kernel,
         "two updates write output element " + std::to_string(e.a) + " with reduction 'none' (undefined in ONNX)");
  default:
    fail(kernel, "device error code " + std::to_string(e.code));
  }
}

void HipDevice::copyView(const Operand &dst, const Operand &src) {
  const hipk::Shape sh = shapeOf(dst.sizes);
  launched(hipk::copy(stream_, hipk::kCopyPlain, aligned(dst, dst.sizes.size()), aligned(src, dst.sizes.size()), {}, {},
                      sh, 0));
}

const HipDevice::KernelEntry *HipDevice::findKernel(const std::string &name) {
  using Ops = std::vector<Operand>;
  using Args = KernelArgs;
  // Built once: a launch looks its kernel up by hashing the name instead of comparing it with
  // every name in turn.
  static const std::unordered_map<std::string, KernelEntry> table = [] {
    std::unordered_map<std::string, KernelEntry> t = {
        {"where", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &) { d.kWhere(i, o); }}},
        {"cast", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &) { d.kCast(i, o); }}},
        {"expand", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &) { d.kExpand(i, o); }}},
        {"slice", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kSlice(i, o, a); }}},
        {"transpose", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kTranspose(i, o, a); }}},
        {"concat", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kConcat(i, o, a); }}},
        {"gather", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kGather(i, o, a); }}},
        {"range", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &) { d.kRange(i, o); }}},
        {"range_length", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &) { d.kRangeLength(i, o); }}},
        {"fill", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kFill(i, o, a); }}},
        {"matmul", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &) { d.kMatmul(i, o); }}},
        {"softmax", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kSoftmax(i, o, a); }}},
        {"layer_norm", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kLayerNorm(i, o, a); }}},
        {"reduce_sum",
         {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kReduce("reduce_sum", 0, i, o, a); }}},
        {"reduce_mean",
         {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kReduce("reduce_mean", 1, i, o, a); }}},
        {"reduce_max",
         {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kReduce("reduce_max", 2, i, o, a); }}},
        {"trilu", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kTrilu(i, o, a); }}},
        {"cumsum", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kCumsum(i, o, a); }}},
        {"gather_elements", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kGatherElements(i, o, a); }}},
        {"gather_nd", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kGatherND(i, o, a); }}},
        {"leaky_relu", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kLeakyRelu(i, o, a); }}},
        {"log_softmax", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kSoftmax(i, o, a, true); }}},
        {"reduce_min",
         {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kReduce("reduce_min", 3, i, o, a); }}},
        {"reduce_prod",
         {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kReduce("reduce_prod", 4, i, o, a); }}},
        {"reduce_l2",
         {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kReduce("reduce_l2", 5, i, o, a); }}},
        {"reduce_sum_square",
         {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kReduce("reduce_sum_square", 6, i, o, a); }}},
        {"reduce_log_sum_exp",
         {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kReduce("reduce_log_sum_exp", 7, i, o, a); }}},
        {"arg_max",
         {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kArgExtreme("arg_max", true, i, o, a); }}},
        {"arg_min",
         {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kArgExtreme("arg_min", false, i, o, a); }}},
        {"one_hot", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kOneHot(i, o, a); }}},
        {"count_nonzero", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &) { d.kCountNonzero(i, o); }}},
        {"nonzero", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &) { d.kNonzero(i, o); }}},
        {"compress", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kCompress(i, o, a); }}},
        {"top_k", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kTopK(i, o, a); }}},
        {"tile", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &) { d.kTile(i, o); }}},
        {"pad", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kPad(i, o, a); }}},
        {"scatter_nd", {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kScatterND(i, o, a); }}},
        {"scatter_elements",
         {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kScatterElements(i, o, a); }}},
        {"fused_elementwise",
         {nullptr, [](HipDevice &d, Ops &i, Ops &o, const Args &a) { d.kFusedElementwise(i, o, a); }}},
    };
    for (const ElemInfo &e : kElems)
      t[e.name] = KernelEntry{&e, nullptr};
    return t;
  }();
  auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}

void HipDevice::runElem(const ElemInfo &op, std::vector<Operand> &ins, std::vector<Operand> &outs) {
  const std::string k = op.name;
  checkArity(k, ins, outs, op.binary ? 2 : 1);
  Operand &out = outs[0];
  checkAdmits(k, ins[0], op.types);
  if (op.binary) {
    if (op.exponent)
      checkAdmits(k, ins[1], op.exponent);
    else
      checkSameDType(k, ins[0], ins[1]);
  }
  if (op.boolResult)
    checkDType(k, out, DType::Bool);
  else
    checkSameDType(k, ins[0], out);
  checkBroadcast(k, ins[0], out);
  if (op.binary) checkBroadcast(k, ins[1], out);
  const size_t r = out.sizes.size();
  const bool fl = op.binary ? (isFloat(ins[0].dtype) || isFloat(ins[1].dtype)) : (isFloat(ins[0].dtype) || !op.hasInt);
  const hipk::Opd a = aligned(ins[0], r), b = op.binary ? aligned(ins[1], r) : hipk::Opd{};
  launched(
      hipk::elementwise(stream_, op.op, op.binary ? 2 : 1, a, b, aligned(out, r), shapeOf(out.sizes), fl, errDev_));
  if (!fl && (op.op == hipk::kDiv || op.op == hipk::kPow || op.op == hipk::kMod || op.op == hipk::kFmod))
    checkDataError(k);
}

void HipDevice::kFusedElementwise(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  static const std::string k = "fused_elementwise"; // built once: a launch allocates nothing
  if (outs.size() != 1 || ins.empty())
    fail(k, "expects 1 to " + std::to_string(kFusedMaxInputs) + " inputs and 1 output, got " +
                std::to_string(ins.size()) + " and " + std::to_string(outs.size()));
  const std::string problem = checkFusedProgram(static_cast<int64_t>(ins.size()), args.attrs);
  if (!problem.empty()) fail(k, problem);
  Operand &out = outs[0];
  checkAdmits(k, out, kFloatTypes);
  for (const Operand &in : ins) {
    checkSameDType(k, in, out);
    checkBroadcast(k, in, out);
  }
  const size_t r = out.sizes.size();
  hipk::FusedProgram p;
  p.nIn = static_cast<int>(ins.size());
  p.nSteps = static_cast<int>(args.attrs.size() / kFusedStepImms);
  p.dtype = static_cast<int>(out.dtype);
  for (int i = 0; i < p.nIn; ++i)
    p.ins[i] = aligned(ins[static_cast<size_t>(i)], r);
  // Op code -> the elementwise kernel of that name, resolved once rather than by name per step.
  static const std::vector<const ElemInfo *> byCode = [] {
    std::vector<const ElemInfo *> v;
    for (int64_t code = 0; fusedOpArity(code) != 0; ++code) {
      const KernelEntry *e = findKernel(fusedOpName(code));
      v.push_back(e ? e->elem : nullptr);
    }
    return v;
  }();
  for (int j = 0; j < p.nSteps; ++j) {
    const int64_t *step = &args.attrs[static_cast<size_t>(kFusedStepImms * j)];
    const ElemInfo *e = step[0] >= 0 && static_cast<size_t>(step[0]) < byCode.size() ? byCode[step[0]] : nullptr;
    if (!e) fail(k, "unsupported: step " + std::to_string(j) + " op on hip");
    p.op[j] = e->op;
    p.a[j] = static_cast<signed char>(step[1]);
    p.b[j] = static_cast<signed char>(step[2]);
  }
  launched(hipk::fusedElementwise(stream_, p, aligned(out, r), shapeOf(out.sizes)));
}

void HipDevice::kWhere(std::vector<Operand> &ins, std::vector<Operand> &outs) {
  checkArity("where", ins, outs, 3);
  Operand &out = outs[0];
  checkDType("where", ins[0], DType::Bool);
  checkSameDType("where", ins[1], out);
  checkSameDType("where", ins[2], out);
  for (const Operand &in : ins)
    checkBroadcast("where", in, out);
  const size_t r = out.sizes.size();
  launched(hipk::copy(stream_, hipk::kCopyWhere, aligned(out, r), aligned(ins[1], r), aligned(ins[2], r),
                      aligned(ins[0], r), shapeOf(out.sizes), 0));
}

void HipDevice::kCast(std::vector<Operand> &ins, std::vector<Operand> &outs) {
  checkArity("cast", ins, outs, 1);
  checkBroadcast("cast", ins[0], outs[0]);
  const size_t r = outs[0].sizes.size();
  launched(hipk::cast(stream_, aligned(outs[0], r), aligned(ins[0], r), shapeOf(outs[0].sizes)));
}

void HipDevice::kExpand(std::vector<Operand> &ins, std::vector<Operand> &outs) {
  checkArity("expand", ins, outs, 1);
  checkSameDType("expand", ins[0], outs[0]);
  checkBroadcast("expand", ins[0], outs[0]);
  copyView(outs[0], ins[0]);
}

void HipDevice::kSlice(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
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
  Operand v = in;
  v.sizes = out.sizes;
  for (size_t d = 0; d < r; ++d) {
    v.offset += args.scalars[d] * in.strides[d];
    v.strides[d] = args.scalars[r + d] * in.strides[d];
  }
  copyView(out, v);
}

void HipDevice::kTranspose(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
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
  Operand v = in;
  v.sizes = out.sizes;
  for (size_t j = 0; j < r; ++j)
    v.strides[j] = in.strides[static_cast<size_t>(args.attrs[j])];
  copyView(out, v);
}

void HipDevice::kConcat(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
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
      fail("concat", in.label() + " shape " + formatDims(in.sizes) + " does not fit " + formatDims(out.sizes) +
                         " along axis " + std::to_string(axis));
    total += in.sizes[axis];
  }
  if (total != out.sizes[axis])
    fail("concat", "inputs sum to " + std::to_string(total) + " along axis " + std::to_string(axis) + ", output has " +
                       std::to_string(out.sizes[axis]));
  int64_t base = 0;
  for (const Operand &in : ins) {
    Operand part = out;
    part.sizes = in.sizes;
    part.offset += base * out.strides[axis];
    if (numel(in.sizes) > 0) copyView(part, in);
    base += in.sizes[axis];
  }
}

void HipDevice::kGather(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
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
  launched(hipk::gather(stream_, aligned(out, out.sizes.size()), shapeOf(out.sizes), own(data),
                        static_cast<int>(data.sizes.size()), data.sizes.data(), own(indices),
                        static_cast<int>(indices.sizes.size()), static_cast<int>(axis), errDev_));
  checkDataError("gather");
}

void HipDevice::kRange(std::vector<Operand> &ins, std::vector<Operand> &outs) {
  checkArity("range", ins, outs, 2);
  Operand &out = outs[0];
  checkSameDType("range", ins[0], out);
  checkSameDType("range", ins[1], out);
  if (numel(ins[0].sizes) != 1 || numel(ins[1].sizes) != 1 || out.sizes.size() != 1)
    fail("range", "expects one-element start and delta and a 1-D output");
  launched(hipk::range(stream_, own(out), shapeOf(out.sizes), own(ins[0]), own(ins[1])));
}

void HipDevice::kRangeLength(std::vector<Operand> &ins, std::vector<Operand> &outs) {
  checkArity("range_length", ins, outs, 3);
  Operand &out = outs[0];
  checkAdmits("range_length", ins[0], kNumericTypes);
  checkSameDType("range_length", ins[0], ins[1]);
  checkSameDType("range_length", ins[0], ins[2]);
  if (out.dtype != DType::I64 || numel(out.sizes) != 1) fail("range_length", "expects a one-element i64 output");
  for (const Operand &x : ins)
    if (numel(x.sizes) != 1) fail("range_length", "expects one-element start, limit and delta");
  launched(hipk::rangeLength(stream_, own(out), own(ins[0]), own(ins[1]), own(ins[2]), errDev_));
  checkDataError("range_length");
}

void HipDevice::kFill(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("fill", ins, outs, 0);
  Operand &out = outs[0];
  const bool fl = isFloat(out.dtype);
  if (fl ? args.fattrs.empty() : args.attrs.empty())
    fail("fill", std::string("missing value (") + (fl ? "fimm[0]" : "imm[1]") + ")");
  launched(hipk::fill(stream_, aligned(out, out.sizes.size()), shapeOf(out.sizes), fl ? args.fattrs[0] : 0.0,
                      fl ? 0 : args.attrs[0]));
}

void HipDevice::kLeakyRelu(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("leaky_relu", ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkAdmits("leaky_relu", in, kFloatTypes);
  checkSameDType("leaky_relu", in, out);
  checkShape("leaky_relu", out, in.sizes);
  if (args.fattrs.size() != 1) fail("leaky_relu", "expects alpha as fimm[0]");
  const size_t r = out.sizes.size();
  launched(hipk::leakyRelu(stream_, aligned(out, r), aligned(in, r), shapeOf(out.sizes), args.fattrs[0]));
}

void HipDevice::kOneHot(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("one_hot", ins, outs, 2);
  const Operand &indices = ins[0], &values = ins[1];
  Operand &out = outs[0];
  checkAdmits("one_hot", indices, kNumericTypes);
  checkSameDType("one_hot", values, out);
  if (values.sizes.size() != 1 || values.sizes[0] != 2)
    fail("one_hot", values.label() + " shape " + formatDims(values.sizes) + ", expected [2] (off, on)");
  const size_t r = out.sizes.size();
  const size_t axis = axisAttr("one_hot", args, 0, r, false);
  std::vector<int64_t> expect = indices.sizes;
  expect.insert(expect.begin() + static_cast<long>(axis), out.sizes[axis]);
  checkShape("one_hot", out, expect);
  // Indices aligned to out: their dims skip the depth axis, which gets stride 0.
  checkRank(r);
  hipk::Opd idx = own(indices);
  size_t k = 0;
  for (size_t d = 0; d < r; ++d) {
    if (d == axis) {
      idx.strides[d] = 0;
    } else {
      idx.strides[d] = indices.sizes[k] == 1 ? 0 : indices.strides[k];
      ++k;
    }
  }
  launched(hipk::oneHot(stream_, aligned(out, r), shapeOf(out.sizes), idx, own(values), values.offset,
                        values.offset + values.strides[0], static_cast<int>(axis)));
}

void HipDevice::kTrilu(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  checkArity("trilu", ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkSameDType("trilu", in, out);
  checkShape("trilu", out, in.sizes);
  const size_t r = in.sizes.size();
  if (r < 2) fail("trilu", "expects rank >= 2, got " + formatDims(in.sizes));
  const bool upper = flagAttr("trilu", args, 0, "upper");
  if (args.scalars.size() != 1) fail("trilu", "expects one scalar operand (k)");
  launched(hipk::copy(stream_, upper ? hipk::kCopyTriluUpper : hipk::kCopyTriluLower, aligned(out, r), aligned(in, r),
                      {}, {}, shapeOf(out.sizes), args.scalars[0]));
}

void HipDevice::kGatherElements(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
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
  launched(hipk::gatherElements(stream_, aligned(out, r), shapeOf(out.sizes), own(data), data.sizes.data(),
                                aligned(indices, r), static_cast<int>(axis), errDev_));
  checkDataError("gather_elements");
}

void HipDevice::kGatherND(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
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
  launched(hipk::gatherND(stream_, aligned(out, out.sizes.size()), shapeOf(out.sizes), own(data), static_cast<int>(r),
                          data.sizes.data(), own(indices), static_cast<int>(q), static_cast<int>(b),
                          static_cast<int>(m), errDev_));
  checkDataError("gather_nd");
}

} // namespace dq::rt::hipdev
