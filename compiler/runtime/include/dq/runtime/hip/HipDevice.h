// The `hip` device: HIP runtime and HIP kernels on a GPU (ROCm on AMD; on NVIDIA the same source
// compiled by nvcc through dq/runtime/hip/HipCompat.h). Built only with DYNQUAL_WITH_HIP=ON, which
// defines DQ_WITH_HIP; see docs/devices.md.
#pragma once

#include "dq/runtime/Device.h"

#include <memory>
#include <string>

namespace dq::rt {

/// True when a GPU is usable by the hip device in this process; otherwise false with `reason`
/// set to one line ("no GPU: cudaGetDeviceCount: no CUDA-capable device is detected").
bool hipDeviceAvailable(std::string *reason);

/// The GPU the hip device runs on ("NVIDIA H200, sm_90, 132 SMs"); "" when none.
std::string hipDeviceDescription();

/// A new hip device on GPU 0 with its own stream. Throws RuntimeError when no GPU is usable.
/// Semantics are the sim's (docs/devices.md) except that poison/discard only check bounds (byte
/// states are not tracked on the GPU) and reductions accumulate in fp32.
std::unique_ptr<Device> createHipDevice();

} // namespace dq::rt
