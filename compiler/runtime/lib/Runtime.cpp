// The program VM's driver: checks a program and its inputs, uploads them, runs the instructions
// (VmExec.cpp) on a Device and reads the outputs back.
#include "dq/runtime/Runtime.h"

#include "Vm.h"

#include "dq/runtime/Error.h"
#include "dq/runtime/ProgramCheck.h"

#include <chrono>
#include <new>

namespace dq::rt {

void validateInputs(const Program &program, const std::vector<HostTensor> &inputs) {
  if (inputs.size() != program.inputs.size())
    throw RuntimeError("wrong input count: got " + std::to_string(inputs.size()) + ", the program takes " +
                       std::to_string(program.inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec &spec = program.inputs[i];
    const HostTensor &t = inputs[i];
    const std::string name = "input " + std::to_string(i) + " '" + spec.name + "'";
    if (t.dtype != spec.dtype)
      throw RuntimeError(name + ": dtype " + dtypeName(t.dtype) + ", expected " + dtypeName(spec.dtype));
    if (t.dims.size() != spec.dims.size())
      throw RuntimeError(name + ": rank " + std::to_string(t.dims.size()) + " " + formatDims(t.dims) +
                         ", expected rank " + std::to_string(spec.dims.size()) + " " + formatDims(spec.dims));
    for (size_t d = 0; d < t.dims.size(); ++d)
      if (spec.dims[d] >= 0 && t.dims[d] != spec.dims[d])
        throw RuntimeError(name + ": dim " + std::to_string(d) + " is " + std::to_string(t.dims[d]) + ", expected " +
                           std::to_string(spec.dims[d]) + " (shape " + formatDims(t.dims) + " vs " +
                           formatDims(spec.dims) + ")");
    int64_t n = checkedNumElements(t.dims, name);
    if (t.bytes.size() != static_cast<uint64_t>(n) * dtypeSize(t.dtype))
      throw RuntimeError(name + ": holds " + std::to_string(t.bytes.size()) + " bytes, " + t.describe() + " needs " +
                         std::to_string(n * static_cast<int64_t>(dtypeSize(t.dtype))));
  }
}

namespace vm {

RunResult Vm::run(const std::vector<HostTensor> &inputs) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  for (size_t i = 0; i < inputs.size(); ++i) {
    try {
      const uint64_t bytes = inputs[i].bytes.size();
      BufferHandle h = allocOwned(MemSpace::Device, bytes, AllocPurpose::Buffer);
      dev_.upload(h, 0, inputs[i].bytes.data(), bytes);
      inputViews_.push_back(contiguousView(h, inputs[i].dtype, inputs[i].dims));
      inputBytes_.push_back(bytes);
    } catch (const RuntimeError &e) {
      throw RuntimeError("uploading input " + std::to_string(i) + " '" + p_.inputs[i].name + "': " + e.what());
    }
  }
  return execute(t0);
}

RunResult Vm::runOnDevice(const std::vector<BufferView> &inputs) {
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputViews_.push_back(inputs[i]);
    inputBytes_.push_back(static_cast<uint64_t>(inputs[i].numElements()) * dtypeSize(inputs[i].dtype));
  }
  return execute(t0);
}

RunResult Vm::execute(std::chrono::steady_clock::time_point t0) {
  using Clock = std::chrono::steady_clock;
  RunResult result;
  s_.assign(static_cast<size_t>(p_.numScalarRegs), 0);
  sset_.assign(static_cast<size_t>(p_.numScalarRegs), false);
  b_.assign(static_cast<size_t>(p_.numBufferRegs), Reg{});
  outputs_.assign(p_.outputs.size(), OutputSlot{});
  const auto t1 = Clock::now();
  for (current_ = 0; current_ < p_.code.size() && !returned; ++current_) {
    try {
      exec(current_, p_.code[current_]);
    } catch (const RuntimeError &e) {
      throw RuntimeError(describeInstr(p_, current_) + ": " + e.what());
    } catch (const std::bad_alloc &) {
      throw RuntimeError(describeInstr(p_, current_) + ": out of host memory");
    }
  }
  if (!returned) throw RuntimeError("program ended without Return");
  const bool hostCopies = !opt_.outputAllocator || opt_.copyOutputsToHost;
  if (opt_.synchronizeAtEnd || hostCopies) dev_.synchronize();
  const auto t2 = Clock::now();
  for (size_t i = 0; i < returned_.size(); ++i) {
    const BufferView &v = returned_[i];
    if (opt_.outputAllocator) result.outputBuffers.push_back(v);
    if (!opt_.outputAllocator || opt_.copyOutputsToHost) {
      HostTensor t(v.dtype, v.sizes);
      try {
        dev_.download(t.bytes.data(), v.buffer, 0, t.bytes.size());
      } catch (const RuntimeError &e) {
        throw RuntimeError("reading back output " + std::to_string(i) + " '" + p_.outputs[i].name + "': " + e.what());
      }
      result.outputs.push_back(std::move(t));
    }
  }
  releaseAll();
  result.counters = dev_.counters();
  result.counters.outputCopies = outputCopies_;
  const auto t3 = Clock::now();
  result.executeMs = std::chrono::duration<double, std::milli>(t2 - t1).count();
  result.totalMs = std::chrono::duration<double, std::milli>(t3 - t0).count();
  return result;
}

} // namespace vm

RunResult runProgramOnDevice(const Program &program, Device &device, const std::vector<BufferView> &inputs,
                             const RunOptions &options) {
  const std::string &where = options.programName;
  validateProgram(program, where);
  if (inputs.size() != program.inputs.size())
    throw RuntimeError(where + ": wrong input count: got " + std::to_string(inputs.size()) + ", the program takes " +
                       std::to_string(program.inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec &spec = program.inputs[i];
    const BufferView &v = inputs[i];
    const std::string name = where + ": device input " + std::to_string(i) + " '" + spec.name + "'";
    if (v.dtype != spec.dtype)
      throw RuntimeError(name + ": dtype " + dtypeName(v.dtype) + ", expected " + dtypeName(spec.dtype));
    bool match = v.sizes.size() == spec.dims.size();
    for (size_t d = 0; match && d < v.sizes.size(); ++d)
      match = spec.dims[d] < 0 || spec.dims[d] == v.sizes[d];
    if (!match)
      throw RuntimeError(name + ": shape " + formatDims(v.sizes) + " does not match the declared " +
                         formatDims(spec.dims));
    if (v.offset != 0 || !v.isContiguous())
      throw RuntimeError(name + ": must be a contiguous view at offset 0 (offset " + std::to_string(v.offset) +
                         ", strides " + formatDims(v.strides) + ")");
    if (device.bufferSpace(v.buffer) == MemSpace::Host)
      throw RuntimeError(name + ": buffer #" + std::to_string(v.buffer) +
                         " is pageable host memory; kernels need device or host-mapped memory");
    const uint64_t need = static_cast<uint64_t>(v.numElements()) * dtypeSize(v.dtype);
    if (device.bufferBytes(v.buffer) < need)
      throw RuntimeError(name + ": buffer #" + std::to_string(v.buffer) + " has " +
                         std::to_string(device.bufferBytes(v.buffer)) + " bytes, " + dtypeName(v.dtype) +
                         formatDims(v.sizes) + " needs " + std::to_string(need));
  }
  device.resetCounters();
  vm::Vm vm(program, device, options);
  try {
    return vm.runOnDevice(inputs);
  } catch (const RuntimeError &e) {
    throw RuntimeError(where + ": " + e.what());
  }
}

RunResult runProgram(const Program &program, Device &device, const std::vector<HostTensor> &inputs,
                     const RunOptions &options) {
  const std::string &where = options.programName;
  validateProgram(program, where);
  try {
    validateInputs(program, inputs);
  } catch (const RuntimeError &e) {
    throw RuntimeError(where + ": " + e.what());
  }
  device.resetCounters();
  vm::Vm vm(program, device, options);
  try {
    return vm.run(inputs);
  } catch (const RuntimeError &e) {
    throw RuntimeError(where + ": " + e.what());
  }
}

} // namespace dq::rt
