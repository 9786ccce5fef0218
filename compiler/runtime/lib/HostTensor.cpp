// HostTensor construction and shape helpers.
#include "dq/runtime/HostTensor.h"

#include "dq/runtime/Error.h"

#include <limits>

namespace dq::rt {

int64_t checkedNumElements(const std::vector<int64_t> &dims, const std::string &what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw RuntimeError(what + ": negative dim in " + formatDims(dims));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw RuntimeError(what + ": element count of " + formatDims(dims) + " overflows int64");
    n *= d;
  }
  return n;
}

std::string formatDims(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += dims[i] < 0 ? std::string("?") : std::to_string(dims[i]);
  }
  return s + "]";
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> dims) : dtype(dtype), dims(std::move(dims)) {
  int64_t n = checkedNumElements(this->dims, "host tensor");
  size_t es = dtypeSize(dtype);
  if (es == 0) throw RuntimeError("host tensor: unsupported dtype " + dtypeName(dtype));
  if (n > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(es))
    throw RuntimeError("host tensor: byte size of " + formatDims(this->dims) + " overflows");
  bytes.assign(static_cast<size_t>(n) * es, 0);
}

int64_t HostTensor::numElements() const { return checkedNumElements(dims, "host tensor"); }

std::string HostTensor::describe() const { return dtypeName(dtype) + formatDims(dims); }

void HostTensor::checkAccess(size_t elementSize, size_t count) const {
  if (elementSize != dtypeSize(dtype))
    throw RuntimeError("host tensor " + describe() + ": element type of size " + std::to_string(elementSize) +
                       " does not match " + dtypeName(dtype));
  if (count != static_cast<size_t>(numElements()) || bytes.size() != count * elementSize)
    throw RuntimeError("host tensor " + describe() + ": holds " + std::to_string(bytes.size()) + " bytes, expected " +
                       std::to_string(count) + " elements");
}

} // namespace dq::rt
