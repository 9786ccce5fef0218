// `sim`: a CPU device with discrete-GPU memory semantics and strict memory checking.
#pragma once

#include "dq/runtime/Device.h"
#include "dq/runtime/DeviceTimeModel.h"

#include <map>

namespace dq::rt {

/// How sim kernels round floats (docs/devices.md, "Precision modes").
///  - Exact: compute in double and round once to the output type, as the CPU reference does; the
///    default, and what makes bit-exact oracles possible.
///  - ElementType: f32, f16 and bf16 compute in fp32 with fp32 accumulation, rounding after every
///    step, as the hip kernels and cuBLAS do; f64 and integers are unchanged. Device name "sim-elem".
enum class SimPrecision { Exact, ElementType };

/// Executes on the CPU, but keeps Device, Host and HostMapped memory distinct the way a discrete
/// GPU does, and checks every access (see docs/devices.md):
///  - hostLoad/hostStore of Device memory is an error ("host load touches device memory");
///  - a kernel or strided copy touching pageable Host memory is an error (only HostMapped memory
///    is visible to device code);
///  - out-of-bounds access, use after free (and after poison()), and reads of never-written
///    bytes are errors. Every byte carries a state: unwritten, written or dead.
///  - device work (kernels, copies) that writes Host or HostMapped memory becomes visible to the
///    host only at the next synchronize() (readback() synchronizes); a hostLoad of such bytes
///    before it is an error ("unsynchronized read ... buffer #N").
/// Kernels compute floats in double and round once to the output type (f16/bf16 to nearest
/// even) in the Exact mode, in fp32 in the ElementType mode; integers wrap to the output width.
/// Every device event also adds its DeviceTimeModel cost to Counters::modelledDeviceNs.
class SimDevice final : public Device {
public:
  explicit SimDevice(SimPrecision precision = SimPrecision::Exact) : precision_(precision) {}
  /// "sim" (Exact) or "sim-elem" (ElementType).
  std::string name() const override { return precision_ == SimPrecision::Exact ? "sim" : "sim-elem"; }
  SimPrecision precision() const { return precision_; }
  BufferHandle allocate(MemSpace space, uint64_t bytes, AllocPurpose purpose) override;
  void free(BufferHandle buffer) override;
  void poison(BufferHandle buffer, uint64_t offset, uint64_t bytes) override;
  void discard(BufferHandle buffer, uint64_t offset, uint64_t bytes) override;
  uint64_t bufferBytes(BufferHandle buffer) const override;
  MemSpace bufferSpace(BufferHandle buffer) const override;
  void upload(BufferHandle dst, uint64_t dstOffset, const void *src, uint64_t bytes) override;
  void download(void *dst, BufferHandle src, uint64_t srcOffset, uint64_t bytes) override;
  void memcpy(BufferHandle dst, uint64_t dstOffset, BufferHandle src, uint64_t srcOffset, uint64_t bytes) override;
  void copy2D(BufferHandle dst, uint64_t dstOffset, uint64_t dstPitch, BufferHandle src, uint64_t srcOffset,
              uint64_t srcPitch, uint64_t rowBytes, uint64_t rows) override;
  void copyStrided(const BufferView &dst, const BufferView &src) override;
  void launch(const std::string &kernel, const std::vector<BufferView> &ins, const std::vector<BufferView> &outs,
              const KernelArgs &args) override;
  void synchronize() override;
  void readback(void *dst, BufferHandle src, uint64_t offset, uint64_t bytes) override;
  void hostLoad(void *dst, BufferHandle src, uint64_t offset, uint64_t bytes) override;
  void hostStore(BufferHandle dst, uint64_t offset, const void *src, uint64_t bytes) override;
  Counters counters() const override { return counters_; }
  void resetCounters() override;

  /// Number of allocations not yet freed (for leak checks in tests).
  size_t liveAllocations() const;

  /// The model behind Counters::modelledDeviceNs (default DeviceTimeModel::h200()); setting it
  /// affects the events that follow.
  void setTimeModel(const DeviceTimeModel &model) { timeModel_ = model; }
  const DeviceTimeModel &timeModel() const { return timeModel_; }

  /// One allocation: bytes plus a per-byte state (kUnwritten, kWritten, kDead).
  struct Allocation {
    MemSpace space = MemSpace::Device;
    uint64_t size = 0;
    bool freed = false;
    std::vector<uint8_t> data;
    std::vector<uint8_t> state;
    /// Byte ranges [begin, end) written by device work since the last synchronize().
    std::vector<std::pair<uint64_t, uint64_t>> pending;
  };
  static constexpr uint8_t kUnwritten = 0, kWritten = 1, kDead = 2;

private:
  Allocation &live(BufferHandle buffer, const char *what);
  const Allocation &live(BufferHandle buffer, const char *what) const;
  void checkRange(const Allocation &a, BufferHandle buffer, uint64_t offset, uint64_t bytes, const char *what) const;
  void checkReadable(const Allocation &a, BufferHandle buffer, uint64_t offset, uint64_t bytes, const char *what) const;
  void markWritten(Allocation &a, uint64_t offset, uint64_t bytes);
  void countTransfer(MemSpace dst, MemSpace src, uint64_t bytes);
  void checkDeviceVisible(BufferHandle buffer, const char *what) const;
  /// Records a device write of [begin, end) into `a` when `a` is host-visible.
  void markDeviceWrite(BufferHandle buffer, Allocation &a, uint64_t begin, uint64_t end);
  void markDeviceWrite(const BufferView &v);

  SimPrecision precision_ = SimPrecision::Exact;
  std::map<BufferHandle, Allocation> allocations_;
  BufferHandle nextHandle_ = 1;
  std::vector<BufferHandle> pendingBuffers_; // allocations with a non-empty `pending`
  uint64_t liveDeviceBytes_ = 0;
  Counters counters_;
  DeviceTimeModel timeModel_ = DeviceTimeModel::h200();
};

} // namespace dq::rt
