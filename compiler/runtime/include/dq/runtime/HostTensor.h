// A dense row-major tensor in ordinary process memory: how inputs enter and outputs leave a run.
#pragma once

#include "dq/runtime/Program.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace dq::rt {

/// Dense row-major tensor owned by the caller. `bytes.size()` is numElements() * dtypeSize(dtype);
/// f16/bf16 elements are stored as their 16-bit patterns, bool as one byte (0 or 1).
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;

  HostTensor() = default;
  /// Zero-filled tensor. Throws RuntimeError on a negative dim or a size overflowing 2^63 bytes.
  HostTensor(DType dtype, std::vector<int64_t> dims);

  /// Builds a tensor from typed values; throws RuntimeError when sizeof(T) differs from the
  /// dtype's size or the value count differs from the product of dims.
  template <typename T>
  static HostTensor fromValues(DType dtype, std::vector<int64_t> dims, const std::vector<T> &values) {
    HostTensor t(dtype, std::move(dims));
    t.checkAccess(sizeof(T), values.size());
    if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    return t;
  }

  /// Copies the elements out as T; throws RuntimeError when sizeof(T) differs from the dtype's.
  template <typename T> std::vector<T> values() const {
    checkAccess(sizeof(T), static_cast<size_t>(numElements()));
    std::vector<T> out(static_cast<size_t>(numElements()));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }

  /// Product of dims (1 for rank 0).
  int64_t numElements() const;
  /// "f32[2,3]"-style description for messages.
  std::string describe() const;

private:
  void checkAccess(size_t elementSize, size_t count) const;
};

/// Product of dims; throws RuntimeError naming `what` on a negative dim or int64 overflow.
int64_t checkedNumElements(const std::vector<int64_t> &dims, const std::string &what);
/// "[2,?,3]"-style rendering of dims (-1 printed as ?).
std::string formatDims(const std::vector<int64_t> &dims);

} // namespace dq::rt
