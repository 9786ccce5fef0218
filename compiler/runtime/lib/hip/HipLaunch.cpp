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
  kernel::checkOutputsWriteOnce(kernel, outOps);
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
  kernel::validateElementwise(k, ins, outs, op.binary, op.types, op.exponent, op.boolResult);
  Operand &out = outs[0];
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
  kernel::validateFusedElementwise(k, ins, outs, args);
  Operand &out = outs[0];
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
  kernel::validateWhere(ins, outs);
  Operand &out = outs[0];
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
  kernel::validateExpand(ins, outs);
  copyView(outs[0], ins[0]);
}

void HipDevice::kSlice(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  if (kernel::validateSlice(ins, outs, args)) return;
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const size_t r = out.sizes.size();
  Operand v = in;
  v.sizes = out.sizes;
  for (size_t d = 0; d < r; ++d) {
    v.offset += args.scalars[d] * in.strides[d];
    v.strides[d] = args.scalars[r + d] * in.strides[d];
  }
  copyView(out, v);
}

void HipDevice::kTranspose(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  kernel::validateTranspose(ins, outs, args);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const size_t r = in.sizes.size();
  Operand v = in;
  v.sizes = out.sizes;
  for (size_t j = 0; j < r; ++j)
    v.strides[j] = in.strides[static_cast<size_t>(args.attrs[j])];
  copyView(out, v);
}

void HipDevice::kConcat(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const size_t axis = kernel::validateConcat(ins, outs, args);
  Operand &out = outs[0];
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
  const size_t axis = kernel::validateGather(ins, outs, args);
  const Operand &data = ins[0], &indices = ins[1];
  Operand &out = outs[0];
  launched(hipk::gather(stream_, aligned(out, out.sizes.size()), shapeOf(out.sizes), own(data),
                        static_cast<int>(data.sizes.size()), data.sizes.data(), own(indices),
                        static_cast<int>(indices.sizes.size()), static_cast<int>(axis), errDev_));
  checkDataError("gather");
}

void HipDevice::kRange(std::vector<Operand> &ins, std::vector<Operand> &outs) {
  kernel::validateRange(ins, outs);
  Operand &out = outs[0];
  launched(hipk::range(stream_, own(out), shapeOf(out.sizes), own(ins[0]), own(ins[1])));
}

void HipDevice::kRangeLength(std::vector<Operand> &ins, std::vector<Operand> &outs) {
  kernel::validateRangeLength(ins, outs);
  Operand &out = outs[0];
  launched(hipk::rangeLength(stream_, own(out), own(ins[0]), own(ins[1]), own(ins[2]), errDev_));
  checkDataError("range_length");
}

void HipDevice::kFill(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const bool fl = kernel::validateFill(ins, outs, args);
  Operand &out = outs[0];
  launched(hipk::fill(stream_, aligned(out, out.sizes.size()), shapeOf(out.sizes), fl ? args.fattrs[0] : 0.0,
                      fl ? 0 : args.attrs[0]));
}

void HipDevice::kLeakyRelu(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const double alpha = kernel::validateLeakyRelu(ins, outs, args);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const size_t r = out.sizes.size();
  launched(hipk::leakyRelu(stream_, aligned(out, r), aligned(in, r), shapeOf(out.sizes), alpha));
}

void HipDevice::kOneHot(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const size_t axis = kernel::validateOneHot(ins, outs, args);
  const Operand &indices = ins[0], &values = ins[1];
  Operand &out = outs[0];
  const size_t r = out.sizes.size();
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
  const bool upper = kernel::validateTrilu(ins, outs, args);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const size_t r = in.sizes.size();
  launched(hipk::copy(stream_, upper ? hipk::kCopyTriluUpper : hipk::kCopyTriluLower, aligned(out, r), aligned(in, r),
                      {}, {}, shapeOf(out.sizes), args.scalars[0]));
}

void HipDevice::kGatherElements(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const size_t axis = kernel::validateGatherElements(ins, outs, args);
  const Operand &data = ins[0], &indices = ins[1];
  Operand &out = outs[0];
  const size_t r = data.sizes.size();
  launched(hipk::gatherElements(stream_, aligned(out, r), shapeOf(out.sizes), own(data), data.sizes.data(),
                                aligned(indices, r), static_cast<int>(axis), errDev_));
  checkDataError("gather_elements");
}

void HipDevice::kGatherND(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const kernel::GatherND g = kernel::validateGatherND(ins, outs, args);
  const Operand &data = ins[0], &indices = ins[1];
  Operand &out = outs[0];
  const size_t r = data.sizes.size(), q = indices.sizes.size(), b = g.batchDims;
  const int64_t m = g.m;
  launched(hipk::gatherND(stream_, aligned(out, out.sizes.size()), shapeOf(out.sizes), own(data), static_cast<int>(r),
                          data.sizes.data(), own(indices), static_cast<int>(q), static_cast<int>(b),
                          static_cast<int>(m), errDev_));
  checkDataError("gather_nd");
}

} // namespace dq::rt::hipdev
