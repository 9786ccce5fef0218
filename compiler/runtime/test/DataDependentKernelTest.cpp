// Sim kernels of the data-dependent and shape-input ops against hand-computed values (each
// expectation states its calculation), and their error paths.
#include "DeviceTestUtil.h"
#include "dq/runtime/SimDevice.h"

#include <cmath>
#include <limits>

using namespace dq::rt;
using dq::rt::test::blank;
using dq::rt::test::errorOf;
using dq::rt::test::get;
using dq::rt::test::in;
using dq::rt::test::run;

namespace {

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

} // namespace

TEST(DataDependentKernels, CountAndNonzero) {
  SimDevice d;
  // [[0, 2, 0], [NaN, 0, 5]]: nonzero at (0,1), (1,0), (1,2) -> count 3 (NaN counts).
  BufferView x = in<float>(d, DType::F32, {2, 3}, {0, 2, 0, kNaN, 0, 5});
  EXPECT_EQ(run<int64_t>(d, "count_nonzero", {x}, DType::I64, {}), (std::vector<int64_t>{3}));
  // rows: axis-0 indices [0, 1, 1], axis-1 indices [1, 0, 2].
  EXPECT_EQ(run<int64_t>(d, "nonzero", {x}, DType::I64, {2, 3}), (std::vector<int64_t>{0, 1, 1, 1, 0, 2}));
  // An output sized for another count is an error, never a silently partial result.
  EXPECT_EQ(errorOf([&] { run<int64_t>(d, "nonzero", {x}, DType::I64, {2, 4}); }),
            "kernel 'nonzero': 3 nonzero elements, the output holds 4");
}

TEST(DataDependentKernels, CompressTopKTile) {
  SimDevice d;
  // rows 0 and 2 of [[1,2],[3,4],[5,6]].
  EXPECT_EQ(
      run<float>(d, "compress",
                 {in<float>(d, DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6}), in<uint8_t>(d, DType::Bool, {3}, {1, 0, 1})},
                 DType::F32, {2, 2}, {{0}, {}, {}}),
      (std::vector<float>{1, 2, 5, 6}));
  // largest 2 of [3, 1, 3, 2]: values 3, 3 at indices 0, 2 (ties keep the lower index).
  BufferView x = in<float>(d, DType::F32, {4}, {3, 1, 3, 2});
  BufferView v = blank(d, DType::F32, {2}), i = blank(d, DType::I64, {2});
  d.launch("top_k", {x}, {v, i}, {{0, 1}, {}, {}});
  EXPECT_EQ(get<float>(d, v), (std::vector<float>{3, 3}));
  EXPECT_EQ(get<int64_t>(d, i), (std::vector<int64_t>{0, 2}));
  // smallest 3 with a NaN: NaN ranks above every number, so 1 (3), 2 (2), 4 (0).
  BufferView y = in<float>(d, DType::F32, {4}, {4, kNaN, 2, 1});
  BufferView v3 = blank(d, DType::F32, {3}), i3 = blank(d, DType::I64, {3});
  d.launch("top_k", {y}, {v3, i3}, {{0, 0}, {}, {}});
  EXPECT_EQ(get<int64_t>(d, i3), (std::vector<int64_t>{3, 2, 0}));
  // [1, 2] tiled to [2, 4]: [[1,2,1,2],[1,2,1,2]].
  EXPECT_EQ(run<float>(d, "tile", {in<float>(d, DType::F32, {1, 2}, {1, 2})}, DType::F32, {2, 4}),
            (std::vector<float>{1, 2, 1, 2, 1, 2, 1, 2}));
}

TEST(DataDependentKernels, PadModes) {
  SimDevice d;
  BufferView x = in<float>(d, DType::F32, {3}, {1, 2, 3});
  // constant 9 with begin 2, out 6: [9, 9, 1, 2, 3, 9].
  EXPECT_EQ(run<float>(d, "pad", {x, in<float>(d, DType::F32, {}, {9})}, DType::F32, {6}, {{0}, {}, {2}}),
            (std::vector<float>{9, 9, 1, 2, 3, 9}));
  // reflect begin 2, out 7: [3, 2, 1, 2, 3, 2, 1]; edge begin 1, out 6: [1, 1, 2, 3, 3, 3].
  EXPECT_EQ(run<float>(d, "pad", {x}, DType::F32, {7}, {{1}, {}, {2}}), (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(run<float>(d, "pad", {x}, DType::F32, {6}, {{2}, {}, {1}}), (std::vector<float>{1, 1, 2, 3, 3, 3}));
  EXPECT_EQ(
      errorOf([&] { run<float>(d, "pad", {in<float>(d, DType::F32, {0}, {})}, DType::F32, {2}, {{2}, {}, {1}}); }),
      "kernel 'pad': mode 'edge' cannot pad an axis of extent 0");
}

TEST(DataDependentKernels, ScattersReduceAndRejectDuplicates) {
  SimDevice d;
  BufferView data = in<float>(d, DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6});
  // add at row 1 twice: [3 + 1 + 1, 4 + 2 + 2] = [5, 8].
  EXPECT_EQ(
      run<float>(d, "scatter_nd",
                 {data, in<int64_t>(d, DType::I64, {2, 1}, {1, -2}), in<float>(d, DType::F32, {2, 2}, {1, 2, 1, 2})},
                 DType::F32, {3, 2}, {{1}, {}, {}}),
      (std::vector<float>{1, 2, 5, 8, 5, 6}));
  EXPECT_TRUE(contains(errorOf([&] {
                         run<float>(d, "scatter_nd",
                                    {data, in<int64_t>(d, DType::I64, {2, 1}, {1, 1}),
                                     in<float>(d, DType::F32, {2, 2}, {0, 0, 0, 0})},
                                    DType::F32, {3, 2}, {{0}, {}, {}});
                       }),
                       "with reduction 'none' (undefined in ONNX)"));
  // scatter_elements axis 1, max: (0, 1) = max(2, 7) = 7; (1, 0) = max(3, -1) = 3.
  EXPECT_EQ(run<float>(d, "scatter_elements",
                       {data, in<int64_t>(d, DType::I64, {2, 1}, {1, 0}), in<float>(d, DType::F32, {2, 1}, {7, -1})},
                       DType::F32, {3, 2}, {{1, 3}, {}, {}}),
            (std::vector<float>{1, 7, 3, 4, 5, 6}));
  EXPECT_EQ(errorOf([&] {
              run<float>(d, "scatter_elements",
                         {data, in<int64_t>(d, DType::I64, {1, 1}, {2}), in<float>(d, DType::F32, {1, 1}, {0})},
                         DType::F32, {3, 2}, {{1, 0}, {}, {}});
            }),
            "kernel 'scatter_elements': index 2 out of range for axis 1 of size 2");
}
