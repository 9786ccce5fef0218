// Device-resident runs: a program whose constants stay on the device across runs, fed with
// inputs that already live on the device and returning outputs that stay there. This is what a
// decode loop needs (present KV of one step is the past KV of the next, with no host round trip).
#pragma once

#include "dq/runtime/Device.h"
#include "dq/runtime/HostTensor.h"
#include "dq/runtime/Program.h"
#include "dq/runtime/Runtime.h"

#include <string>
#include <vector>

namespace dq::rt {

/// A contiguous tensor in one device allocation (Device or HostMapped), starting at byte 0.
struct DeviceTensor {
  BufferHandle buffer = 0;
  DType dtype = DType::F32;
  std::vector<int64_t> dims;
  /// Row-major view of the tensor.
  BufferView view() const { return contiguousView(buffer, dtype, dims); }
  /// Element count times element size.
  uint64_t bytes() const;
};

/// Uploads `t` into a new Device allocation the caller owns (free with device.free).
DeviceTensor uploadTensor(Device &device, const HostTensor &t);

/// Copies a device tensor back to the host (a d2h transfer; the device synchronizes first).
HostTensor downloadTensor(Device &device, const DeviceTensor &t);

/// A program bound to a device with its constants uploaded once and kept until destruction.
class ResidentProgram {
public:
  /// `name` names the program in errors (e.g. the .dqp path). Nothing is uploaded yet: each
  /// constant is uploaded on its first use.
  ResidentProgram(const Program &program, Device &device, std::string name);
  /// Frees the resident constants.
  ~ResidentProgram();
  ResidentProgram(const ResidentProgram &) = delete;
  ResidentProgram &operator=(const ResidentProgram &) = delete;

  /// Runs on device-resident inputs (checked as runProgramOnDevice does). Every output comes
  /// back in a new Device allocation that the caller owns (free with device.free). `info`, when
  /// given, receives the run's counters and timings (outputs empty). With synchronize false the
  /// run returns once its work is queued. Errors are RuntimeError naming the program and
  /// instruction; outputs allocated before the error are freed.
  std::vector<DeviceTensor> run(const std::vector<DeviceTensor> &inputs, RunResult *info = nullptr,
                                bool synchronize = true);

  /// Bytes of the constants uploaded so far.
  uint64_t constantBytes() const { return constants_.bytes; }
  /// Number of constants uploaded so far (one device allocation each).
  size_t constantCount() const { return constants_.buffers.size(); }
  const Program &program() const { return program_; }

private:
  const Program &program_;
  Device &device_;
  std::string name_;
  ResidentConstants constants_;
};

} // namespace dq::rt
