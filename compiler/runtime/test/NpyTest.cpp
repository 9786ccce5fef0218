// The .npy subset dq-run reads and writes (docs/devices.md).
#include "DeviceTestUtil.h"
#include "dq/runtime/Npy.h"

#include <cstdio>
#include <string>

using namespace dq::rt;
using dq::rt::test::errorOf;

namespace {

/// A version-1.0 file with `header` (padded as numpy does) followed by `data`.
std::vector<uint8_t> npyFile(std::string header, const std::vector<uint8_t> &data, int version = 1) {
  const size_t prefix = version == 1 ? 10 : 12;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> f = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(version), 0};
  const size_t n = header.size();
  f.push_back(n & 0xFF);
  f.push_back((n >> 8) & 0xFF);
  if (version != 1) {
    f.push_back((n >> 16) & 0xFF);
    f.push_back((n >> 24) & 0xFF);
  }
  f.insert(f.end(), header.begin(), header.end());
  f.insert(f.end(), data.begin(), data.end());
  return f;
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

} // namespace

TEST(Npy, ReadsWhatNumpyWrites) {
  // numpy.save of np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32).
  std::vector<uint8_t> data;
  for (int32_t v : {1, 2, 3, 4, 5, 6})
    for (int b = 0; b < 4; ++b)
      data.push_back(static_cast<uint8_t>(v >> (8 * b)));
  HostTensor t = parseNpy(npyFile("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", data), "a.npy");
  EXPECT_EQ(t.dtype, DType::I32);
  EXPECT_EQ(t.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.values<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  // Version 2.0 header, a 0-d bool and a 1-element tuple shape.
  HostTensor b = parseNpy(npyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (), }", {1}, 2), "b.npy");
  EXPECT_EQ(b.dtype, DType::Bool);
  EXPECT_TRUE(b.dims.empty());
  HostTensor c = parseNpy(npyFile("{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }", {0, 0x3C}), "c.npy");
  EXPECT_EQ(c.dtype, DType::F16);
  EXPECT_EQ(c.dims, (std::vector<int64_t>{1}));
  HostTensor e = parseNpy(npyFile("{'descr': '<i8', 'fortran_order': False, 'shape': (0, 4), }", {}), "e.npy");
  EXPECT_EQ(e.dims, (std::vector<int64_t>{0, 4}));
}

TEST(Npy, RoundTripsEveryNpyDType) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::I8, DType::U8, DType::I32, DType::I64, DType::Bool}) {
    HostTensor x(t, {2, 3});
    for (size_t i = 0; i < x.bytes.size(); ++i)
      x.bytes[i] = t == DType::Bool ? (i % 2) : static_cast<uint8_t>(i * 7 + 1);
    std::vector<uint8_t> bytes = serializeNpy(x);
    EXPECT_EQ((bytes.size() - x.bytes.size()) % 64, 0u); // header padded to 64 bytes
    HostTensor y = parseNpy(bytes, "x.npy");
    EXPECT_EQ(y.dtype, t);
    EXPECT_EQ(y.dims, x.dims);
    EXPECT_EQ(y.bytes, x.bytes);
  }
  HostTensor s = HostTensor::fromValues<float>(DType::F32, {}, {2.5f});
  EXPECT_EQ(parseNpy(serializeNpy(s), "s.npy").values<float>(), std::vector<float>{2.5f});
  const std::string path = testing::TempDir() + "dq_npy_roundtrip.npy";
  writeNpy(path, HostTensor::fromValues<int64_t>(DType::I64, {3}, {1, -2, 3}));
  EXPECT_EQ(readNpy(path).values<int64_t>(), (std::vector<int64_t>{1, -2, 3}));
  std::remove(path.c_str());
}

TEST(Npy, RefusesWhatItDoesNotRead) {
  auto err = [](std::string header, std::vector<uint8_t> data = {}) {
    return errorOf([&] { parseNpy(npyFile(header, data), "x.npy"); });
  };
  EXPECT_TRUE(contains(errorOf([] { parseNpy({1, 2, 3}, "x.npy"); }), "x.npy: not an npy file"));
  EXPECT_TRUE(contains(err("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", {0, 0, 0, 0}),
                       "npy dtype '>f4' is not supported"));
  EXPECT_TRUE(contains(err("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }"), "'<c8' is not supported"));
  EXPECT_TRUE(contains(err("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", {0, 0, 0, 0}), "Fortran order"));
  EXPECT_TRUE(contains(err("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", {0, 0, 0, 0}),
                       "truncated npy data: f32[2] needs 8 bytes, the file has 4"));
  EXPECT_TRUE(contains(err("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", {0, 0, 0, 0, 9}),
                       "1 unexpected trailing bytes"));
  EXPECT_TRUE(
      contains(err("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }"), "not a simple dtype"));
  EXPECT_TRUE(contains(errorOf([] { serializeNpy(HostTensor(DType::BF16, {1})); }), "bf16 has no npy type"));
  EXPECT_TRUE(contains(errorOf([] { readNpy("/nonexistent/x.npy"); }), "/nonexistent/x.npy: cannot open"));
}
