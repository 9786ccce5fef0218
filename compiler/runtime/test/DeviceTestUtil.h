// Helpers shared by the device-level tests: move HostTensors in and out of device buffers.
#pragma once

#include "dq/runtime/Device.h"
#include "dq/runtime/Error.h"
#include "dq/runtime/HostTensor.h"

#include <gtest/gtest.h>

namespace dq::rt::test {

/// Uploads `t` into a new allocation in `space`; returns a contiguous view of it.
inline BufferView put(Device &d, const HostTensor &t, MemSpace space = MemSpace::Device) {
  BufferHandle h = d.allocate(space, t.bytes.size(), AllocPurpose::Buffer);
  d.upload(h, 0, t.bytes.data(), t.bytes.size());
  return contiguousView(h, t.dtype, t.dims);
}

/// New never-written allocation viewed as dtype[dims].
inline BufferView blank(Device &d, DType t, const std::vector<int64_t> &dims, MemSpace space = MemSpace::Device) {
  int64_t n = 1;
  for (int64_t x : dims)
    n *= x;
  BufferHandle h = d.allocate(space, static_cast<uint64_t>(n) * dtypeSize(t), AllocPurpose::Buffer);
  return contiguousView(h, t, dims);
}

/// Downloads a contiguous view that starts at element 0.
template <typename T> std::vector<T> get(Device &d, const BufferView &v) {
  HostTensor t(v.dtype, v.sizes);
  d.download(t.bytes.data(), v.buffer, 0, t.bytes.size());
  return t.values<T>();
}

/// Uploads `v` as a new dtype[dims] device buffer (T must have the dtype's size).
template <typename T> BufferView in(Device &d, DType t, std::vector<int64_t> dims, const std::vector<T> &v) {
  return put(d, HostTensor::fromValues<T>(t, std::move(dims), v));
}

/// Launches `kernel` into a new outType[outDims] buffer and returns its elements as T.
template <typename T>
std::vector<T> run(Device &d, const std::string &kernel, const std::vector<BufferView> &ins, DType outType,
                   std::vector<int64_t> outDims, const KernelArgs &args = {}) {
  BufferView out = blank(d, outType, outDims);
  d.launch(kernel, ins, {out}, args);
  return get<T>(d, out);
}

/// The RuntimeError message of f(), or "<no error>".
template <typename F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const RuntimeError &e) {
    return e.what();
  }
  return "<no error>";
}

} // namespace dq::rt::test
