// The modelled device time: hand-computed costs of single events with round constants, the sim
// device's counter, and that it depends only on the program (equal runs, more kernels cost more).
#include "DeviceTestUtil.h"
#include "TestPrograms.h"
#include "dq/runtime/DeviceTimeModel.h"
#include "dq/runtime/NullDevice.h"
#include "dq/runtime/Runtime.h"
#include "dq/runtime/SimDevice.h"

using namespace dq::rt;
using dq::rt::test::blank;
using dq::rt::test::Builder;
using dq::rt::test::put;

namespace {

// Round constants, so every expected value below is a hand calculation.
DeviceTimeModel roundModel() {
  DeviceTimeModel m;
  m.kernelLaunchUs = 2;      // 2000 ns per launch
  m.deviceMemoryGBps = 1000; // 1e12 bytes/s: 1000 bytes per ns
  for (double &r : m.vectorTflops)
    r = 1; // 1000 operations per ns
  for (double &r : m.matmulTflops)
    r = 1;
  m.pinnedLinkGBps = 50; // 50 bytes per ns
  m.pinnedLatencyUs = 3;
  m.pageableLinkGBps = 10; // 10 bytes per ns
  m.pageableLatencyUs = 10;
  m.d2dCopyGBps = 500; // 500 bytes per ns
  m.d2dLatencyUs = 1;
  m.synchronizeUs = 4;
  return m;
}

BufferView f32View(BufferHandle h, std::vector<int64_t> dims) { return contiguousView(h, DType::F32, dims); }

// y = x + x; `extraKernel` launches the same add a second time.
Program addProgram(bool extraKernel) {
  Builder b;
  b.addInput("x", DType::F32, {1000});
  b.addOutput("y", DType::F32, {1000});
  int32_t x = b.input(0);
  int32_t y = b.allocOutput(0, DType::F32, {b.index(1000)}, {1000});
  b.kernel("add", {x, x}, {y});
  if (extraKernel) b.kernel("add", {x, x}, {y});
  b.ret({y});
  return b.program;
}

std::vector<HostTensor> addInputs() {
  return {HostTensor::fromValues<float>(DType::F32, {1000}, std::vector<float>(1000, 1.5f))};
}

} // namespace

TEST(DeviceTimeModel, ElementwiseLaunchIsMemoryBound) {
  // add on two f32[1000] into f32[1000]: 3 views x 4000 bytes = 12000 bytes at 1000 bytes/ns = 12 ns;
  // 1000 operations at 1000/ns = 1 ns; roofline max = 12 ns; plus the 2000 ns launch = 2012 ns.
  DeviceTimeModel m = roundModel();
  BufferView a = f32View(1, {1000}), b = f32View(2, {1000}), out = f32View(3, {1000});
  EXPECT_EQ(kernelFlops("add", {a, b}, {out}, {}), 1000.0);
  EXPECT_EQ(m.launchNs("add", {a, b}, {out}, {}), 2012u);
}

TEST(DeviceTimeModel, MatmulIsComputeBound) {
  // a f32[64,128] x b f32[128,32] -> f32[64,32]: 2*M*N*K = 2*64*32*128 = 524288 operations at
  // 1000/ns = 524.288 ns; bytes (8192 + 4096 + 2048) * 4 = 57344 at 1000 bytes/ns = 57.344 ns; max =
  // 524.288; plus 2000 = 2524.288, rounded to 2524 ns.
  DeviceTimeModel m = roundModel();
  BufferView a = f32View(1, {64, 128}), b = f32View(2, {128, 32}), out = f32View(3, {64, 32});
  EXPECT_EQ(kernelFlops("matmul", {a, b}, {out}, {}), 524288.0);
  EXPECT_EQ(m.launchNs("matmul", {a, b}, {out}, {}), 2524u);
}

TEST(DeviceTimeModel, BroadcastDimsAreReadOnceAndCopiesCountNoFlops) {
  // expand of f32[1,1000] viewed as [50,1000] with stride 0 on dim 0: the input holds 1000
  // distinct elements (4000 bytes), the output 50000 (200000 bytes): 204000 bytes at 1000
  // bytes/ns = 204 ns of memory, no operations, plus 2000 = 2204 ns. Counting the broadcast input
  // as 50000 elements would give 2000 + 400 = 2400.
  DeviceTimeModel m = roundModel();
  BufferView in = f32View(1, {1000});
  in.sizes = {50, 1000};
  in.strides = {0, 1};
  BufferView out = f32View(2, {50, 1000});
  EXPECT_EQ(distinctElements(in), 1000u);
  EXPECT_EQ(kernelFlops("expand", {in}, {out}, {}), 0.0);
  EXPECT_EQ(m.launchNs("expand", {in}, {out}, {}), 2204u);
}

TEST(DeviceTimeModel, CopiesByDirection) {
  DeviceTimeModel m = roundModel();
  // h2d from pinned memory, 1e6 bytes: 3000 ns + 1e6 / 50 GB/s = 3000 + 20000 = 23000 ns.
  EXPECT_EQ(m.copyNs(MemSpace::Device, MemSpace::HostMapped, 1000000), 23000u);
  // d2h into pageable memory, 4000 bytes: 10000 + 4000 / 10 GB/s = 10000 + 400 = 10400 ns.
  EXPECT_EQ(m.copyNs(MemSpace::Host, MemSpace::Device, 4000), 10400u);
  // d2d, 4000 bytes: 1000 + 4000 / 500 GB/s = 1000 + 8 = 1008 ns.
  EXPECT_EQ(m.copyNs(MemSpace::Device, MemSpace::Device, 4000), 1008u);
  // host to host: no device work.
  EXPECT_EQ(m.copyNs(MemSpace::Host, MemSpace::HostMapped, 4000), 0u);
  // strided d2d, 4000 bytes: 2000 launch + (4000 read + 4000 written) / 1000 bytes/ns = 2008 ns;
  // from host-mapped memory the read crosses the link: 2000 + 4000 / 50 + 4 = 2084 ns.
  EXPECT_EQ(m.stridedCopyNs(MemSpace::Device, MemSpace::Device, 4000), 2008u);
  EXPECT_EQ(m.stridedCopyNs(MemSpace::Device, MemSpace::HostMapped, 4000), 2084u);
  // upload of 4000 bytes of process memory into the device: pageable, 10400 ns; into host memory 0.
  EXPECT_EQ(m.hostTransferNs(MemSpace::Device, 4000), 10400u);
  EXPECT_EQ(m.hostTransferNs(MemSpace::HostMapped, 4000), 0u);
  EXPECT_EQ(m.synchronizeNs(), 4000u);
}

TEST(DeviceTimeModel, SimDeviceAccumulatesEveryEvent) {
  SimDevice d;
  d.setTimeModel(roundModel());
  BufferView x = put(d, HostTensor::fromValues<float>(DType::F32, {1000}, std::vector<float>(1000, 2.0f)));
  EXPECT_EQ(d.counters().modelledDeviceNs, 10400u); // upload of 4000 bytes: 10000 + 400
  BufferView y = blank(d, DType::F32, {1000});
  d.launch("add", {x, x}, {y}, {}); // 2012, as ElementwiseLaunchIsMemoryBound
  BufferView z = blank(d, DType::F32, {1000});
  d.memcpy(z.buffer, 0, y.buffer, 0, 4000); // d2d 1008
  d.synchronize();                          // 4000
  EXPECT_EQ(d.counters().modelledDeviceNs, 10400u + 2012u + 1008u + 4000u);
  auto item = [&] {
    for (const auto &[name, value] : d.counters().items())
      if (name == "modelled_device_ns") return value;
    return uint64_t{0};
  };
  EXPECT_EQ(item(), 17420u);
  d.resetCounters();
  EXPECT_EQ(d.counters().modelledDeviceNs, 0u);
}

TEST(DeviceTimeModel, EqualRunsGiveEqualTimesAndAnotherKernelCostsMore) {
  auto modelled = [](bool extraKernel) {
    SimDevice d;
    d.setTimeModel(roundModel());
    RunResult r = runProgram(addProgram(extraKernel), d, addInputs(), {});
    return r.counters.modelledDeviceNs;
  };
  uint64_t first = modelled(false), second = modelled(false), more = modelled(true);
  EXPECT_GT(first, 0u);
  EXPECT_EQ(first, second);
  // The second add costs 2012 ns (as ElementwiseLaunchIsMemoryBound); nothing else changes.
  EXPECT_EQ(more - first, 2012u);
}

TEST(DeviceTimeModel, OnlyTheSimModelsIt) {
  NullDevice n;
  EXPECT_EQ(n.counters().modelledDeviceNs, 0u);
}
