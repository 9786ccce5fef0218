// Kernels of the sim device: CPU loops over checked strided operands (internal to dq_runtime).
#pragma once

#include "KernelContract.h"
#include "dq/runtime/Device.h"
#include "dq/runtime/SimDevice.h"

#include <string>
#include <vector>

namespace dq::rt::sim {

/// One kernel operand resolved to sim memory: the view (kernel::OperandView) and where its
/// elements live. `data`/`state` point at the allocation start. Bounds were checked when the
/// operand was built; every element access still checks its byte states (unwritten / dead).
struct Operand : kernel::OperandView {
  uint8_t *data = nullptr;
  uint8_t *state = nullptr;
  size_t elementSize = 4;
  std::string label; ///< "in 1 (buffer #4)" for messages
};

/// True when `name` has a sim implementation.
bool hasKernel(const std::string &name);
/// Runs kernel `name` in `precision` (kernels read it through currentPrecision()); throws RuntimeError ("kernel 'name':
/// ...") on shape/dtype mismatches, dtypes the kernel does not admit ("unsupported: ..."), bad attributes, data errors
/// (integer division by zero, index out of range, reduce_max of an empty extent) and unwritten or dead reads.
void runKernel(const std::string &name, std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args,
               SimPrecision precision = SimPrecision::Exact);
/// Precision of the kernel running on this thread (Exact outside runKernel).
SimPrecision currentPrecision();
/// Element-by-element copy between equal-sized views of one dtype (the strided copy kernel).
void stridedCopy(Operand &dst, const Operand &src);

} // namespace dq::rt::sim
