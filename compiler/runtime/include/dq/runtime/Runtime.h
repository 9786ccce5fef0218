// The program VM: runs a Program on a Device. This is the API command-line tools call.
#pragma once

#include "dq/runtime/Device.h"
#include "dq/runtime/HostTensor.h"
#include "dq/runtime/Program.h"

#include <functional>
#include <string>
#include <vector>

namespace dq::rt {

/// Request passed to an output allocator: output `index` (declared as `spec`) needs a buffer of
/// `dtype` with `dims` (the precise external shape) and `bytes` bytes.
struct OutputRequest {
  size_t index = 0;
  const TensorSpec *spec = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> dims;
  uint64_t bytes = 0;
};

/// Returns a buffer of at least request.bytes bytes in Device or HostMapped memory of the given
/// device; the caller keeps ownership (the runtime never frees it).
using OutputAllocator = std::function<BufferHandle(Device &, const OutputRequest &)>;

/// Options for one run.
struct RunOptions {
  /// Empty: the runtime allocates Device memory, copies every output back to a HostTensor
  /// (counted as d2h) and frees it. Set: outputs stay in the caller's buffers (RunResult
  /// outputBuffers) and are also copied back only when copyOutputsToHost is true.
  OutputAllocator outputAllocator;
  bool copyOutputsToHost = true;
  /// Names the program in errors (e.g. the .dqp path).
  std::string programName = "<program>";
};

/// A finished run. Timings are wall-clock milliseconds (std::chrono::steady_clock).
struct RunResult {
  std::vector<HostTensor> outputs;          ///< empty when not copied back
  std::vector<BufferView> outputBuffers;    ///< caller-owned buffers (custom allocator only)
  Counters counters;                        ///< device counters accumulated during this run
  double executeMs = 0;                     ///< first instruction to Return, plus a synchronize
  double totalMs = 0;                       ///< including input upload and output download
};

/// Checks `inputs` against program.inputs: count, dtype, rank, and every static dim. Throws
/// RuntimeError naming the input ("input 1 'mask': dtype i64, expected bool").
void validateInputs(const Program &program, const std::vector<HostTensor> &inputs);

/// Runs `program` on `device`: validates the program and inputs, uploads inputs (h2d), executes
/// every instruction, checks ABI casts (CheckShape, AllocOutput static dims, output specs), and
/// returns the outputs. Any failure throws one RuntimeError naming the program and the
/// instruction ("model.dqp: instruction 7 (Kernel 'add') at Add_3: ..."); all buffers the run
/// allocated are released first, and nothing is returned. The run starts with
/// device.resetCounters(), so RunResult::counters covers exactly this run.
RunResult runProgram(const Program &program, Device &device, const std::vector<HostTensor> &inputs,
                     const RunOptions &options = {});

}  // namespace dq::rt
