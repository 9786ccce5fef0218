#pragma once
// Small helpers shared by the op evaluators: axes, integer operands, broadcasting.

#include "dynqual/reference/OpRegistry.h"

#include <cstring>
#include <vector>

namespace dynqual::reference {

/// `axis` in [-rank, rank) mapped to [0, rank); otherwise ctx.fail.
int64_t normalizeAxis(const OpContext& ctx, int64_t axis, int64_t rank);

/// The values of an i32 or i64 tensor (shape, axes, indices operands); any other dtype fails.
std::vector<int64_t> intValues(const OpContext& ctx, const Tensor& t, const char* operand);

/// The single value of a one-element i32/i64 tensor (rank 0 or [1]); otherwise ctx.fail.
int64_t intScalar(const OpContext& ctx, const Tensor& t, const char* operand);

/// Multidirectional (numpy) broadcast of several shapes; ctx.fail when incompatible.
std::vector<int64_t> broadcastShape(const OpContext& ctx, const std::vector<std::vector<int64_t>>& shapes);

/// Element strides of `in` read as a tensor of shape `out` (right-aligned, 0 on broadcast dims).
std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& in, const std::vector<int64_t>& out);

/// Calls f(outIndex, offsets) for every element of `outDims` in row-major order, where
/// offsets[k] is the element offset into operand k given by strides[k].
template <typename F>
void forEachBroadcast(const std::vector<int64_t>& outDims, const std::vector<std::vector<int64_t>>& strides, F&& f) {
  const int64_t n = shapeNumel(outDims);
  const std::size_t rank = outDims.size();
  std::vector<int64_t> idx(rank, 0);
  std::vector<int64_t> offsets(strides.size(), 0);
  for (int64_t o = 0; o < n; ++o) {
    f(o, offsets);
    // Odometer step: bump the last index, carry leftward, and keep offsets in sync.
    for (std::size_t d = rank; d-- > 0;) {
      ++idx[d];
      for (std::size_t k = 0; k < strides.size(); ++k)
        offsets[k] += strides[k][d];
      if (idx[d] < outDims[d])
        break;
      for (std::size_t k = 0; k < strides.size(); ++k)
        offsets[k] -= strides[k][d] * idx[d];
      idx[d] = 0;
    }
  }
}

/// Copies element `from` of `src` to element `to` of `dst` (same dtype).
inline void copyElement(const Tensor& src, int64_t from, Tensor& dst, int64_t to) {
  std::memcpy(dst.elementPtr(to), src.elementPtr(from), src.elementSize());
}

} // namespace dynqual::reference
