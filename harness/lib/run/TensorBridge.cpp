#include "dynqual/run/TensorBridge.h"

namespace dynqual::run {

dq::rt::HostTensor toHostTensor(const Tensor& t) {
  dq::rt::HostTensor h;
  h.dtype = static_cast<dq::rt::DType>(static_cast<int32_t>(t.dtype()));
  h.dims = t.dims();
  h.bytes = t.bytes();
  return h;
}

Tensor fromHostTensor(const dq::rt::HostTensor& t) {
  return Tensor(dtypeFromOnnx(static_cast<int32_t>(t.dtype)), t.dims, t.bytes);
}

} // namespace dynqual::run
