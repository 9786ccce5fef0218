// Internal to the `hip` device: checked kernel operands and the argument checks shared by its
// launch files, with SimKernels.cpp's messages.
#pragma once

#include "HipKernels.h"
#include "dq/runtime/Device.h"
#include "dq/runtime/Error.h"
#include "dq/runtime/HostTensor.h"
#include "dq/runtime/hip/HipCompat.h"

#include <string>
#include <vector>

namespace dq::rt::hipdev {

inline const char *spaceName(MemSpace s) {
  switch (s) {
  case MemSpace::Device: return "device";
  case MemSpace::Host: return "host";
  case MemSpace::HostMapped: return "host-mapped";
  }
  return "unknown";
}

inline std::string bufferName(BufferHandle b) { return "buffer #" + std::to_string(b); }

inline void check(hipError_t e, const std::string &what) {
  if (e != hipSuccess)
    throw RuntimeError("hip: " + what + " failed: " + hipGetErrorName(e) + ": " + hipGetErrorString(e));
}

inline bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}

using TypeSet = uint32_t;
constexpr TypeSet bit(DType t) { return TypeSet{1} << static_cast<unsigned>(t); }
inline constexpr TypeSet kFloatTypes = bit(DType::F32) | bit(DType::F64) | bit(DType::F16) | bit(DType::BF16);
inline constexpr TypeSet kNumericTypes =
    kFloatTypes | bit(DType::I8) | bit(DType::U8) | bit(DType::I32) | bit(DType::I64);
inline constexpr TypeSet kSignedTypes = kFloatTypes | bit(DType::I8) | bit(DType::I32) | bit(DType::I64);
inline constexpr TypeSet kWideTypes = kFloatTypes | bit(DType::I32) | bit(DType::I64);
inline constexpr TypeSet kBoolTypes = bit(DType::Bool);
inline constexpr TypeSet kAllTypes = kNumericTypes | kBoolTypes;
inline constexpr TypeSet kIndexTypes = bit(DType::I32) | bit(DType::I64);
inline constexpr TypeSet kIntegerTypes = bit(DType::I8) | bit(DType::U8) | bit(DType::I32) | bit(DType::I64);

inline std::string typeSetNames(TypeSet set) {
  std::string s;
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8, DType::U8,
                  DType::I32, DType::I64, DType::Bool})
    if (set & bit(t)) s += (s.empty() ? "" : " ") + dtypeName(t);
  return s;
}

inline int64_t numel(const std::vector<int64_t> &s) {
  int64_t n = 1;
  for (int64_t x : s) n *= x;
  return n;
}

/// A checked kernel operand: a view resolved to a device-visible pointer. Its label ("in 0
/// (buffer #7)") is built only when a message needs it: a launch resolves several operands and
/// building strings for each cost more host time than the launch itself.
struct Operand {
  const char *role = "operand";  ///< "in", "out", or a whole description
  int index = -1;                ///< position among the ins or outs; -1 when the role says it all
  BufferHandle buffer = 0;
  MemSpace space = MemSpace::Device;
  char *base = nullptr;
  DType dtype = DType::F32;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;

  std::string label() const {
    std::string s = role;
    if (index >= 0) s += " " + std::to_string(index);
    return s + " (" + bufferName(buffer) + ")";
  }
};

[[noreturn]] inline void fail(const std::string &kernel, const std::string &problem) {
  throw RuntimeError("kernel '" + kernel + "': " + problem);
}

// ---- the checks of SimKernels.cpp, with its messages --------------------------------------------

inline void checkBroadcast(const std::string &k, const Operand &in, const Operand &out) {
  bool ok = in.sizes.size() <= out.sizes.size();
  for (size_t d = 0; ok && d < in.sizes.size(); ++d) {
    int64_t o = out.sizes[d + out.sizes.size() - in.sizes.size()];
    ok = in.sizes[d] == 1 || in.sizes[d] == o;
  }
  if (!ok)
    fail(k, in.label() + " shape " + formatDims(in.sizes) + " does not broadcast to " + out.label() +
                " shape " + formatDims(out.sizes));
}
inline void checkArity(const std::string &k, const std::vector<Operand> &ins, const std::vector<Operand> &outs,
                size_t n) {
  if (ins.size() != n || outs.size() != 1)
    fail(k, "expects " + std::to_string(n) + " inputs and 1 output, got " + std::to_string(ins.size()) +
                " and " + std::to_string(outs.size()));
}
inline void checkSameDType(const std::string &k, const Operand &a, const Operand &b) {
  if (a.dtype != b.dtype)
    fail(k, a.label() + " is " + dtypeName(a.dtype) + " but " + b.label() + " is " + dtypeName(b.dtype));
}
inline void checkDType(const std::string &k, const Operand &a, DType t) {
  if (a.dtype != t) fail(k, a.label() + " is " + dtypeName(a.dtype) + ", expected " + dtypeName(t));
}
inline void checkAdmits(const std::string &k, const Operand &a, TypeSet set) {
  if (!(bit(a.dtype) & set))
    fail(k, "unsupported: " + a.label() + " is " + dtypeName(a.dtype) + "; '" + k + "' admits " +
                typeSetNames(set));
}
inline void checkShape(const std::string &k, const Operand &o, const std::vector<int64_t> &shape) {
  if (o.sizes != shape) fail(k, o.label() + " shape " + formatDims(o.sizes) + ", expected " + formatDims(shape));
}
inline size_t axisAttr(const std::string &k, const KernelArgs &args, size_t i, size_t rank, bool wraps) {
  if (args.attrs.size() <= i) fail(k, "missing axis attribute imm[" + std::to_string(i + 1) + "]");
  int64_t a = args.attrs[i];
  if (a < 0 && wraps) a += static_cast<int64_t>(rank);
  if (a < 0 || static_cast<size_t>(a) >= rank)
    fail(k, "axis " + std::to_string(args.attrs[i]) + " out of range for rank " + std::to_string(rank) +
                (wraps ? "" : " (must be non-negative)"));
  return static_cast<size_t>(a);
}
inline bool flagAttr(const std::string &k, const KernelArgs &args, size_t i, const char *what) {
  if (args.attrs.size() <= i || (args.attrs[i] != 0 && args.attrs[i] != 1))
    fail(k, std::string("imm[") + std::to_string(i + 1) + "] (" + what + ") must be 0 or 1");
  return args.attrs[i] == 1;
}
inline size_t normalizeAxis(const std::string &k, const KernelArgs &args, size_t rank) {
  if (args.attrs.empty()) fail(k, "missing axis attribute");
  int64_t a = args.attrs[0];
  if (a < 0) a += static_cast<int64_t>(rank);
  if (a < 0 || static_cast<size_t>(a) >= rank)
    fail(k, "axis " + std::to_string(args.attrs[0]) + " out of range for rank " + std::to_string(rank));
  return static_cast<size_t>(a);
}

// ---- operand -> kernel parameter ---------------------------------------------------------------

inline std::string gKernel;  // name of the kernel being dispatched, for the rank message

inline void checkRank(size_t r) {
  if (r > static_cast<size_t>(hipk::kMaxRank))
    throw RuntimeError("unsupported: kernel '" + gKernel + "' on hip: rank " + std::to_string(r) +
                       " exceeds " + std::to_string(hipk::kMaxRank));
}

inline hipk::Shape shapeOf(const std::vector<int64_t> &s) {
  checkRank(s.size());
  hipk::Shape sh;
  sh.rank = static_cast<int>(s.size());
  sh.count = 1;
  for (size_t d = 0; d < s.size(); ++d) {
    sh.sizes[d] = s[d];
    sh.count *= s[d];
  }
  return sh;
}

/// `o` aligned right to a loop of rank `rank` (numpy broadcasting: size-1 and missing dims get
/// stride 0).
inline hipk::Opd aligned(const Operand &o, size_t rank) {
  checkRank(rank);
  checkRank(o.sizes.size());
  hipk::Opd p;
  p.base = o.base;
  p.dtype = static_cast<int>(o.dtype);
  p.esize = static_cast<int>(dtypeSize(o.dtype));
  p.offset = o.offset;
  const size_t shift = rank - o.sizes.size();
  for (size_t d = 0; d < o.sizes.size(); ++d) p.strides[d + shift] = o.sizes[d] == 1 ? 0 : o.strides[d];
  return p;
}

/// `o` with its own strides (no alignment).
inline hipk::Opd own(const Operand &o) {
  checkRank(o.sizes.size());
  hipk::Opd p;
  p.base = o.base;
  p.dtype = static_cast<int>(o.dtype);
  p.esize = static_cast<int>(dtypeSize(o.dtype));
  p.offset = o.offset;
  for (size_t d = 0; d < o.sizes.size(); ++d) p.strides[d] = o.strides[d];
  return p;
}

}  // namespace dq::rt::hipdev
