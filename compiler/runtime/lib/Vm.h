// The program VM's state and its instructions (internal to dq_runtime): Runtime.cpp drives a
// run, VmExec.cpp dispatches each instruction to the function of its family (VmScalars.cpp,
// VmMemory.cpp, VmCopies.cpp, VmOutputs.cpp).
#pragma once

#include "dq/runtime/Error.h"
#include "dq/runtime/Runtime.h"

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dq::rt::vm {

// What a buffer register refers to; decides what Dealloc may do and how bounds are limited.
enum class Origin { Alloc, Scratch, Input, Output, Constant, Pool, Region };

inline const char *originName(Origin o) {
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

inline int64_t checkedMul(int64_t a, int64_t b, const char *what) {
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

  void setB(const Instr &in, Reg r) { b_[static_cast<size_t>(in.b[0])] = std::move(r); }

  // ---- instructions, one function per family (VmExec.cpp dispatches) ----
  void exec(size_t index, const Instr &in);
  // host scalars (VmScalars.cpp)
  void scalarBinary(const Instr &in);
  void dim(const Instr &in);
  void loadScalar(const Instr &in);
  void storeScalar(const Instr &in);
  // allocations and views (VmMemory.cpp)
  void input(const Instr &in);
  void alloc(const Instr &in);
  void getPool(const Instr &in);
  void poolSubview(size_t index, const Instr &in);
  void dealloc(const Instr &in);
  void constant(const Instr &in);
  void view(const Instr &in);
  void checkShape(const Instr &in);
  // copies (VmCopies.cpp)
  void copy(const Instr &in);
  void hostCopy(const Instr &in);
  // kernel launches (VmExec.cpp)
  void launch(const Instr &in);
  // program outputs (VmOutputs.cpp)
  void allocOutput(const Instr &in);
  BufferView obtainOutput(size_t index, DType dtype, const std::vector<int64_t> &dims);
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

} // namespace dq::rt::vm
