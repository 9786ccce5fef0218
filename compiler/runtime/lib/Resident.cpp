// Device-resident runs (dq/runtime/Resident.h): constants kept across runs, inputs and outputs
// left on the device.
#include "dq/runtime/Resident.h"

#include "dq/runtime/Error.h"

namespace dq::rt {

uint64_t DeviceTensor::bytes() const {
  return static_cast<uint64_t>(checkedNumElements(dims, "device tensor")) * dtypeSize(dtype);
}

DeviceTensor uploadTensor(Device &device, const HostTensor &t) {
  DeviceTensor d;
  d.dtype = t.dtype;
  d.dims = t.dims;
  d.buffer = device.allocate(MemSpace::Device, t.bytes.size(), AllocPurpose::Buffer);
  try {
    device.upload(d.buffer, 0, t.bytes.data(), t.bytes.size());
  } catch (...) {
    device.free(d.buffer);
    throw;
  }
  return d;
}

HostTensor downloadTensor(Device &device, const DeviceTensor &t) {
  HostTensor h(t.dtype, t.dims);
  device.download(h.bytes.data(), t.buffer, 0, h.bytes.size());
  return h;
}

ResidentProgram::ResidentProgram(const Program &program, Device &device, std::string name)
    : program_(program), device_(device), name_(std::move(name)) {}

ResidentProgram::~ResidentProgram() {
  for (const auto &[index, buffer] : constants_.buffers) {
    try {
      device_.free(buffer);
    } catch (const std::exception &) {
      // A destructor must not throw; the device already reported its state.
    }
  }
}

std::vector<DeviceTensor> ResidentProgram::run(const std::vector<DeviceTensor> &inputs, RunResult *info,
                                               bool synchronize) {
  std::vector<DeviceTensor> outputs(program_.outputs.size());
  RunOptions opts;
  opts.programName = name_;
  opts.residentConstants = &constants_;
  opts.copyOutputsToHost = false;
  opts.synchronizeAtEnd = synchronize;
  opts.outputAllocator = [&outputs](Device &dev, const OutputRequest &req) {
    BufferHandle h = dev.allocate(MemSpace::Device, req.bytes, AllocPurpose::Buffer);
    outputs[req.index] = DeviceTensor{h, req.dtype, req.dims};
    return h;
  };
  std::vector<BufferView> views;
  views.reserve(inputs.size());
  for (const DeviceTensor &t : inputs)
    views.push_back(t.view());
  try {
    RunResult r = runProgramOnDevice(program_, device_, views, opts);
    if (info) *info = std::move(r);
  } catch (...) {
    for (const DeviceTensor &t : outputs)
      if (t.buffer) {
        try {
          device_.free(t.buffer);
        } catch (const std::exception &) {
        }
      }
    throw;
  }
  return outputs;
}

} // namespace dq::rt
