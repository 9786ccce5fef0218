// sim traps (host access to device memory, out of bounds, use after free, unwritten reads,
// pageable memory in kernels) and counters, through the Device API.
#include "DeviceTestUtil.h"
#include "dq/runtime/NullDevice.h"
#include "dq/runtime/SimDevice.h"

using namespace dq::rt;
using dq::rt::test::blank;
using dq::rt::test::errorOf;
using dq::rt::test::get;
using dq::rt::test::put;

namespace {
HostTensor f32s(std::vector<int64_t> dims, std::vector<float> v) {
  return HostTensor::fromValues<float>(DType::F32, std::move(dims), v);
}
bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }
} // namespace

TEST(SimDevice, HostLoadAndStoreOfDeviceMemoryTrap) {
  SimDevice d;
  BufferView v = put(d, f32s({2}, {1, 2}));
  float x = 0;
  EXPECT_TRUE(
      contains(errorOf([&] { d.hostLoad(&x, v.buffer, 0, 4); }), "host load touches device memory (buffer #1)"));
  EXPECT_TRUE(
      contains(errorOf([&] { d.hostStore(v.buffer, 0, &x, 4); }), "host store touches device memory (buffer #1)"));
  for (MemSpace s : {MemSpace::Host, MemSpace::HostMapped}) {
    BufferView h = put(d, f32s({2}, {1, 2}), s);
    float y = 7;
    d.hostStore(h.buffer, 4, &y, 4);
    d.hostLoad(&x, h.buffer, 4, 4);
    EXPECT_EQ(x, 7.0f);
  }
  EXPECT_EQ(d.counters().hostLoads, 2u);
  EXPECT_EQ(d.counters().hostStores, 2u);
}

TEST(SimDevice, OutOfBoundsAccessTraps) {
  SimDevice d;
  BufferView v = put(d, f32s({4}, {1, 2, 3, 4}));
  BufferView w = blank(d, DType::F32, {4});
  EXPECT_TRUE(contains(errorOf([&] { d.memcpy(w.buffer, 4, v.buffer, 0, 16); }),
                       "out of bounds: memcpy destination bytes [4, 20) of buffer #2 which holds 16 bytes"));
  BufferView over = v;
  over.sizes = {3};
  over.strides = {2}; // touches elements 0, 2, 4: one past the end
  EXPECT_TRUE(contains(errorOf([&] { d.launch("expand", {over}, {blank(d, DType::F32, {3})}, {}); }),
                       "out of bounds: in 0 (buffer #1)"));
  BufferView before = v;
  before.offset = 1;
  before.sizes = {2};
  before.strides = {-1}; // elements 1, 0: fine; offset 0 with stride -1 would be element -1
  BufferView two = blank(d, DType::F32, {2});
  d.launch("expand", {before}, {two}, {});
  EXPECT_EQ(get<float>(d, two), (std::vector<float>{2, 1}));
  before.offset = 0;
  EXPECT_TRUE(contains(errorOf([&] { d.launch("expand", {before}, {two}, {}); }), "out of bounds"));
}

TEST(SimDevice, UseAfterFreeTraps) {
  SimDevice d;
  BufferView v = put(d, f32s({2}, {1, 2}));
  d.free(v.buffer);
  std::vector<float> out(2);
  EXPECT_TRUE(contains(errorOf([&] { d.download(out.data(), v.buffer, 0, 8); }),
                       "use after free: download touches buffer #1 (device, 8 bytes), which was freed"));
  EXPECT_TRUE(contains(errorOf([&] { d.launch("expand", {v}, {blank(d, DType::F32, {2})}, {}); }), "use after free"));
  EXPECT_TRUE(contains(errorOf([&] { d.free(v.buffer); }), "double free of buffer #1"));
}

TEST(SimDevice, PooledRegionUseAfterFreeTraps) {
  SimDevice d;
  BufferHandle pool = d.allocate(MemSpace::Device, 64, AllocPurpose::Pool);
  BufferView region = contiguousView(pool, DType::F32, {4});
  region.offset = 4; // bytes [16, 32)
  d.launch("fill", {}, {region}, {{}, {2.5}, {}});
  BufferView out = blank(d, DType::F32, {4});
  d.launch("expand", {region}, {out}, {});
  EXPECT_EQ(get<float>(d, out), std::vector<float>(4, 2.5f));
  d.poison(pool, 16, 16);
  EXPECT_TRUE(contains(errorOf([&] { d.launch("expand", {region}, {out}, {}); }),
                       "use after free: in 0 (buffer #1) element 4 lies in a deallocated region"));
  EXPECT_TRUE(contains(errorOf([&] { d.launch("fill", {}, {region}, {{}, {1.0}, {}}); }), "use after free"));
  d.discard(pool, 16, 16); // a new region over the same bytes starts unwritten
  EXPECT_TRUE(contains(errorOf([&] { d.launch("expand", {region}, {out}, {}); }),
                       "read of never-written memory: in 0 (buffer #1) element 4 was never written"));
  EXPECT_EQ(d.counters().poolBytes, 64u);
}

TEST(SimDevice, ReadOfNeverWrittenMemoryTraps) {
  SimDevice d;
  BufferView v = blank(d, DType::F32, {2});
  float one = 1;
  d.upload(v.buffer, 0, &one, 4); // element 0 written, element 1 not
  std::vector<float> out(2);
  EXPECT_TRUE(contains(errorOf([&] { d.download(out.data(), v.buffer, 0, 8); }),
                       "read of never-written memory: download reads byte 4 of buffer #1"));
  float x;
  EXPECT_TRUE(contains(errorOf([&] { d.readback(&x, v.buffer, 4, 4); }), "read of never-written memory"));
  d.readback(&x, v.buffer, 0, 4);
  EXPECT_EQ(x, 1.0f);
}

TEST(SimDevice, KernelsCannotTouchPageableHostMemory) {
  SimDevice d;
  BufferView h = put(d, f32s({2}, {1, 2}), MemSpace::Host);
  BufferView m = put(d, f32s({2}, {1, 2}), MemSpace::HostMapped);
  BufferView out = blank(d, DType::F32, {2});
  EXPECT_TRUE(contains(errorOf([&] { d.launch("expand", {h}, {out}, {}); }),
                       "pageable host memory that device code cannot access"));
  EXPECT_TRUE(contains(errorOf([&] { d.copyStrided(out, h); }), "pageable host memory"));
  d.launch("expand", {m}, {out}, {});
  EXPECT_EQ(get<float>(d, out), (std::vector<float>{1, 2}));
}

TEST(SimDevice, CountsEveryCopyKindAndDirection) {
  SimDevice d;
  BufferView dev = put(d, f32s({2, 3}, {1, 2, 3, 4, 5, 6})); // h2d upload: 24 bytes
  BufferView host = blank(d, DType::F32, {2, 3}, MemSpace::Host);
  d.memcpy(host.buffer, 0, dev.buffer, 0, 24); // d2h memcpy
  BufferView dev2 = blank(d, DType::F32, {2, 3});
  d.memcpy(dev2.buffer, 0, host.buffer, 0, 24); // h2d memcpy
  BufferView packed = blank(d, DType::F32, {2, 2});
  d.copy2D(packed.buffer, 0, 8, dev2.buffer, 4, 12, 8, 2); // d2d: rows {2,3},{5,6}
  EXPECT_EQ(get<float>(d, packed), (std::vector<float>{2, 3, 5, 6}));
  BufferView t = blank(d, DType::F32, {3, 2});
  BufferView transposed = dev;
  transposed.sizes = {3, 2};
  transposed.strides = {1, 3};
  d.copyStrided(t, transposed); // d2d strided kernel
  EXPECT_EQ(get<float>(d, t), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  BufferView host2 = blank(d, DType::F32, {2, 3}, MemSpace::Host);
  d.memcpy(host2.buffer, 0, host.buffer, 0, 24); // h2h
  d.launch("add", {dev, dev}, {dev2}, {});
  float x;
  d.readback(&x, dev2.buffer, 0, 4);
  const Counters c = d.counters();
  EXPECT_EQ(c.memcpyCopies, 3u);
  EXPECT_EQ(c.copy2dCopies, 1u);
  EXPECT_EQ(c.stridedCopies, 1u);
  EXPECT_EQ(c.kernelLaunches, 1u);
  EXPECT_EQ(c.scalarReadbacks, 1u);
  EXPECT_EQ(c.syncs, 1u);
  // h2d: upload (24) + memcpy (24); d2h: memcpy (24) + packed and t downloads (16 + 24).
  EXPECT_EQ(c.h2dTransfers, 2u);
  EXPECT_EQ(c.h2dBytes, 48u);
  EXPECT_EQ(c.d2hTransfers, 3u);
  EXPECT_EQ(c.d2hBytes, 64u);
  EXPECT_EQ(c.d2dTransfers, 2u);
  EXPECT_EQ(c.d2dBytes, 16u + 24u);
  EXPECT_EQ(c.h2hTransfers, 1u);
  // Device allocations: dev 24 + dev2 24 + packed 16 + t 24 = 88; host ones 48.
  EXPECT_EQ(c.bytesAllocated, 88u);
  EXPECT_EQ(c.hostBytesAllocated, 48u);
  EXPECT_EQ(c.peakDeviceBytes, 88u);
  d.free(t.buffer);
  d.free(packed.buffer);
  BufferView small = blank(d, DType::F32, {1});
  EXPECT_EQ(d.counters().peakDeviceBytes, 88u); // 48 + 4 live now: the peak stays
  (void)small;
}

TEST(NullDevice, RefusesToExecute) {
  NullDevice d;
  EXPECT_EQ(d.name(), "null");
  EXPECT_TRUE(contains(errorOf([&] { d.allocate(MemSpace::Device, 4, AllocPurpose::Buffer); }),
                       "null device cannot execute: allocate"));
  EXPECT_TRUE(contains(errorOf([&] { d.launch("add", {}, {}, {}); }), "null device cannot execute: launch"));
  EXPECT_TRUE(contains(errorOf([&] { d.synchronize(); }), "null device cannot execute: synchronize"));
  EXPECT_EQ(d.counters().kernelLaunches, 0u);
}

TEST(DeviceFactory, NamesDevicesAndRefusesUnknownOnes) {
  EXPECT_EQ(createDevice("sim")->name(), "sim");
  EXPECT_EQ(createDevice("sim-elem")->name(), "sim-elem");
  EXPECT_EQ(createDevice("null")->name(), "null");
#ifdef DQ_WITH_HIP
  // Built with HIP: "hip" exists (HipDeviceTest covers it); unknown names list it.
  EXPECT_TRUE(
      contains(errorOf([] { createDevice("tpu"); }), "unknown device 'tpu'; available: sim, sim-elem, null, hip"));
#else
  EXPECT_TRUE(contains(errorOf([] { createDevice("hip"); }), "unsupported: device 'hip'"));
  EXPECT_TRUE(contains(errorOf([] { createDevice("tpu"); }), "unknown device 'tpu'; available: sim, sim-elem, null"));
#endif
}

// The registry is the one list: availableDevices is its built part, variants may name sim and hip.
TEST(DeviceFactory, TheRegistryIsTheOneListOfDeviceNames) {
  EXPECT_EQ(deviceNames(), "sim, sim-elem, null, hip");
  EXPECT_EQ(deviceNames(true), "sim, hip");
#ifdef DQ_WITH_HIP
  EXPECT_EQ(availableDevices(), (std::vector<std::string>{"sim", "sim-elem", "null", "hip"}));
#else
  EXPECT_EQ(availableDevices(), (std::vector<std::string>{"sim", "sim-elem", "null"}));
#endif
  for (const auto &d : deviceRegistry())
    if (d.built && std::string(d.name) != "hip") // hip needs a GPU (HipDeviceTest)
      EXPECT_NO_THROW(createDevice(d.name)) << d.name;
}
