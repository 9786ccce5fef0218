// The device interface the VM drives (modelled on a GPU HAL): memory in three spaces, transfers,
// kernel launches on strided views, synchronization and counters.
#pragma once

#include "dq/runtime/Program.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dq::rt {

/// Opaque allocation handle; 0 is never a valid handle. Handles are not reused within a device.
using BufferHandle = uint64_t;

/// Why an allocation is made (only affects counters).
enum class AllocPurpose : uint8_t { Buffer = 0, Pool = 1 };

/// A strided window into one allocation. `offset` and `strides` are in elements of `dtype`
/// counted from the start of the allocation; strides may be negative (reversed slices) or 0
/// (broadcast). Rank is sizes.size() == strides.size(); rank 0 is a single element at `offset`.
struct BufferView {
  BufferHandle buffer = 0;
  DType dtype = DType::F32;
  int64_t offset = 0;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;

  /// Product of sizes (1 for rank 0).
  int64_t numElements() const;
  /// True when the view is row-major contiguous (dims of size 1 may carry any stride; a view of
  /// no element is contiguous whatever its strides).
  bool isContiguous() const;
  /// Smallest and largest element offset the view touches; {0,-1} when it has no elements.
  std::pair<int64_t, int64_t> elementRange() const;
};

/// Row-major contiguous view of a whole allocation starting at element 0.
BufferView contiguousView(BufferHandle buffer, DType dtype, const std::vector<int64_t> &sizes);

/// Kernel attributes from the Kernel instruction: attrs = imm[1..], fattrs = fimm[], scalars =
/// the values of the s[] registers at launch time (see the kernel list in Program.h).
struct KernelArgs {
  std::vector<int64_t> attrs;
  std::vector<double> fattrs;
  std::vector<int64_t> scalars;
};

/// Event counters. Copy kinds count Device::memcpy / copy2D / copyStrided calls; directions
/// count every transfer (copies, upload, download) by where the memory lives: "h" is Host or
/// HostMapped, "d" is Device. Byte counters are in bytes.
struct Counters {
  uint64_t syncs = 0;           ///< synchronize() calls, including those inside readback()
  uint64_t scalarReadbacks = 0; ///< readback() calls
  uint64_t kernelLaunches = 0;  ///< launch() calls (a strided copy is counted as a copy only)
  uint64_t memcpyCopies = 0;    ///< CopyKind::Memcpy copies
  uint64_t copy2dCopies = 0;    ///< CopyKind::Copy2D copies
  uint64_t stridedCopies = 0;   ///< CopyKind::Strided copy kernels
  uint64_t h2dTransfers = 0, d2hTransfers = 0, d2dTransfers = 0, h2hTransfers = 0;
  uint64_t h2dBytes = 0, d2hBytes = 0, d2dBytes = 0, h2hBytes = 0;
  uint64_t allocations = 0;        ///< allocate() calls, all spaces
  uint64_t bytesAllocated = 0;     ///< sum of sizes of Device-space allocations
  uint64_t hostBytesAllocated = 0; ///< sum of sizes of Host and HostMapped allocations
  uint64_t peakDeviceBytes = 0;    ///< max over time of live Device-space bytes
  uint64_t poolBytes = 0;          ///< sum of sizes of AllocPurpose::Pool allocations
  uint64_t hostLoads = 0, hostStores = 0;
  /// Outputs the runtime copied at Return because the returned view was not the buffer the
  /// program allocated through dq.alloc_output (e.g. a view of a graph input). Set by the VM.
  uint64_t outputCopies = 0;
  /// Modelled device time of the run in ns: the sum of DeviceTimeModel's cost of every kernel,
  /// copy, transfer and synchronize (docs/metrics/modelled-device-time.md). Deterministic: equal
  /// for equal programs and inputs, whatever the host. Only `sim` models it; other devices leave 0.
  uint64_t modelledDeviceNs = 0;

  /// (name, value) pairs in a fixed order, for printing and storing.
  std::vector<std::pair<std::string, uint64_t>> items() const;
};

/// What every device implements. All errors are RuntimeError with one line naming the buffer
/// (`buffer #N`) and the problem; the VM prefixes the instruction. Host-side entry points
/// (hostLoad, hostStore) must refuse Device memory; transfer entry points accept any space.
/// Byte offsets and sizes are in bytes.
class Device {
public:
  virtual ~Device() = default;
  /// Short name ("sim", "null", later "hip").
  virtual std::string name() const = 0;

  /// New allocation of `bytes` bytes (0 allowed) in `space`; contents are undefined.
  virtual BufferHandle allocate(MemSpace space, uint64_t bytes, AllocPurpose purpose) = 0;
  /// Ends an allocation's lifetime. Freeing twice or an unknown handle is an error.
  virtual void free(BufferHandle buffer) = 0;
  /// Marks [offset, offset+bytes) dead (a pool region's end of life): later accesses are errors
  /// until discard() revives the range.
  virtual void poison(BufferHandle buffer, uint64_t offset, uint64_t bytes) = 0;
  /// Marks [offset, offset+bytes) alive but never written (a pool region's start of life).
  virtual void discard(BufferHandle buffer, uint64_t offset, uint64_t bytes) = 0;
  /// Size in bytes and space of a live allocation.
  virtual uint64_t bufferBytes(BufferHandle buffer) const = 0;
  virtual MemSpace bufferSpace(BufferHandle buffer) const = 0;

  /// Copies `bytes` from process memory into any space (an h2d transfer for Device memory).
  virtual void upload(BufferHandle dst, uint64_t dstOffset, const void *src, uint64_t bytes) = 0;
  /// Copies `bytes` from any space into process memory (a d2h transfer for Device memory).
  virtual void download(void *dst, BufferHandle src, uint64_t srcOffset, uint64_t bytes) = 0;
  /// One linear transfer between two allocations of any spaces (CopyKind::Memcpy).
  virtual void memcpy(BufferHandle dst, uint64_t dstOffset, BufferHandle src, uint64_t srcOffset, uint64_t bytes) = 0;
  /// `rows` rows of `rowBytes` bytes; row r starts at offset + r*pitch on each side
  /// (CopyKind::Copy2D; pitches are >= rowBytes).
  virtual void copy2D(BufferHandle dst, uint64_t dstOffset, uint64_t dstPitch, BufferHandle src, uint64_t srcOffset,
                      uint64_t srcPitch, uint64_t rowBytes, uint64_t rows) = 0;
  /// General strided copy kernel (CopyKind::Strided); views have equal sizes and dtype.
  virtual void copyStrided(const BufferView &dst, const BufferView &src) = 0;

  /// Runs kernel `kernel` (a name from Program.h) on views; may complete asynchronously.
  virtual void launch(const std::string &kernel, const std::vector<BufferView> &ins,
                      const std::vector<BufferView> &outs, const KernelArgs &args) = 0;
  /// Waits for all launched work.
  virtual void synchronize() = 0;
  /// Synchronizes, then copies `bytes` at `offset` into `dst` (one scalar readback).
  virtual void readback(void *dst, BufferHandle src, uint64_t offset, uint64_t bytes) = 0;
  /// Host CPU load/store of `bytes` bytes; an error when the buffer is Device memory.
  virtual void hostLoad(void *dst, BufferHandle src, uint64_t offset, uint64_t bytes) = 0;
  virtual void hostStore(BufferHandle dst, uint64_t offset, const void *src, uint64_t bytes) = 0;

  /// Counters since construction or the last resetCounters().
  virtual Counters counters() const = 0;
  virtual void resetCounters() = 0;
};

/// Creates a device by name: "sim" (exact precision), "sim-elem" (sim in the element-type
/// precision mode, SimDevice.h), "null", and "hip" in a HIP build. Throws RuntimeError for "hip" (not built into this
/// runtime) and for unknown names, listing the available ones.
std::unique_ptr<Device> createDevice(const std::string &name);
/// Names createDevice accepts.
std::vector<std::string> availableDevices();

/// One device name the runtime defines.
struct DeviceInfo {
  const char *name;
  bool built;   ///< createDevice makes it in this build ("hip" only with DYNQUAL_WITH_HIP)
  bool variant; ///< a dq variant may run on it (dq:PIPELINE@NAME): sim and hip
};
/// Every device name the runtime defines, built here or not, in a fixed order (sim, sim-elem,
/// null, hip): the one list that createDevice, availableDevices, the variant grammar and the help
/// texts read.
const std::vector<DeviceInfo> &deviceRegistry();
/// The registry's names joined for a help text or a message: "sim, sim-elem, null, hip" (with
/// `variantsOnly`, only the devices a variant may name: "sim, hip").
std::string deviceNames(bool variantsOnly = false);

} // namespace dq::rt
