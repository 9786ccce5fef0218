// `null`: the smallest possible device. It executes nothing; it shows what a device implements.
#pragma once

#include "dq/runtime/Device.h"

namespace dq::rt {

/// Skeleton for new devices (e.g. `hip`). A real device must provide, per Device.h:
///  - memory: allocate/free in Device, Host (pageable) and HostMapped (pinned, device-visible)
///    spaces; poison/discard may be no-ops on hardware (they exist for checking devices);
///  - transfers: upload/download (process memory <-> any space), memcpy, copy2D (pitched rows),
///    copyStrided (a strided copy kernel), each counted by kind and direction in Counters;
///  - launch: every kernel named in Program.h, for every dtype, on strided views with negative
///    and zero strides and numpy broadcasting;
///  - synchronize and readback (a synchronized scalar read), counted;
///  - hostLoad/hostStore that refuse Device memory.
/// The conformance suite (compiler/runtime/test/DeviceConformanceTest.cpp) states the expected
/// behaviour; instantiate it for the new device. This device reports its name and zero counters;
/// every other call throws RuntimeError("null device cannot execute: <call>").
class NullDevice final : public Device {
public:
  std::string name() const override { return "null"; }
  BufferHandle allocate(MemSpace, uint64_t, AllocPurpose) override { fail("allocate"); }
  void free(BufferHandle) override { fail("free"); }
  void poison(BufferHandle, uint64_t, uint64_t) override { fail("poison"); }
  void discard(BufferHandle, uint64_t, uint64_t) override { fail("discard"); }
  uint64_t bufferBytes(BufferHandle) const override { fail("bufferBytes"); }
  MemSpace bufferSpace(BufferHandle) const override { fail("bufferSpace"); }
  void upload(BufferHandle, uint64_t, const void *, uint64_t) override { fail("upload"); }
  void download(void *, BufferHandle, uint64_t, uint64_t) override { fail("download"); }
  void memcpy(BufferHandle, uint64_t, BufferHandle, uint64_t, uint64_t) override { fail("memcpy"); }
  void copy2D(BufferHandle, uint64_t, uint64_t, BufferHandle, uint64_t, uint64_t, uint64_t, uint64_t) override {
    fail("copy2D");
  }
  void copyStrided(const BufferView &, const BufferView &) override { fail("copyStrided"); }
  void launch(const std::string &, const std::vector<BufferView> &, const std::vector<BufferView> &,
              const KernelArgs &) override {
    fail("launch");
  }
  void synchronize() override { fail("synchronize"); }
  void readback(void *, BufferHandle, uint64_t, uint64_t) override { fail("readback"); }
  void hostLoad(void *, BufferHandle, uint64_t, uint64_t) override { fail("hostLoad"); }
  void hostStore(BufferHandle, uint64_t, const void *, uint64_t) override { fail("hostStore"); }
  Counters counters() const override { return {}; }
  void resetCounters() override {}

private:
  [[noreturn]] static void fail(const char *call);
};

} // namespace dq::rt
