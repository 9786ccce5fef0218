// The kernel contract every device implements (internal to dq_runtime): the dtype sets a kernel
// operand admits, the operand and attribute checks with their messages (per kernel in
// KernelValidate.h), the fields every operand has, and the counters every device keeps. The sim
// kernels (SimKernelSupport.h) and the hip launches (hip/HipOperands.h) both call these, so a
// program that one device rejects is rejected by the other with the same words.
#pragma once

#include "dq/runtime/Device.h"
#include "dq/runtime/Error.h"
#include "dq/runtime/HostTensor.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace dq::rt::kernel {

inline bool isFloat(DType t) { return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16; }

// Sets of dtypes a kernel operand admits (the ONNX type constraints of the op it implements).
using TypeSet = uint32_t;
constexpr TypeSet bit(DType t) { return TypeSet{1} << static_cast<unsigned>(t); }
inline constexpr TypeSet kFloatTypes = bit(DType::F32) | bit(DType::F64) | bit(DType::F16) | bit(DType::BF16);
inline constexpr TypeSet kNumericTypes =
    kFloatTypes | bit(DType::I8) | bit(DType::U8) | bit(DType::I32) | bit(DType::I64);
inline constexpr TypeSet kSignedTypes = kFloatTypes | bit(DType::I8) | bit(DType::I32) | bit(DType::I64);
/// Floats, i32 and i64 (ONNX MatMul, ReduceSum, ReduceMean, CumSum, the base of Pow).
inline constexpr TypeSet kWideTypes = kFloatTypes | bit(DType::I32) | bit(DType::I64);
inline constexpr TypeSet kBoolTypes = bit(DType::Bool);
inline constexpr TypeSet kAllTypes = kNumericTypes | kBoolTypes;
inline constexpr TypeSet kIndexTypes = bit(DType::I32) | bit(DType::I64);
inline constexpr TypeSet kIntegerTypes = bit(DType::I8) | bit(DType::U8) | bit(DType::I32) | bit(DType::I64);

/// "f32 f64 ..." for the dtypes of `set`, in DType order.
inline std::string typeSetNames(TypeSet set) {
  std::string s;
  for (DType t :
       {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8, DType::U8, DType::I32, DType::I64, DType::Bool})
    if (set & bit(t)) s += (s.empty() ? "" : " ") + dtypeName(t);
  return s;
}

/// Throws RuntimeError "kernel 'KERNEL': PROBLEM".
[[noreturn]] inline void fail(const std::string &kernel, const std::string &problem) {
  throw RuntimeError("kernel '" + kernel + "': " + problem);
}

/// The part of a kernel operand every device has: a view of `dtype` elements with `offset` and
/// `strides` in elements. Each device's Operand adds where the elements live.
struct OperandView {
  DType dtype = DType::F32;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
};

// The checks below take any device's operand type O with members dtype and sizes and a
// label found by operandLabel(o) ("in 1 (buffer #4)"), which each device defines beside O.

template <typename O> void checkBroadcast(const std::string &kernel, const O &in, const O &out) {
  bool ok = in.sizes.size() <= out.sizes.size();
  for (size_t d = 0; ok && d < in.sizes.size(); ++d) {
    int64_t o = out.sizes[d + out.sizes.size() - in.sizes.size()];
    ok = in.sizes[d] == 1 || in.sizes[d] == o;
  }
  if (!ok)
    fail(kernel, operandLabel(in) + " shape " + formatDims(in.sizes) + " does not broadcast to " + operandLabel(out) +
                     " shape " + formatDims(out.sizes));
}

template <typename O>
void checkArity(const std::string &kernel, const std::vector<O> &ins, const std::vector<O> &outs, size_t nIns) {
  if (ins.size() != nIns || outs.size() != 1)
    fail(kernel, "expects " + std::to_string(nIns) + " inputs and 1 output, got " + std::to_string(ins.size()) +
                     " and " + std::to_string(outs.size()));
}

template <typename O> void checkSameDType(const std::string &kernel, const O &a, const O &b) {
  if (a.dtype != b.dtype)
    fail(kernel,
         operandLabel(a) + " is " + dtypeName(a.dtype) + " but " + operandLabel(b) + " is " + dtypeName(b.dtype));
}

template <typename O> void checkDType(const std::string &kernel, const O &a, DType t) {
  if (a.dtype != t) fail(kernel, operandLabel(a) + " is " + dtypeName(a.dtype) + ", expected " + dtypeName(t));
}

template <typename O> void checkAdmits(const std::string &kernel, const O &a, TypeSet set) {
  if (!(bit(a.dtype) & set))
    fail(kernel, "unsupported: " + operandLabel(a) + " is " + dtypeName(a.dtype) + "; '" + kernel + "' admits " +
                     typeSetNames(set));
}

template <typename O> void checkShape(const std::string &kernel, const O &o, const std::vector<int64_t> &shape) {
  if (o.sizes != shape)
    fail(kernel, operandLabel(o) + " shape " + formatDims(o.sizes) + ", expected " + formatDims(shape));
}

/// The axis immediate args.attrs[0], a negative value counting from the end.
inline size_t normalizeAxis(const std::string &kernel, const KernelArgs &args, size_t rank) {
  if (args.attrs.empty()) fail(kernel, "missing axis attribute");
  int64_t a = args.attrs[0];
  if (a < 0) a += static_cast<int64_t>(rank);
  if (a < 0 || static_cast<size_t>(a) >= rank)
    fail(kernel, "axis " + std::to_string(args.attrs[0]) + " out of range for rank " + std::to_string(rank));
  return static_cast<size_t>(a);
}

/// The axis immediate args.attrs[k]; a negative value counts from the end only when `wraps`.
inline size_t axisAttr(const std::string &kernel, const KernelArgs &args, size_t k, size_t rank, bool wraps) {
  if (args.attrs.size() <= k) fail(kernel, "missing axis attribute imm[" + std::to_string(k + 1) + "]");
  int64_t a = args.attrs[k];
  if (a < 0 && wraps) a += static_cast<int64_t>(rank);
  if (a < 0 || static_cast<size_t>(a) >= rank)
    fail(kernel, "axis " + std::to_string(args.attrs[k]) + " out of range for rank " + std::to_string(rank) +
                     (wraps ? "" : " (must be non-negative)"));
  return static_cast<size_t>(a);
}

/// The 0/1 flag immediate args.attrs[k].
inline bool flagAttr(const std::string &kernel, const KernelArgs &args, size_t k, const char *what) {
  if (args.attrs.size() <= k || (args.attrs[k] != 0 && args.attrs[k] != 1))
    fail(kernel, std::string("imm[") + std::to_string(k + 1) + "] (" + what + ") must be 0 or 1");
  return args.attrs[k] == 1;
}

// ---- buffer names in messages -------------------------------------------------------------------

inline const char *spaceName(MemSpace s) {
  switch (s) {
  case MemSpace::Device:
    return "device";
  case MemSpace::Host:
    return "host";
  case MemSpace::HostMapped:
    return "host-mapped";
  }
  return "unknown";
}

/// "buffer #7".
inline std::string bufferName(BufferHandle b) { return "buffer #" + std::to_string(b); }

/// Throws "out of bounds: WHAT bytes [offset, offset + bytes) of buffer #N which holds SIZE
/// bytes" unless the range lies inside the `size`-byte allocation `buffer`.
inline void checkByteRange(uint64_t size, BufferHandle buffer, uint64_t offset, uint64_t bytes, const char *what) {
  if (offset > size || bytes > size - offset)
    throw RuntimeError(std::string("out of bounds: ") + what + " bytes [" + std::to_string(offset) + ", " +
                       std::to_string(offset + bytes) + ") of " + bufferName(buffer) + " which holds " +
                       std::to_string(size) + " bytes");
}

/// Throws when device code would touch `buffer`, an allocation in `space`, that is pageable
/// host memory.
inline void checkDeviceVisible(MemSpace space, BufferHandle buffer, const char *what) {
  if (space == MemSpace::Host)
    throw RuntimeError(std::string(what) + " touches " + bufferName(buffer) +
                       ", pageable host memory that device code cannot access; use host-mapped "
                       "memory or a memcpy/copy2d transfer");
}

/// Host loads (`store` false) and stores (`store` true) may only touch host or host-mapped
/// memory: throws for `buffer`, an allocation in `space`, in device memory.
inline void checkHostAccess(MemSpace space, BufferHandle buffer, bool store) {
  if (space != MemSpace::Device) return;
  if (store)
    throw RuntimeError("host store touches device memory (" + bufferName(buffer) +
                       "); the host may only write host or host-mapped memory: stage the value "
                       "in host scratch and copy it");
  throw RuntimeError("host load touches device memory (" + bufferName(buffer) +
                     "); the host may only access host or host-mapped memory: read it back or "
                     "copy it to the host first");
}

/// Throws when a host load of bytes [offset, offset + bytes) of `buffer` (in `space`) overlaps
/// one of `pending`, the byte ranges device work wrote since the last synchronization.
template <typename Ranges>
void checkSynchronized(const Ranges &pending, BufferHandle buffer, MemSpace space, uint64_t offset, uint64_t bytes) {
  for (const auto &[b, e] : pending)
    if (offset < e && b < offset + bytes)
      throw RuntimeError("unsynchronized read: host load of bytes [" + std::to_string(offset) + ", " +
                         std::to_string(offset + bytes) + ") of " + bufferName(buffer) + " (" + spaceName(space) +
                         "), which device work wrote after the last "
                         "synchronization; synchronize (or read back) first");
}

/// The bytes [begin, end) of its allocation that view `v` spans, or false when it spans none.
inline bool viewByteRange(const BufferView &v, uint64_t &begin, uint64_t &end) {
  auto [lo, hi] = v.elementRange();
  if (lo > hi) return false;
  const uint64_t es = dtypeSize(v.dtype);
  begin = static_cast<uint64_t>(lo) * es;
  end = static_cast<uint64_t>(hi + 1) * es;
  return true;
}

// ---- the allocation and transfer counters every device keeps (Counters, Device.h) -----------------

/// Counts one allocate() of `bytes` in `space` for `purpose`: allocations, the device or host
/// bytes, the pool bytes, and the live and peak device bytes.
inline void countAllocation(Counters &c, uint64_t &liveDeviceBytes, MemSpace space, uint64_t bytes,
                            AllocPurpose purpose) {
  ++c.allocations;
  if (space == MemSpace::Device) {
    c.bytesAllocated += bytes;
    liveDeviceBytes += bytes;
    c.peakDeviceBytes = std::max(c.peakDeviceBytes, liveDeviceBytes);
    if (purpose == AllocPurpose::Pool) c.poolBytes += bytes;
  } else {
    c.hostBytesAllocated += bytes;
  }
}

/// Counts the free() of an allocation of `bytes` in `space` (the live device bytes).
inline void countFree(uint64_t &liveDeviceBytes, MemSpace space, uint64_t bytes) {
  if (space == MemSpace::Device) liveDeviceBytes -= bytes;
}

/// Counts one transfer of `bytes` from `src` to `dst` memory: d2d, h2d, d2h or h2h (host and
/// host-mapped both count as host).
inline void countTransfer(Counters &c, MemSpace dst, MemSpace src, uint64_t bytes) {
  const bool d = dst == MemSpace::Device, s = src == MemSpace::Device;
  if (s && d) {
    ++c.d2dTransfers;
    c.d2dBytes += bytes;
  } else if (d) {
    ++c.h2dTransfers;
    c.h2dBytes += bytes;
  } else if (s) {
    ++c.d2hTransfers;
    c.d2hBytes += bytes;
  } else {
    ++c.h2hTransfers;
    c.h2hBytes += bytes;
  }
}

} // namespace dq::rt::kernel
