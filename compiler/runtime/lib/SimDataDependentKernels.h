// Sim kernels of the data-dependent and shape-input ops (internal to dq_runtime).
#pragma once

#include "SimKernels.h"

namespace dq::rt::sim {

using DataDependentKernelFn = void (*)(std::vector<Operand> &, std::vector<Operand> &, const KernelArgs &);

/// The sim implementation of count_nonzero, nonzero, compress, top_k, tile, pad, scatter_nd or
/// scatter_elements (Program.h semantics), or nullptr for any other name. The kernels throw
/// RuntimeError ("kernel 'name': ...") on shape/dtype mismatches, bad attributes, indices out of
/// range, duplicate scatter targets with reduction none, and unwritten or dead reads.
DataDependentKernelFn findDataDependentKernel(const std::string &name);

} // namespace dq::rt::sim
