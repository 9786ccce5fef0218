#pragma once
// Conversion between the harness tensor and the runtime's host tensor (same codes, same bytes).
#include "dq/runtime/HostTensor.h"
#include "dynqual/tensor/Tensor.h"

namespace dynqual::run {

/// Copies a harness tensor into a runtime host tensor. Never throws for supported dtypes.
dq::rt::HostTensor toHostTensor(const Tensor& t);
/// Copies a runtime host tensor into a harness tensor. Throws std::runtime_error when the
/// runtime dtype is not one the harness supports.
Tensor fromHostTensor(const dq::rt::HostTensor& t);

} // namespace dynqual::run
