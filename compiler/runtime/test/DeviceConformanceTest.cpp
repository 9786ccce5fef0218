// Device conformance: behaviour every device must show, written once and instantiated per device.
//
// The suite is compiled twice: into dq_runtime_tests for "sim", and, with DYNQUAL_WITH_HIP, into
// dq_runtime_hip_tests for "hip" (DQ_CONFORMANCE_HIP), whose main() exits 77 (ctest: skipped)
// when no GPU is present. To add a device: make createDevice return it and instantiate here.
#include "DeviceTestUtil.h"
#include "TestPrograms.h"
#include "dq/runtime/Runtime.h"

using namespace dq::rt;
using dq::rt::test::blank;
using dq::rt::test::errorOf;
using dq::rt::test::get;
using dq::rt::test::put;

class DeviceConformance : public testing::TestWithParam<std::string> {
protected:
  void SetUp() override { device = createDevice(GetParam()); }
  std::unique_ptr<Device> device;
};

TEST_P(DeviceConformance, UploadDownloadRoundTripsInEverySpace) {
  for (MemSpace s : {MemSpace::Device, MemSpace::Host, MemSpace::HostMapped}) {
    BufferView v = put(*device, HostTensor::fromValues<int32_t>(DType::I32, {3}, {7, -8, 9}), s);
    EXPECT_EQ(get<int32_t>(*device, v), (std::vector<int32_t>{7, -8, 9}));
    EXPECT_EQ(device->bufferSpace(v.buffer), s);
    EXPECT_EQ(device->bufferBytes(v.buffer), 12u);
    device->free(v.buffer);
  }
}

TEST_P(DeviceConformance, TransfersAreCountedByKindAndDirection) {
  Device &d = *device;
  BufferView a = put(d, HostTensor::fromValues<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  d.resetCounters();
  BufferView b = blank(d, DType::F32, {2, 3});
  d.memcpy(b.buffer, 0, a.buffer, 0, 24);
  BufferView cols = blank(d, DType::F32, {2, 1});
  d.copy2D(cols.buffer, 0, 4, a.buffer, 8, 12, 4, 2); // last column: 3, 6
  BufferView rev = blank(d, DType::F32, {2, 3});
  BufferView flipped = a;
  flipped.offset = 5;
  flipped.strides = {-3, -1}; // [[6,5,4],[3,2,1]]
  d.copyStrided(rev, flipped);
  d.synchronize();
  const Counters c = d.counters();
  EXPECT_EQ(c.memcpyCopies, 1u);
  EXPECT_EQ(c.copy2dCopies, 1u);
  EXPECT_EQ(c.stridedCopies, 1u);
  EXPECT_EQ(c.d2dTransfers, 3u);
  EXPECT_EQ(c.d2dBytes, 24u + 8u + 24u);
  EXPECT_EQ(c.syncs, 1u);
  EXPECT_EQ(get<float>(d, b), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(get<float>(d, cols), (std::vector<float>{3, 6}));
  EXPECT_EQ(get<float>(d, rev), (std::vector<float>{6, 5, 4, 3, 2, 1}));
}

// The views the compiler makes (docs/passes/convert-onnx.md#views): a transposed view, a row
// whose unit dim carries an arbitrary stride, and a view that reaches past its allocation.
TEST_P(DeviceConformance, StridedCopiesOfCompilerViews) {
  Device &d = *device;
  // a = [[1,2,3],[4,5,6]]; its transpose is the view with strides [1, 3].
  BufferView a = put(d, HostTensor::fromValues<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  BufferView t = a;
  t.sizes = {3, 2};
  t.strides = {1, 3};
  BufferView tc = blank(d, DType::F32, {3, 2});
  d.copyStrided(tc, t);
  // Row 1 as a [1, 3] view whose unit dim has stride 1000: the stride never moves an address,
  // so the copy reads elements 3..5 and stays inside the 6-element allocation.
  BufferView row = a;
  row.offset = 3;
  row.sizes = {1, 3};
  row.strides = {1000, 1};
  BufferView rc = blank(d, DType::F32, {1, 3});
  d.copyStrided(rc, row);
  d.synchronize();
  EXPECT_EQ(get<float>(d, tc), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(get<float>(d, rc), (std::vector<float>{4, 5, 6}));
  // The same transpose from offset 1 would read element 1 + 2*1 + 1*3 = 6 of 6: out of bounds.
  BufferView past = t;
  past.offset = 1;
  EXPECT_NE(errorOf([&] { d.copyStrided(tc, past); }).find("out of bounds"), std::string::npos);
}

TEST_P(DeviceConformance, KernelLaunchAndReadback) {
  Device &d = *device;
  BufferView a = put(d, HostTensor::fromValues<int64_t>(DType::I64, {2, 2}, {1, 2, 3, 4}));
  BufferView b = put(d, HostTensor::fromValues<int64_t>(DType::I64, {2}, {10, 20}));
  BufferView out = blank(d, DType::I64, {2, 2});
  d.resetCounters();
  d.launch("add", {a, b}, {out}, {});
  int64_t v = 0;
  d.readback(&v, out.buffer, 3 * 8, 8);
  EXPECT_EQ(v, 24); // out[1][1] = 4 + 20
  EXPECT_EQ(d.counters().kernelLaunches, 1u);
  EXPECT_EQ(d.counters().scalarReadbacks, 1u);
}

TEST_P(DeviceConformance, HostAccessToDeviceMemoryIsRefused) {
  BufferView v = put(*device, HostTensor::fromValues<int32_t>(DType::I32, {1}, {1}));
  int32_t x = 0;
  EXPECT_NE(errorOf([&] { device->hostLoad(&x, v.buffer, 0, 4); }).find("host load touches device memory"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { device->hostStore(v.buffer, 0, &x, 4); }).find("host store touches device memory"),
            std::string::npos);
}

TEST_P(DeviceConformance, DeviceWritesReachTheHostOnlyAtASynchronization) {
  // A kernel and a copy write host-mapped memory; the host may read it only after synchronize().
  Device &d = *device;
  BufferView a = put(d, HostTensor::fromValues<int64_t>(DType::I64, {2}, {5, 6}));
  BufferView mapped = blank(d, DType::I64, {2}, MemSpace::HostMapped);
  int64_t v = 0;
  d.synchronize();
  d.launch("add", {a, a}, {mapped}, {});
  std::string err = errorOf([&] { d.hostLoad(&v, mapped.buffer, 8, 8); });
  EXPECT_NE(err.find("unsynchronized read"), std::string::npos) << err;
  EXPECT_NE(err.find("buffer #" + std::to_string(mapped.buffer)), std::string::npos) << err;
  d.synchronize();
  d.hostLoad(&v, mapped.buffer, 8, 8);
  EXPECT_EQ(v, 12);

  BufferView staging = blank(d, DType::I64, {1}, MemSpace::HostMapped);
  d.memcpy(staging.buffer, 0, a.buffer, 0, 8);
  err = errorOf([&] { d.hostLoad(&v, staging.buffer, 0, 8); });
  EXPECT_NE(err.find("unsynchronized read"), std::string::npos) << err;
  d.readback(&v, a.buffer, 0, 8); // a readback synchronizes too
  d.hostLoad(&v, staging.buffer, 0, 8);
  EXPECT_EQ(v, 5);

  // Host stores are visible to the host at once.
  int64_t w = 41;
  d.hostStore(staging.buffer, 0, &w, 8);
  d.hostLoad(&v, staging.buffer, 0, 8);
  EXPECT_EQ(v, 41);
}

TEST_P(DeviceConformance, RunsAProgramEndToEnd) {
  // y = concat(slice(x, start 3 step -1 over 4 elements -> [3,2,1,0]), x) along axis 0
  //   = [3,2,1,0, 0,1,2,3] for x = [0,1,2,3].
  test::Builder b;
  b.addInput("x", DType::F32, {4});
  b.addOutput("y", DType::F32, {8});
  int32_t x = b.input(0);
  int32_t tmp = b.alloc(DType::F32, {4});
  b.kernel("slice", {x}, {tmp}, {}, {}, {b.index(3), b.index(-1)});
  int32_t y = b.allocOutput(0, DType::F32, {b.index(8)});
  b.kernel("concat", {tmp, x}, {y}, {0});
  b.ret({y});
  RunResult r = runProgram(b.program, *device, {HostTensor::fromValues<float>(DType::F32, {4}, {0, 1, 2, 3})});
  EXPECT_EQ(r.outputs[0].values<float>(), (std::vector<float>{3, 2, 1, 0, 0, 1, 2, 3}));
  EXPECT_EQ(r.counters.kernelLaunches, 2u);
  EXPECT_EQ(r.counters.h2dTransfers, 1u);
  EXPECT_EQ(r.counters.d2hTransfers, 1u);
  EXPECT_GE(r.totalMs, r.executeMs);
}

#ifdef DQ_CONFORMANCE_HIP
INSTANTIATE_TEST_SUITE_P(Hip, DeviceConformance, testing::Values("hip"),
                         [](const testing::TestParamInfo<std::string> &p) { return p.param; });
#else
INSTANTIATE_TEST_SUITE_P(Sim, DeviceConformance, testing::Values("sim"),
                         [](const testing::TestParamInfo<std::string> &p) { return p.param; });
#endif
