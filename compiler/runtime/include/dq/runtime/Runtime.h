// The program VM: runs a Program on a Device. This is the API command-line tools call.
#pragma once

#include "dq/runtime/Device.h"
#include "dq/runtime/HostTensor.h"
#include "dq/runtime/Program.h"

#include <functional>
#include <map>
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

/// Device buffers of a program's constants kept across runs (see dq/runtime/Resident.h). The VM
/// uploads constant K on its first use into buffers[K] and reuses it on later runs; the owner
/// frees the buffers. `bytes` is the sum of their sizes.
struct ResidentConstants {
  std::map<int64_t, BufferHandle> buffers;
  uint64_t bytes = 0;
};

/// Options for one run.
struct RunOptions {
  /// Empty: the runtime allocates Device memory, copies every output back to a HostTensor
  /// (counted as d2h) and frees it. Set: outputs stay in the caller's buffers (RunResult
  /// outputBuffers) and are also copied back only when copyOutputsToHost is true.
  OutputAllocator outputAllocator;
  bool copyOutputsToHost = true;
  /// Names the program in errors (e.g. the .dqp path).
  std::string programName = "<program>";
  /// Set: constants live in these caller-owned device buffers across runs instead of being
  /// uploaded and freed by every run.
  ResidentConstants *residentConstants = nullptr;
  /// False: the run returns once its work is queued, without the final synchronize (executeMs is
  /// then the time to queue it); the caller synchronizes, e.g. through a readback. Only valid
  /// with an outputAllocator and copyOutputsToHost false.
  bool synchronizeAtEnd = true;
};

/// A finished run. Timings are wall-clock milliseconds (std::chrono::steady_clock).
struct RunResult {
  std::vector<HostTensor> outputs;       ///< empty when not copied back
  std::vector<BufferView> outputBuffers; ///< caller-owned buffers (custom allocator only)
  Counters counters;                     ///< device counters accumulated during this run
  double executeMs = 0;                  ///< first instruction to Return, plus a synchronize
  double totalMs = 0;                    ///< including input upload and output download
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

/// Like runProgram, but the inputs are already on the device: each view must be a contiguous
/// view at offset 0 of a live Device or HostMapped allocation, with the dtype, rank and static
/// dims the program declares (errors name the input, as validateInputs does). Nothing is
/// uploaded; the caller keeps ownership of the input buffers. totalMs then covers execution and
/// output download only.
RunResult runProgramOnDevice(const Program &program, Device &device, const std::vector<BufferView> &inputs,
                             const RunOptions &options = {});

} // namespace dq::rt
