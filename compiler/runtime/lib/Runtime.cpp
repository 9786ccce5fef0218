// The program VM: straight-line execution of a Program's instructions on a Device.
#include "dq/runtime/Runtime.h"

#include "dq/runtime/Error.h"
#include "dq/runtime/Float16.h"
#include "dq/runtime/ProgramCheck.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace dq::rt {

void validateInputs(const Program &program, const std::vector<HostTensor> &inputs) {
  if (inputs.size() != program.inputs.size())
    throw RuntimeError("wrong input count: got " + std::to_string(inputs.size()) + ", the program takes " +
                       std::to_string(program.inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec &spec = program.inputs[i];
    const HostTensor &t = inputs[i];
    const std::string name = "input " + std::to_string(i) + " '" + spec.name + "'";
    if (t.dtype != spec.dtype)
      throw RuntimeError(name + ": dtype " + dtypeName(t.dtype) + ", expected " + dtypeName(spec.dtype));
    if (t.dims.size() != spec.dims.size())
      throw RuntimeError(name + ": rank " + std::to_string(t.dims.size()) + " " + formatDims(t.dims) +
                         ", expected rank " + std::to_string(spec.dims.size()) + " " + formatDims(spec.dims));
    for (size_t d = 0; d < t.dims.size(); ++d)
      if (spec.dims[d] >= 0 && t.dims[d] != spec.dims[d])
        throw RuntimeError(name + ": dim " + std::to_string(d) + " is " + std::to_string(t.dims[d]) + ", expected " +
                           std::to_string(spec.dims[d]) + " (shape " + formatDims(t.dims) + " vs " +
                           formatDims(spec.dims) + ")");
    int64_t n = checkedNumElements(t.dims, name);
    if (t.bytes.size() != static_cast<uint64_t>(n) * dtypeSize(t.dtype))
      throw RuntimeError(name + ": holds " + std::to_string(t.bytes.size()) + " bytes, " + t.describe() + " needs " +
                         std::to_string(n * static_cast<int64_t>(dtypeSize(t.dtype))));
  }
}

namespace {

// What a buffer register refers to; decides what Dealloc may do and how bounds are limited.
enum class Origin { Alloc, Scratch, Input, Output, Constant, Pool, Region };

const char *originName(Origin o) {
  switch (o) {
  case Origin::Alloc:
    return "allocation";
  case Origin::Scratch:
    return "host scratch";
  case Origin::Input:
    return "program input";
  case Origin::Output:
    return "program output";
  case Origin::Constant:
    return "constant";
  case Origin::Pool:
    return "pool";
  case Origin::Region:
    return "pool region";
  }
  return "buffer";
}

struct Reg {
  bool set = false;
  BufferView view;
  Origin origin = Origin::Alloc;
  uint64_t limitBegin = 0, limitEnd = 0; // bytes of the allocation this view may touch
  int64_t region = -1;
};

struct Region {
  uint64_t begin = 0, end = 0;
  bool live = true;
  size_t createdBy = 0;
};

struct OutputSlot {
  bool allocated = false;
  bool byProgram = false; // allocated by an AllocOutput instruction (not at Return)
  BufferView view;        // contiguous view of the whole output buffer
  bool runtimeOwned = true;
};

int64_t checkedMul(int64_t a, int64_t b, const char *what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw RuntimeError(std::string(what) + " overflows int64");
  return r;
}

class Vm {
public:
  Vm(const Program &p, Device &d, const RunOptions &o) : p_(p), dev_(d), opt_(o) {}
  ~Vm() { releaseAll(); }

  RunResult run(const std::vector<HostTensor> &inputs);
  RunResult runOnDevice(const std::vector<BufferView> &inputs);

private:
  RunResult execute(std::chrono::steady_clock::time_point t0);
  // ---- registers ----
  int64_t sreg(int32_t r) const {
    if (!sset_[static_cast<size_t>(r)])
      throw RuntimeError("scalar register s" + std::to_string(r) + " is read before it is written");
    return s_[static_cast<size_t>(r)];
  }
  void setS(int32_t r, int64_t v) {
    s_[static_cast<size_t>(r)] = v;
    sset_[static_cast<size_t>(r)] = true;
  }
  const Reg &breg(int32_t r) const {
    const Reg &reg = b_[static_cast<size_t>(r)];
    if (!reg.set) throw RuntimeError("buffer register b" + std::to_string(r) + " is read before it is written");
    return reg;
  }
  std::vector<int64_t> scalars(const std::vector<int32_t> &regs, size_t from) const {
    std::vector<int64_t> v;
    for (size_t i = from; i < regs.size(); ++i)
      v.push_back(sreg(regs[i]));
    return v;
  }

  // ---- memory ----
  BufferHandle allocOwned(MemSpace space, uint64_t bytes, AllocPurpose purpose) {
    BufferHandle h = dev_.allocate(space, bytes, purpose);
    owned_.insert(h);
    return h;
  }
  void freeOwned(BufferHandle h) {
    owned_.erase(h);
    dev_.free(h);
  }
  void releaseAll() {
    for (BufferHandle h : owned_) {
      try {
        dev_.free(h);
      } catch (const std::exception &) {
        // Already reported or freed by the program; cleanup must not mask the first error.
      }
    }
    owned_.clear();
  }
  static uint64_t byteSize(DType t, const std::vector<int64_t> &dims, const std::string &what) {
    int64_t n = checkedNumElements(dims, what);
    return static_cast<uint64_t>(checkedMul(n, static_cast<int64_t>(dtypeSize(t)), what.c_str()));
  }
  Reg wholeBuffer(BufferHandle h, DType t, const std::vector<int64_t> &dims, Origin origin, uint64_t bytes) const {
    Reg r;
    r.set = true;
    r.view = contiguousView(h, t, dims);
    r.origin = origin;
    r.limitBegin = 0;
    r.limitEnd = bytes;
    return r;
  }
  // A view may only touch bytes [limitBegin, limitEnd) of its allocation.
  static void checkInLimits(const Reg &r, const std::string &what) {
    auto [lo, hi] = r.view.elementRange();
    if (lo > hi) return;
    const int64_t es = static_cast<int64_t>(dtypeSize(r.view.dtype));
    if (lo < 0 || static_cast<uint64_t>(lo * es) < r.limitBegin || static_cast<uint64_t>((hi + 1) * es) > r.limitEnd)
      throw RuntimeError("out of bounds: " + what + " with offset " + std::to_string(r.view.offset) + ", sizes " +
                         formatDims(r.view.sizes) + ", strides " + formatDims(r.view.strides) + " touches bytes [" +
                         std::to_string(lo * es) + ", " + std::to_string((hi + 1) * es) + ") outside its " +
                         originName(r.origin) + " [" + std::to_string(r.limitBegin) + ", " +
                         std::to_string(r.limitEnd) + ")");
  }
  uint64_t elementByteOffset(const BufferView &v, const std::vector<int64_t> &idx) const {
    if (idx.size() != v.sizes.size())
      throw RuntimeError(std::to_string(idx.size()) + " indices for a rank-" + std::to_string(v.sizes.size()) +
                         " view");
    int64_t e = v.offset;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (idx[d] < 0 || idx[d] >= v.sizes[d])
        throw RuntimeError("index " + formatDims(idx) + " out of range for view " + formatDims(v.sizes));
      e += idx[d] * v.strides[d];
    }
    return static_cast<uint64_t>(e) * dtypeSize(v.dtype);
  }

  // ---- instructions ----
  void exec(size_t index, const Instr &in);
  void scalarBinary(const Instr &in);
  void allocOutput(const Instr &in);
  BufferView obtainOutput(size_t index, DType dtype, const std::vector<int64_t> &dims);
  void copy(const Instr &in);
  void dealloc(const Instr &in);
  void finish(const Instr &in);

  const Program &p_;
  Device &dev_;
  const RunOptions &opt_;
  std::vector<int64_t> s_;
  std::vector<bool> sset_;
  std::vector<Reg> b_;
  std::set<BufferHandle> owned_;
  std::vector<BufferView> inputViews_;
  std::vector<uint64_t> inputBytes_;
  std::map<int64_t, Reg> constants_;
  std::vector<BufferView> kernelIns_, kernelOuts_; ///< a Kernel instruction's operands, reused
  KernelArgs kernelArgs_;
  std::optional<Reg> pool_;
  std::vector<Region> regions_;
  std::vector<OutputSlot> outputs_;
  std::vector<BufferView> returned_;
  size_t current_ = 0;
  bool returned = false;
  uint64_t outputCopies_ = 0;
};

// Element bytes -> int64 as ReadbackScalar/LoadScalar define it (bool 0/1, floats truncated).
int64_t toIndex(const uint8_t *bytes, DType t) {
  double d = 0;
  switch (t) {
  case DType::I8:
    return static_cast<int8_t>(bytes[0]);
  case DType::U8:
    return bytes[0];
  case DType::Bool:
    return bytes[0] != 0;
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, bytes, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, bytes, 8);
    return v;
  }
  case DType::F32: {
    float f;
    std::memcpy(&f, bytes, 4);
    d = f;
    break;
  }
  case DType::F64:
    std::memcpy(&d, bytes, 8);
    break;
  case DType::F16: {
    uint16_t h;
    std::memcpy(&h, bytes, 2);
    d = halfToFloat(h);
    break;
  }
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, bytes, 2);
    d = bf16ToFloat(h);
    break;
  }
  }
  if (!std::isfinite(d) || std::fabs(d) >= 9.2e18)
    throw RuntimeError("cannot convert the value " + std::to_string(d) + " to an int64 scalar");
  return static_cast<int64_t>(std::trunc(d));
}

// int64 -> element bytes for StoreScalar (integers wrap, bool is v != 0, floats round).
std::vector<uint8_t> fromIndex(int64_t v, DType t) {
  std::vector<uint8_t> out(dtypeSize(t));
  switch (t) {
  case DType::I8:
  case DType::U8:
    out[0] = static_cast<uint8_t>(v);
    break;
  case DType::Bool:
    out[0] = v != 0;
    break;
  case DType::I32: {
    int32_t x = static_cast<int32_t>(v);
    std::memcpy(out.data(), &x, 4);
    break;
  }
  case DType::I64:
    std::memcpy(out.data(), &v, 8);
    break;
  case DType::F32: {
    float x = static_cast<float>(v);
    std::memcpy(out.data(), &x, 4);
    break;
  }
  case DType::F64: {
    double x = static_cast<double>(v);
    std::memcpy(out.data(), &x, 8);
    break;
  }
  case DType::F16: {
    uint16_t x = doubleToHalf(static_cast<double>(v));
    std::memcpy(out.data(), &x, 2);
    break;
  }
  case DType::BF16: {
    uint16_t x = doubleToBF16(static_cast<double>(v));
    std::memcpy(out.data(), &x, 2);
    break;
  }
  }
  return out;
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t ceilDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

void Vm::scalarBinary(const Instr &in) {
  const int64_t a = sreg(in.s[1]), b = sreg(in.s[2]);
  const std::string &n = in.name;
  int64_t r = 0;
  auto overflow = [&]() -> int64_t {
    throw RuntimeError("scalar " + n + "(" + std::to_string(a) + ", " + std::to_string(b) + ") overflows int64");
  };
  if (n == "divsi" || n == "floordiv" || n == "ceildiv" || n == "remsi") {
    if (b == 0) throw RuntimeError("scalar " + n + "(" + std::to_string(a) + ", 0): division by zero");
    if (a == std::numeric_limits<int64_t>::min() && b == -1) {
      if (n != "remsi") overflow();
      r = 0;
    } else if (n == "divsi")
      r = a / b;
    else if (n == "floordiv")
      r = floorDiv(a, b);
    else if (n == "ceildiv")
      r = ceilDiv(a, b);
    else
      r = a % b;
  } else if (n == "add") {
    if (__builtin_add_overflow(a, b, &r)) overflow();
  } else if (n == "sub") {
    if (__builtin_sub_overflow(a, b, &r)) overflow();
  } else if (n == "mul") {
    if (__builtin_mul_overflow(a, b, &r)) overflow();
  } else if (n == "min")
    r = std::min(a, b);
  else if (n == "max")
    r = std::max(a, b);
  else if (n == "eq")
    r = a == b;
  else if (n == "ne")
    r = a != b;
  else if (n == "lt")
    r = a < b;
  else if (n == "le")
    r = a <= b;
  else if (n == "gt")
    r = a > b;
  else if (n == "ge")
    r = a >= b;
  else if (n == "and")
    r = a & b;
  else if (n == "or")
    r = a | b;
  else
    throw RuntimeError("unknown scalar operation '" + n + "'");
  setS(in.s[0], r);
}

BufferView Vm::obtainOutput(size_t index, DType dtype, const std::vector<int64_t> &dims) {
  const TensorSpec &spec = p_.outputs[index];
  const std::string name = "output " + std::to_string(index) + " '" + spec.name + "'";
  if (dtype != spec.dtype)
    throw RuntimeError(name + ": dtype " + dtypeName(dtype) + " but the program declares " + dtypeName(spec.dtype));
  bool match = dims.size() == spec.dims.size();
  for (size_t d = 0; match && d < dims.size(); ++d)
    match = spec.dims[d] < 0 || spec.dims[d] == dims[d];
  if (!match)
    throw RuntimeError(name + ": shape " + formatDims(dims) + " does not match the declared " + formatDims(spec.dims));
  OutputRequest req;
  req.index = index;
  req.spec = &spec;
  req.dtype = dtype;
  req.dims = dims;
  req.bytes = byteSize(dtype, dims, name);
  OutputSlot &slot = outputs_[index];
  BufferHandle h;
  if (opt_.outputAllocator) {
    h = opt_.outputAllocator(dev_, req);
    slot.runtimeOwned = false;
    if (h == 0) throw RuntimeError(name + ": the output allocator returned no buffer");
    if (dev_.bufferSpace(h) == MemSpace::Host)
      throw RuntimeError(name + ": the output allocator returned pageable host memory; kernels "
                                "need device or host-mapped memory");
    if (dev_.bufferBytes(h) < req.bytes)
      throw RuntimeError(name + ": the output allocator returned " + std::to_string(dev_.bufferBytes(h)) + " bytes, " +
                         std::to_string(req.bytes) + " needed for " + dtypeName(dtype) + formatDims(dims));
  } else {
    h = allocOwned(MemSpace::Device, req.bytes, AllocPurpose::Buffer);
    slot.runtimeOwned = true;
  }
  slot.allocated = true;
  slot.view = contiguousView(h, dtype, dims);
  return slot.view;
}

void Vm::allocOutput(const Instr &in) {
  const size_t index = static_cast<size_t>(in.imm[0]);
  const std::vector<int64_t> dims = scalars(in.s, 0);
  const std::string name = "output " + std::to_string(index) + " '" + p_.outputs[index].name + "'";
  if (in.imm.size() > 1) {
    std::vector<int64_t> demanded(in.imm.begin() + 1, in.imm.end());
    for (size_t d = 0; d < dims.size(); ++d)
      if (demanded[d] >= 0 && dims[d] != demanded[d])
        throw RuntimeError("ABI cast check failed: " + name + " would be allocated as " + formatDims(dims) +
                           " but its external type demands " + formatDims(demanded));
  }
  if (outputs_[index].allocated) throw RuntimeError(name + " is allocated twice");
  BufferView v = obtainOutput(index, in.dtype, dims);
  outputs_[index].byProgram = true;
  Reg r = wholeBuffer(v.buffer, v.dtype, v.sizes, Origin::Output, byteSize(v.dtype, v.sizes, name));
  b_[static_cast<size_t>(in.b[0])] = r;
}

void Vm::dealloc(const Instr &in) {
  const Reg r = breg(in.b[0]);
  if (r.origin == Origin::Region) {
    Region &reg = regions_[static_cast<size_t>(r.region)];
    if (!reg.live)
      throw RuntimeError("pool region [" + std::to_string(reg.begin) + ", " + std::to_string(reg.end) +
                         ") is deallocated twice");
    reg.live = false;
    dev_.poison(r.view.buffer, reg.begin, reg.end - reg.begin);
    return;
  }
  if (r.origin != Origin::Alloc && r.origin != Origin::Scratch)
    throw RuntimeError(std::string("unsupported: Dealloc of a ") + originName(r.origin) +
                       ", whose lifetime the runtime manages");
  if (!owned_.count(r.view.buffer)) {
    dev_.free(r.view.buffer); // reports the double free / use after free with the buffer name
    throw RuntimeError("Dealloc of buffer #" + std::to_string(r.view.buffer) + " twice");
  }
  freeOwned(r.view.buffer);
}

// CopyKind::Copy2D as dq-lower-copies chooses it (LowerCopies.cpp): both sides split at the
// same dim k into one contiguous row (dims [k, r)) and one row index with one pitch per side
// (dims [0, k)), dims of size 1 skipped, since their stride never moves an address (a unit dim
// whose stride comes from the inner layout, or a trailing one, must not break the rows).
struct PitchedCopy {
  int64_t rows = 0, width = 0, dstPitch = 1, srcPitch = 1; // elements
};

// Dims [k, r) of `v` address one contiguous run.
static bool contiguousFrom(const BufferView &v, size_t k) {
  int64_t expect = 1;
  for (size_t i = v.sizes.size(); i-- > k;) {
    if (v.sizes[i] == 1) continue;
    if (v.strides[i] != expect) return false;
    expect *= v.sizes[i];
  }
  return true;
}

// The pitch of dims [0, k) of `v` collapsed into one row index (0 when they are all size 1), or
// nothing when they do not collapse.
static std::optional<int64_t> rowPitch(const BufferView &v, size_t k) {
  int64_t pitch = 0, expect = 0;
  for (size_t d = k; d-- > 0;) {
    if (v.sizes[d] == 1) continue;
    if (pitch == 0) {
      pitch = v.strides[d];
      expect = pitch * v.sizes[d];
    } else {
      if (v.strides[d] != expect) return std::nullopt;
      expect *= v.sizes[d];
    }
  }
  return pitch;
}

// The widest split (smallest k) that gives both sides rows at a constant positive pitch no
// shorter than the row, or nothing. An empty copy moves nothing and always qualifies.
static std::optional<PitchedCopy> pitchedCopy(const BufferView &dst, const BufferView &src) {
  const size_t r = dst.sizes.size();
  if (dst.numElements() == 0) return PitchedCopy{};
  for (size_t k = 0; k <= r; ++k) {
    if (!contiguousFrom(dst, k) || !contiguousFrom(src, k)) continue;
    std::optional<int64_t> dp = rowPitch(dst, k), sp = rowPitch(src, k);
    if (!dp || !sp) continue;
    int64_t width = 1, rows = 1;
    for (size_t i = 0; i < r; ++i)
      (i < k ? rows : width) *= dst.sizes[i];
    PitchedCopy c{rows, width, rows == 1 ? width : *dp, rows == 1 ? width : *sp};
    if (c.dstPitch >= width && c.srcPitch >= width && c.dstPitch > 0 && c.srcPitch > 0) return c;
  }
  return std::nullopt;
}

void Vm::copy(const Instr &in) {
  const BufferView dst = breg(in.b[0]).view, src = breg(in.b[1]).view;
  if (dst.dtype != src.dtype || dst.sizes != src.sizes)
    throw RuntimeError("copy from " + dtypeName(src.dtype) + formatDims(src.sizes) + " to " + dtypeName(dst.dtype) +
                       formatDims(dst.sizes) + ": sizes and dtype must match");
  // Nothing to move. An empty view's offset may lie past its buffer's end (an empty slice at the
  // end), which a device call would check as an access.
  if (dst.numElements() == 0) return;
  const uint64_t es = dtypeSize(dst.dtype);
  switch (static_cast<CopyKind>(in.imm[0])) {
  case CopyKind::Memcpy:
    if (!dst.isContiguous() || !src.isContiguous())
      throw RuntimeError("copy kind memcpy needs both views contiguous; source strides " + formatDims(src.strides) +
                         ", destination strides " + formatDims(dst.strides) + " for sizes " + formatDims(dst.sizes) +
                         " (use copy2d or strided)");
    dev_.memcpy(dst.buffer, static_cast<uint64_t>(dst.offset) * es, src.buffer, static_cast<uint64_t>(src.offset) * es,
                static_cast<uint64_t>(dst.numElements()) * es);
    return;
  case CopyKind::Copy2D: {
    std::optional<PitchedCopy> c = pitchedCopy(dst, src);
    if (!c) {
      // Name the side that has no row split on its own (the source when both have one, but none
      // in common).
      bool srcAlone = pitchedCopy(src, src).has_value(), dstAlone = pitchedCopy(dst, dst).has_value();
      bool blameSrc = !srcAlone || dstAlone;
      throw RuntimeError(std::string("copy kind copy2d needs contiguous rows at a constant pitch; ") +
                         (blameSrc ? "source" : "destination") + " strides " +
                         formatDims(blameSrc ? src.strides : dst.strides) + " for sizes " + formatDims(dst.sizes) +
                         " do not qualify (use strided)");
    }
    dev_.copy2D(dst.buffer, static_cast<uint64_t>(dst.offset) * es, static_cast<uint64_t>(c->dstPitch) * es, src.buffer,
                static_cast<uint64_t>(src.offset) * es, static_cast<uint64_t>(c->srcPitch) * es,
                static_cast<uint64_t>(c->width) * es, static_cast<uint64_t>(c->rows));
    return;
  }
  case CopyKind::Strided:
    dev_.copyStrided(dst, src);
    return;
  }
  throw RuntimeError("unknown copy kind " + std::to_string(in.imm[0]));
}

void Vm::finish(const Instr &in) {
  for (size_t i = 0; i < p_.outputs.size(); ++i) {
    const BufferView v = breg(in.b[i]).view;
    const OutputSlot &slot = outputs_[i];
    const bool exact = slot.allocated && v.buffer == slot.view.buffer && v.offset == 0 && v.dtype == slot.view.dtype &&
                       v.sizes == slot.view.sizes && v.isContiguous();
    if (exact) {
      returned_.push_back(slot.view);
      continue;
    }
    const std::string name = "output " + std::to_string(i) + " '" + p_.outputs[i].name + "'";
    // An output the program allocated through the allocator must be returned as exactly that
    // buffer's shape: a host framework would reject anything else, so copying would hide it.
    if (slot.byProgram && (v.dtype != slot.view.dtype || v.sizes != slot.view.sizes))
      throw RuntimeError(name + " was allocated through the output allocator as " + dtypeName(slot.view.dtype) +
                         formatDims(slot.view.sizes) + " but is returned as " + dtypeName(v.dtype) +
                         formatDims(v.sizes));
    if (slot.byProgram && v.buffer == slot.view.buffer)
      throw RuntimeError(name + " was allocated through the output allocator as " + dtypeName(slot.view.dtype) +
                         formatDims(slot.view.sizes) +
                         " (contiguous, offset 0) but is returned as a view with offset " + std::to_string(v.offset) +
                         " and strides " + formatDims(v.strides));
    if (slot.byProgram)
      throw RuntimeError(name +
                         " was allocated through the output allocator but another buffer "
                         "of the same shape " +
                         formatDims(v.sizes) + " is returned");
    ++outputCopies_;
    outputs_[i].allocated = false;
    BufferView out = obtainOutput(i, v.dtype, v.sizes);
    const uint64_t es = dtypeSize(v.dtype);
    if (v.isContiguous())
      dev_.memcpy(out.buffer, 0, v.buffer, static_cast<uint64_t>(v.offset) * es,
                  static_cast<uint64_t>(v.numElements()) * es);
    else
      dev_.copyStrided(out, v);
    returned_.push_back(out);
  }
  returned = true;
}

void Vm::exec(size_t index, const Instr &in) {
  auto setB = [&](Reg r) { b_[static_cast<size_t>(in.b[0])] = std::move(r); };
  switch (in.op) {
  case Opcode::ConstIndex:
    setS(in.s[0], in.imm[0]);
    return;
  case Opcode::ScalarBinary:
    scalarBinary(in);
    return;
  case Opcode::Select:
    setS(in.s[0], sreg(in.s[1]) != 0 ? sreg(in.s[2]) : sreg(in.s[3]));
    return;
  case Opcode::Dim: {
    const BufferView &v = breg(in.b[0]).view;
    if (in.imm[0] < 0 || static_cast<size_t>(in.imm[0]) >= v.sizes.size())
      throw RuntimeError("axis " + std::to_string(in.imm[0]) + " out of range for a rank-" +
                         std::to_string(v.sizes.size()) + " view");
    setS(in.s[0], v.sizes[static_cast<size_t>(in.imm[0])]);
    return;
  }
  case Opcode::Assert:
    if (sreg(in.s[0]) == 0) throw RuntimeError("assertion failed: " + in.name);
    return;
  case Opcode::Input: {
    const size_t i = static_cast<size_t>(in.imm[0]);
    Reg r =
        wholeBuffer(inputViews_[i].buffer, inputViews_[i].dtype, inputViews_[i].sizes, Origin::Input, inputBytes_[i]);
    setB(r);
    return;
  }
  case Opcode::Alloc:
  case Opcode::GetHostScratch: {
    const bool scratch = in.op == Opcode::GetHostScratch;
    const std::vector<int64_t> dims = scalars(in.s, 0);
    const uint64_t bytes = byteSize(in.dtype, dims, "allocation " + formatDims(dims));
    BufferHandle h = allocOwned(scratch ? MemSpace::Host : in.space, bytes, AllocPurpose::Buffer);
    setB(wholeBuffer(h, in.dtype, dims, scratch ? Origin::Scratch : Origin::Alloc, bytes));
    return;
  }
  case Opcode::AllocOutput:
    allocOutput(in);
    return;
  case Opcode::GetPool: {
    const int64_t need = sreg(in.s[0]);
    if (need < 0) throw RuntimeError("negative pool size " + std::to_string(need));
    if (!pool_ || pool_->limitEnd < static_cast<uint64_t>(need)) {
      for (const Region &r : regions_)
        if (r.live)
          throw RuntimeError("pool must grow to " + std::to_string(need) +
                             " bytes while a region created by instruction " + std::to_string(r.createdBy) +
                             " is live");
      if (pool_) freeOwned(pool_->view.buffer);
      BufferHandle h = allocOwned(MemSpace::Device, static_cast<uint64_t>(need), AllocPurpose::Pool);
      pool_ = wholeBuffer(h, DType::U8, {need}, Origin::Pool, static_cast<uint64_t>(need));
    }
    setB(*pool_);
    return;
  }
  case Opcode::PoolSubview: {
    const Reg &pool = breg(in.b[1]);
    if (pool.origin != Origin::Pool)
      throw RuntimeError("b" + std::to_string(in.b[1]) + " is a " + originName(pool.origin) + ", not the pool");
    const int64_t off = sreg(in.s[0]), size = sreg(in.s[1]);
    const std::vector<int64_t> dims = scalars(in.s, 2);
    const int64_t es = static_cast<int64_t>(dtypeSize(in.dtype));
    const uint64_t need = byteSize(in.dtype, dims, "pool region " + formatDims(dims));
    if (off < 0 || size < 0 || static_cast<uint64_t>(off) + static_cast<uint64_t>(size) > pool.limitEnd)
      throw RuntimeError("pool region [" + std::to_string(off) + ", " + std::to_string(off + size) +
                         ") lies outside the " + std::to_string(pool.limitEnd) + "-byte pool");
    if (off % es != 0)
      throw RuntimeError("pool region offset " + std::to_string(off) + " is not aligned to " + dtypeName(in.dtype));
    if (need > static_cast<uint64_t>(size))
      throw RuntimeError("pool region of " + std::to_string(size) + " bytes cannot hold " + dtypeName(in.dtype) +
                         formatDims(dims) + " (" + std::to_string(need) + " bytes)");
    const uint64_t begin = static_cast<uint64_t>(off), end = begin + static_cast<uint64_t>(size);
    for (const Region &r : regions_)
      if (r.live && begin < r.end && r.begin < end)
        throw RuntimeError("pool region [" + std::to_string(begin) + ", " + std::to_string(end) +
                           ") overlaps the live region [" + std::to_string(r.begin) + ", " + std::to_string(r.end) +
                           ") created by instruction " + std::to_string(r.createdBy));
    dev_.discard(pool.view.buffer, begin, end - begin);
    regions_.push_back({begin, end, true, index});
    Reg r;
    r.set = true;
    r.view = contiguousView(pool.view.buffer, in.dtype, dims);
    r.view.offset = off / es;
    r.origin = Origin::Region;
    r.limitBegin = begin;
    r.limitEnd = end;
    r.region = static_cast<int64_t>(regions_.size() - 1);
    setB(r);
    return;
  }
  case Opcode::Dealloc:
    dealloc(in);
    return;
  case Opcode::Constant: {
    const int64_t c = in.imm[0];
    const ConstantSpec &spec = p_.constants[static_cast<size_t>(c)];
    if (!in.s.empty() && scalars(in.s, 0) != spec.dims)
      throw RuntimeError("constant " + std::to_string(c) + " has dims " + formatDims(spec.dims) +
                         ", the instruction asks for " + formatDims(scalars(in.s, 0)));
    if (opt_.residentConstants) {
      ResidentConstants &rc = *opt_.residentConstants;
      auto hit = rc.buffers.find(c);
      if (hit == rc.buffers.end()) {
        BufferHandle h = dev_.allocate(MemSpace::Device, spec.size, AllocPurpose::Buffer);
        hit = rc.buffers.emplace(c, h).first;
        rc.bytes += spec.size;
        dev_.upload(h, 0, p_.constantData.data() + spec.offset, spec.size);
      }
      setB(wholeBuffer(hit->second, spec.dtype, spec.dims, Origin::Constant, spec.size));
      return;
    }
    auto it = constants_.find(c);
    if (it == constants_.end()) {
      BufferHandle h = allocOwned(MemSpace::Device, spec.size, AllocPurpose::Buffer);
      dev_.upload(h, 0, p_.constantData.data() + spec.offset, spec.size);
      it = constants_.emplace(c, wholeBuffer(h, spec.dtype, spec.dims, Origin::Constant, spec.size)).first;
    }
    setB(it->second);
    return;
  }
  case Opcode::View: {
    Reg r = breg(in.b[1]);
    const size_t rank = static_cast<size_t>(in.imm[0]);
    std::vector<int64_t> v = scalars(in.s, 0);
    r.view.offset = v[0];
    r.view.sizes.assign(v.begin() + 1, v.begin() + 1 + static_cast<long>(rank));
    r.view.strides.assign(v.begin() + 1 + static_cast<long>(rank), v.end());
    for (int64_t sz : r.view.sizes)
      if (sz < 0) throw RuntimeError("negative size in view sizes " + formatDims(r.view.sizes));
    checkInLimits(r, "view");
    setB(r);
    return;
  }
  case Opcode::CheckShape: {
    const BufferView &v = breg(in.b[0]).view;
    bool ok = v.sizes.size() == in.imm.size();
    for (size_t d = 0; ok && d < v.sizes.size(); ++d)
      ok = in.imm[d] < 0 || in.imm[d] == v.sizes[d];
    if (!ok)
      throw RuntimeError("ABI cast check failed: " + (in.name.empty() ? std::string("cast") : in.name) +
                         ": the view has shape " + formatDims(v.sizes) + " but the cast demands " + formatDims(in.imm));
    return;
  }
  case Opcode::ReadbackScalar:
  case Opcode::LoadScalar: {
    const BufferView &v = breg(in.b[0]).view;
    const uint64_t off = elementByteOffset(v, scalars(in.s, 1));
    uint8_t bytes[8];
    const bool unsynchronized = in.op == Opcode::ReadbackScalar && !in.imm.empty() && in.imm[0] == 1;
    if (unsynchronized) {
      // Staged through host-mapped memory with no synchronization before the host reads it.
      const uint64_t es = dtypeSize(v.dtype);
      BufferHandle staging = allocOwned(MemSpace::HostMapped, es, AllocPurpose::Buffer);
      dev_.memcpy(staging, 0, v.buffer, off, es);
      dev_.hostLoad(bytes, staging, 0, es);
      freeOwned(staging);
    } else if (in.op == Opcode::ReadbackScalar)
      dev_.readback(bytes, v.buffer, off, dtypeSize(v.dtype));
    else
      dev_.hostLoad(bytes, v.buffer, off, dtypeSize(v.dtype));
    setS(in.s[0], toIndex(bytes, v.dtype));
    return;
  }
  case Opcode::StoreScalar: {
    const BufferView &v = breg(in.b[0]).view;
    const uint64_t off = elementByteOffset(v, scalars(in.s, 1));
    std::vector<uint8_t> bytes = fromIndex(sreg(in.s[0]), v.dtype);
    dev_.hostStore(v.buffer, off, bytes.data(), bytes.size());
    return;
  }
  case Opcode::HostCopy: {
    const BufferView dst = breg(in.b[0]).view, src = breg(in.b[1]).view;
    if (dst.dtype != src.dtype || dst.sizes != src.sizes)
      throw RuntimeError("host copy from " + dtypeName(src.dtype) + formatDims(src.sizes) + " to " +
                         dtypeName(dst.dtype) + formatDims(dst.sizes) + ": sizes and dtype must match");
    if (dev_.bufferSpace(src.buffer) == MemSpace::Device || dev_.bufferSpace(dst.buffer) == MemSpace::Device)
      throw RuntimeError(std::string("host memcpy touches device memory (buffer #") +
                         std::to_string(dev_.bufferSpace(src.buffer) == MemSpace::Device ? src.buffer : dst.buffer) +
                         "); device data must move with a Copy transfer");
    const size_t es = dtypeSize(dst.dtype);
    std::vector<int64_t> idx(dst.sizes.size(), 0);
    uint8_t bytes[8];
    for (int64_t k = 0, n = dst.numElements(); k < n; ++k) {
      dev_.hostLoad(bytes, src.buffer, elementByteOffset(src, idx), es);
      dev_.hostStore(dst.buffer, elementByteOffset(dst, idx), bytes, es);
      for (size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < dst.sizes[d]) break;
        idx[d] = 0;
      }
    }
    return;
  }
  case Opcode::Copy:
    copy(in);
    return;
  case Opcode::Kernel: {
    // The operand and argument vectors are members reused from launch to launch: copying into
    // them keeps their capacity, so a launch costs no heap allocation here.
    const size_t n = std::min(static_cast<size_t>(in.imm[0]), in.b.size());
    kernelIns_.resize(n);
    kernelOuts_.resize(in.b.size() - n);
    for (size_t i = 0; i < in.b.size(); ++i)
      (i < n ? kernelIns_[i] : kernelOuts_[i - n]) = breg(in.b[i]).view;
    kernelArgs_.attrs.assign(in.imm.begin() + 1, in.imm.end());
    kernelArgs_.fattrs.assign(in.fimm.begin(), in.fimm.end());
    kernelArgs_.scalars.clear();
    for (int32_t r : in.s)
      kernelArgs_.scalars.push_back(sreg(r));
    dev_.launch(in.name, kernelIns_, kernelOuts_, kernelArgs_);
    return;
  }
  case Opcode::Return:
    finish(in);
    return;
  }
  throw RuntimeError("unknown opcode " + std::to_string(static_cast<int>(in.op)));
}

RunResult Vm::run(const std::vector<HostTensor> &inputs) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  for (size_t i = 0; i < inputs.size(); ++i) {
    try {
      const uint64_t bytes = inputs[i].bytes.size();
      BufferHandle h = allocOwned(MemSpace::Device, bytes, AllocPurpose::Buffer);
      dev_.upload(h, 0, inputs[i].bytes.data(), bytes);
      inputViews_.push_back(contiguousView(h, inputs[i].dtype, inputs[i].dims));
      inputBytes_.push_back(bytes);
    } catch (const RuntimeError &e) {
      throw RuntimeError("uploading input " + std::to_string(i) + " '" + p_.inputs[i].name + "': " + e.what());
    }
  }
  return execute(t0);
}

RunResult Vm::runOnDevice(const std::vector<BufferView> &inputs) {
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputViews_.push_back(inputs[i]);
    inputBytes_.push_back(static_cast<uint64_t>(inputs[i].numElements()) * dtypeSize(inputs[i].dtype));
  }
  return execute(t0);
}

RunResult Vm::execute(std::chrono::steady_clock::time_point t0) {
  using Clock = std::chrono::steady_clock;
  RunResult result;
  s_.assign(static_cast<size_t>(p_.numScalarRegs), 0);
  sset_.assign(static_cast<size_t>(p_.numScalarRegs), false);
  b_.assign(static_cast<size_t>(p_.numBufferRegs), Reg{});
  outputs_.assign(p_.outputs.size(), OutputSlot{});
  const auto t1 = Clock::now();
  for (current_ = 0; current_ < p_.code.size() && !returned; ++current_) {
    try {
      exec(current_, p_.code[current_]);
    } catch (const RuntimeError &e) {
      throw RuntimeError(describeInstr(p_, current_) + ": " + e.what());
    } catch (const std::bad_alloc &) {
      throw RuntimeError(describeInstr(p_, current_) + ": out of host memory");
    }
  }
  if (!returned) throw RuntimeError("program ended without Return");
  const bool hostCopies = !opt_.outputAllocator || opt_.copyOutputsToHost;
  if (opt_.synchronizeAtEnd || hostCopies) dev_.synchronize();
  const auto t2 = Clock::now();
  for (size_t i = 0; i < returned_.size(); ++i) {
    const BufferView &v = returned_[i];
    if (opt_.outputAllocator) result.outputBuffers.push_back(v);
    if (!opt_.outputAllocator || opt_.copyOutputsToHost) {
      HostTensor t(v.dtype, v.sizes);
      try {
        dev_.download(t.bytes.data(), v.buffer, 0, t.bytes.size());
      } catch (const RuntimeError &e) {
        throw RuntimeError("reading back output " + std::to_string(i) + " '" + p_.outputs[i].name + "': " + e.what());
      }
      result.outputs.push_back(std::move(t));
    }
  }
  releaseAll();
  result.counters = dev_.counters();
  result.counters.outputCopies = outputCopies_;
  const auto t3 = Clock::now();
  result.executeMs = std::chrono::duration<double, std::milli>(t2 - t1).count();
  result.totalMs = std::chrono::duration<double, std::milli>(t3 - t0).count();
  return result;
}

} // namespace

RunResult runProgramOnDevice(const Program &program, Device &device, const std::vector<BufferView> &inputs,
                             const RunOptions &options) {
  const std::string &where = options.programName;
  validateProgram(program, where);
  if (inputs.size() != program.inputs.size())
    throw RuntimeError(where + ": wrong input count: got " + std::to_string(inputs.size()) + ", the program takes " +
                       std::to_string(program.inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec &spec = program.inputs[i];
    const BufferView &v = inputs[i];
    const std::string name = where + ": device input " + std::to_string(i) + " '" + spec.name + "'";
    if (v.dtype != spec.dtype)
      throw RuntimeError(name + ": dtype " + dtypeName(v.dtype) + ", expected " + dtypeName(spec.dtype));
    bool match = v.sizes.size() == spec.dims.size();
    for (size_t d = 0; match && d < v.sizes.size(); ++d)
      match = spec.dims[d] < 0 || spec.dims[d] == v.sizes[d];
    if (!match)
      throw RuntimeError(name + ": shape " + formatDims(v.sizes) + " does not match the declared " +
                         formatDims(spec.dims));
    if (v.offset != 0 || !v.isContiguous())
      throw RuntimeError(name + ": must be a contiguous view at offset 0 (offset " + std::to_string(v.offset) +
                         ", strides " + formatDims(v.strides) + ")");
    if (device.bufferSpace(v.buffer) == MemSpace::Host)
      throw RuntimeError(name + ": buffer #" + std::to_string(v.buffer) +
                         " is pageable host memory; kernels need device or host-mapped memory");
    const uint64_t need = static_cast<uint64_t>(v.numElements()) * dtypeSize(v.dtype);
    if (device.bufferBytes(v.buffer) < need)
      throw RuntimeError(name + ": buffer #" + std::to_string(v.buffer) + " has " +
                         std::to_string(device.bufferBytes(v.buffer)) + " bytes, " + dtypeName(v.dtype) +
                         formatDims(v.sizes) + " needs " + std::to_string(need));
  }
  device.resetCounters();
  Vm vm(program, device, options);
  try {
    return vm.runOnDevice(inputs);
  } catch (const RuntimeError &e) {
    throw RuntimeError(where + ": " + e.what());
  }
}

RunResult runProgram(const Program &program, Device &device, const std::vector<HostTensor> &inputs,
                     const RunOptions &options) {
  const std::string &where = options.programName;
  validateProgram(program, where);
  try {
    validateInputs(program, inputs);
  } catch (const RuntimeError &e) {
    throw RuntimeError(where + ": " + e.what());
  }
  device.resetCounters();
  Vm vm(program, device, options);
  try {
    return vm.run(inputs);
  } catch (const RuntimeError &e) {
    throw RuntimeError(where + ": " + e.what());
  }
}

} // namespace dq::rt
