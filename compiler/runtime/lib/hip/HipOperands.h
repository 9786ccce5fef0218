// Internal to the `hip` device: checked kernel operands and what its launch files share; the
// operand and attribute checks are the runtime's kernel contract (KernelContract.h), the same
// calls and messages as the sim's.
#pragma once

#include "../KernelValidate.h"
#include "HipKernels.h"
#include "dq/runtime/Device.h"
#include "dq/runtime/Error.h"
#include "dq/runtime/HostTensor.h"
#include "dq/runtime/hip/HipCompat.h"

#include <string>
#include <vector>

namespace dq::rt::hipdev {

using kernel::bufferName; // Operand::label() below needs it before the using-directive
using kernel::spaceName;

inline void check(hipError_t e, const std::string &what) {
  if (e != hipSuccess)
    throw RuntimeError("hip: " + what + " failed: " + hipGetErrorName(e) + ": " + hipGetErrorString(e));
}

inline int64_t numel(const std::vector<int64_t> &s) {
  int64_t n = 1;
  for (int64_t x : s)
    n *= x;
  return n;
}

/// A checked kernel operand: a view resolved to a device-visible pointer. Its label ("in 0
/// (buffer #7)") is built only when a message needs it: a launch resolves several operands and
/// building strings for each cost more host time than the launch itself.
struct Operand : kernel::OperandView {
  const char *role = "operand"; ///< "in", "out", or a whole description
  int index = -1;               ///< position among the ins or outs; -1 when the role says it all
  BufferHandle buffer = 0;
  MemSpace space = MemSpace::Device;
  char *base = nullptr;

  std::string label() const {
    std::string s = role;
    if (index >= 0) s += " " + std::to_string(index);
    return s + " (" + bufferName(buffer) + ")";
  }
};

// ---- the kernel contract shared with the sim (KernelContract.h), with its messages -------------

inline std::string operandLabel(const Operand &o) { return o.label(); }
// Every name of the contract (KernelContract.h, KernelValidate.h); hip names hide any alike.
using namespace kernel;

// ---- operand -> kernel parameter ---------------------------------------------------------------

inline std::string gKernel; // name of the kernel being dispatched, for the rank message

inline void checkRank(size_t r) {
  if (r > static_cast<size_t>(hipk::kMaxRank))
    throw RuntimeError("unsupported: kernel '" + gKernel + "' on hip: rank " + std::to_string(r) + " exceeds " +
                       std::to_string(hipk::kMaxRank));
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
  for (size_t d = 0; d < o.sizes.size(); ++d)
    p.strides[d + shift] = o.sizes[d] == 1 ? 0 : o.strides[d];
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
  for (size_t d = 0; d < o.sizes.size(); ++d)
    p.strides[d] = o.strides[d];
  return p;
}

} // namespace dq::rt::hipdev
