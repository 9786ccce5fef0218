// Sim kernels against hand-computed values (each expectation states its calculation).
#include "DeviceTestUtil.h"
#include "dq/runtime/Float16.h"
#include "dq/runtime/SimDevice.h"

#include <cmath>
#include <limits>

using namespace dq::rt;
using dq::rt::test::blank;
using dq::rt::test::errorOf;
using dq::rt::test::get;
using dq::rt::test::put;

using dq::rt::test::in;
using dq::rt::test::run;

TEST(Kernels, AddBroadcastsF32) {
  SimDevice d;
  // [[1,2,3],[4,5,6]] + [10,20,30] row-broadcast = [[11,22,33],[14,25,36]]
  auto r = run<float>(
      d, "add", {in<float>(d, DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}), in<float>(d, DType::F32, {3}, {10, 20, 30})},
      DType::F32, {2, 3});
  EXPECT_EQ(r, (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST(Kernels, IntegerArithmeticWrapsAndTruncates) {
  SimDevice d;
  // i8: -128 - 1 = -129, wrapped to 8 bits = 127; 100 - (-100) = 200 -> 200 - 256 = -56.
  EXPECT_EQ(run<int8_t>(d, "sub",
                        {in<int8_t>(d, DType::I8, {2}, {-128, 100}), in<int8_t>(d, DType::I8, {2}, {1, -100})},
                        DType::I8, {2}),
            (std::vector<int8_t>{127, -56}));
  // u8: 16 * 16 = 256 -> 0; 3 * 5 = 15.
  EXPECT_EQ(run<uint8_t>(d, "mul", {in<uint8_t>(d, DType::U8, {2}, {16, 3}), in<uint8_t>(d, DType::U8, {2}, {16, 5})},
                         DType::U8, {2}),
            (std::vector<uint8_t>{0, 15}));
  // i32 division truncates toward zero: -7/2 = -3, 7/-2 = -3, 6/3 = 2.
  EXPECT_EQ(run<int32_t>(d, "div",
                         {in<int32_t>(d, DType::I32, {3}, {-7, 7, 6}), in<int32_t>(d, DType::I32, {3}, {2, -2, 3})},
                         DType::I32, {3}),
            (std::vector<int32_t>{-3, -3, 2}));
  std::string err = errorOf([&] {
    run<int64_t>(d, "div", {in<int64_t>(d, DType::I64, {1}, {1}), in<int64_t>(d, DType::I64, {1}, {0})}, DType::I64,
                 {1});
  });
  EXPECT_EQ(err, "kernel 'div': integer division by zero");
}

TEST(Kernels, FloatDivisionFollowsIeee) {
  SimDevice d;
  // 1/0 = +inf, -1/0 = -inf, 0/0 = NaN, 1/4 = 0.25.
  auto r = run<double>(d, "div",
                       {in<double>(d, DType::F64, {4}, {1, -1, 0, 1}), in<double>(d, DType::F64, {4}, {0, 0, 0, 4})},
                       DType::F64, {4});
  EXPECT_EQ(r[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(r[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_EQ(r[3], 0.25);
}

TEST(Kernels, HalfPrecisionRoundsToNearestEven) {
  SimDevice d;
  // f16 1.0 = 0x3C00 (ulp 2^-10), 2^-11 = 0x1000, 1+2^-10 = 0x3C01.
  // 1 + 2^-11 is a tie between 0x3C00 and 0x3C01 -> even 0x3C00.
  // (1+2^-10) + 2^-11 = 1 + 3*2^-11 ties between 0x3C01 and 0x3C02 -> even 0x3C02.
  auto r = run<uint16_t>(
      d, "add", {in<uint16_t>(d, DType::F16, {2}, {0x3C00, 0x3C01}), in<uint16_t>(d, DType::F16, {1}, {0x1000})},
      DType::F16, {2});
  EXPECT_EQ(r, (std::vector<uint16_t>{0x3C00, 0x3C02}));
  // bf16 1.0 = 0x3F80 (ulp 2^-7), 2^-8 = 0x3B80: 1 + 2^-8 ties -> 0x3F80; 0x3F81 + 2^-8 -> 0x3F82.
  auto b = run<uint16_t>(
      d, "add", {in<uint16_t>(d, DType::BF16, {2}, {0x3F80, 0x3F81}), in<uint16_t>(d, DType::BF16, {1}, {0x3B80})},
      DType::BF16, {2});
  EXPECT_EQ(b, (std::vector<uint16_t>{0x3F80, 0x3F82}));
}

TEST(Kernels, CastFollowsOnnxRules) {
  SimDevice d;
  // float -> int truncates toward zero: -2.7 -> -2, 2.7 -> 2.
  EXPECT_EQ(run<int32_t>(d, "cast", {in<float>(d, DType::F32, {2}, {-2.7f, 2.7f})}, DType::I32, {2}),
            (std::vector<int32_t>{-2, 2}));
  // x -> bool is x != 0: 0 -> 0, -0.5 -> 1, NaN -> 1.
  EXPECT_EQ(run<uint8_t>(d, "cast", {in<float>(d, DType::F32, {3}, {0.0f, -0.5f, std::nanf("")})}, DType::Bool, {3}),
            (std::vector<uint8_t>{0, 1, 1}));
  // i64 2049 -> f16: halfway between 2048 (0x6800) and 2050 (0x6801) -> even 0x6800.
  EXPECT_EQ(run<uint16_t>(d, "cast", {in<int64_t>(d, DType::I64, {1}, {2049})}, DType::F16, {1}),
            (std::vector<uint16_t>{0x6800}));
  // f32 1 + 3*2^-8 -> bf16 ties between 0x3F81 and 0x3F82 -> even 0x3F82 (truncation would give 0x3F81).
  EXPECT_EQ(run<uint16_t>(d, "cast", {in<float>(d, DType::F32, {1}, {1.01171875f})}, DType::BF16, {1}),
            (std::vector<uint16_t>{0x3F82}));
  // f64 1 + 2^-11 + 2^-40 -> f16: just above the tie, so 0x3C01. Rounding through f32 first would
  // drop 2^-40, make an exact tie and give 0x3C00: the single rounding is what is checked.
  EXPECT_EQ(run<uint16_t>(d, "cast",
                          {in<double>(d, DType::F64, {1}, {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)})},
                          DType::F16, {1}),
            (std::vector<uint16_t>{0x3C01}));
  // bool -> f32: 1 -> 1.0, 0 -> 0.0; i32 -> u8 wraps: 300 -> 44.
  EXPECT_EQ(run<float>(d, "cast", {in<uint8_t>(d, DType::Bool, {2}, {1, 0})}, DType::F32, {2}),
            (std::vector<float>{1, 0}));
  EXPECT_EQ(run<uint8_t>(d, "cast", {in<int32_t>(d, DType::I32, {1}, {300})}, DType::U8, {1}),
            (std::vector<uint8_t>{44}));
}

TEST(Kernels, AddWorksForEveryDType) {
  SimDevice d;
  // 1 + 2 = 3 in every numeric dtype; bool 1 + 0 = 1 (nonzero).
  EXPECT_EQ(run<float>(d, "add", {in<float>(d, DType::F32, {1}, {1}), in<float>(d, DType::F32, {1}, {2})}, DType::F32,
                       {1})[0],
            3.0f);
  EXPECT_EQ(run<double>(d, "add", {in<double>(d, DType::F64, {1}, {1}), in<double>(d, DType::F64, {1}, {2})},
                        DType::F64, {1})[0],
            3.0);
  // f16 1.0 = 0x3C00, 2.0 = 0x4000, 3.0 = 0x4200; bf16 1.0 = 0x3F80, 2.0 = 0x4000, 3.0 = 0x4040.
  EXPECT_EQ(run<uint16_t>(d, "add",
                          {in<uint16_t>(d, DType::F16, {1}, {0x3C00}), in<uint16_t>(d, DType::F16, {1}, {0x4000})},
                          DType::F16, {1})[0],
            0x4200);
  EXPECT_EQ(run<uint16_t>(d, "add",
                          {in<uint16_t>(d, DType::BF16, {1}, {0x3F80}), in<uint16_t>(d, DType::BF16, {1}, {0x4000})},
                          DType::BF16, {1})[0],
            0x4040);
  EXPECT_EQ(run<int8_t>(d, "add", {in<int8_t>(d, DType::I8, {1}, {1}), in<int8_t>(d, DType::I8, {1}, {2})}, DType::I8,
                        {1})[0],
            3);
  EXPECT_EQ(run<uint8_t>(d, "add", {in<uint8_t>(d, DType::U8, {1}, {1}), in<uint8_t>(d, DType::U8, {1}, {2})},
                         DType::U8, {1})[0],
            3);
  EXPECT_EQ(run<int32_t>(d, "add", {in<int32_t>(d, DType::I32, {1}, {1}), in<int32_t>(d, DType::I32, {1}, {2})},
                         DType::I32, {1})[0],
            3);
  EXPECT_EQ(run<int64_t>(d, "add", {in<int64_t>(d, DType::I64, {1}, {1}), in<int64_t>(d, DType::I64, {1}, {2})},
                         DType::I64, {1})[0],
            3);
  EXPECT_EQ(run<uint8_t>(d, "add", {in<uint8_t>(d, DType::Bool, {1}, {1}), in<uint8_t>(d, DType::Bool, {1}, {0})},
                         DType::Bool, {1})[0],
            1);
  // f32 0.1f + 0.2f must equal the float sum computed here by the CPU's own float addition.
  float a = 0.1f, b = 0.2f;
  EXPECT_EQ(run<float>(d, "add", {in<float>(d, DType::F32, {1}, {a}), in<float>(d, DType::F32, {1}, {b})}, DType::F32,
                       {1})[0],
            a + b);
}

TEST(Kernels, EqualAndWhere) {
  SimDevice d;
  // [1,2,3] == [1,0,3] -> [1,0,1]
  EXPECT_EQ(run<uint8_t>(d, "equal",
                         {in<int64_t>(d, DType::I64, {3}, {1, 2, 3}), in<int64_t>(d, DType::I64, {3}, {1, 0, 3})},
                         DType::Bool, {3}),
            (std::vector<uint8_t>{1, 0, 1}));
  // where([1,0], [[1,2],[3,4]], 9 (0-d)) -> [[1,9],[3,9]]
  EXPECT_EQ(run<int32_t>(d, "where",
                         {in<uint8_t>(d, DType::Bool, {2}, {1, 0}), in<int32_t>(d, DType::I32, {2, 2}, {1, 2, 3, 4}),
                          in<int32_t>(d, DType::I32, {}, {9})},
                         DType::I32, {2, 2}),
            (std::vector<int32_t>{1, 9, 3, 9}));
}

TEST(Kernels, ExpandSliceTranspose) {
  SimDevice d;
  // expand [[1],[2],[3]] to [3,2] -> [[1,1],[2,2],[3,3]]
  EXPECT_EQ(run<float>(d, "expand", {in<float>(d, DType::F32, {3, 1}, {1, 2, 3})}, DType::F32, {3, 2}),
            (std::vector<float>{1, 1, 2, 2, 3, 3}));
  // slice [0..5] start 5 step -2, 3 elements -> [5,3,1]
  EXPECT_EQ(run<int64_t>(d, "slice", {in<int64_t>(d, DType::I64, {6}, {0, 1, 2, 3, 4, 5})}, DType::I64, {3},
                         {{}, {}, {5, -2}}),
            (std::vector<int64_t>{5, 3, 1}));
  // a slice that reads past the end is refused: start 4 step 2 for 2 elements reads index 6 of 6.
  EXPECT_NE(errorOf([&] {
              run<int64_t>(d, "slice", {in<int64_t>(d, DType::I64, {6}, {0, 1, 2, 3, 4, 5})}, DType::I64, {2},
                           {{}, {}, {4, 2}});
            }).find("kernel 'slice': axis 0 reads indices 4..6"),
            std::string::npos);
  // transpose perm [1,0] of [[1,2,3],[4,5,6]] -> [[1,4],[2,5],[3,6]]
  EXPECT_EQ(run<int32_t>(d, "transpose", {in<int32_t>(d, DType::I32, {2, 3}, {1, 2, 3, 4, 5, 6})}, DType::I32, {3, 2},
                         {{1, 0}, {}, {}}),
            (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  // perm [2,0,1] of in[a,b,c] = 100a+10b+c with shape [2,3,4] -> out shape [4,2,3] and
  // out[i,j,k] = in[j,k,i]; so out[3,1,2] = in[1,2,3] = 123, flat index 3*6+1*3+2 = 23.
  std::vector<int32_t> v;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        v.push_back(100 * a + 10 * b + c);
  auto t = run<int32_t>(d, "transpose", {in<int32_t>(d, DType::I32, {2, 3, 4}, v)}, DType::I32, {4, 2, 3},
                        {{2, 0, 1}, {}, {}});
  EXPECT_EQ(t[23], 123);
  EXPECT_EQ(t[0], 0);
  EXPECT_EQ(t[1], 10); // out[0,0,1] = in[0,1,0] = 10
}

TEST(Kernels, NegativeAndZeroStrideViews) {
  SimDevice d;
  BufferView x = in<float>(d, DType::F32, {3}, {1, 2, 3});
  BufferView reversed = x;
  reversed.offset = 2;
  reversed.strides = {-1}; // [3,2,1]
  BufferView broadcast = x;
  broadcast.sizes = {3};
  broadcast.strides = {0}; // [1,1,1]
  // [3,2,1] + [1,1,1] = [4,3,2]
  EXPECT_EQ(run<float>(d, "add", {reversed, broadcast}, DType::F32, {3}), (std::vector<float>{4, 3, 2}));
  BufferView out = blank(d, DType::F32, {3});
  out.strides = {0};
  EXPECT_NE(errorOf([&] { d.launch("expand", {x}, {out}, {}); }).find("stride 0"), std::string::npos);
}

TEST(Kernels, ConcatGatherRangeFill) {
  SimDevice d;
  // concat axis 1: [[1],[2]] ++ [[3,4],[5,6]] -> [[1,3,4],[2,5,6]]; axis -1 is the same axis.
  for (int64_t axis : {1, -1})
    EXPECT_EQ(
        run<int32_t>(d, "concat",
                     {in<int32_t>(d, DType::I32, {2, 1}, {1, 2}), in<int32_t>(d, DType::I32, {2, 2}, {3, 4, 5, 6})},
                     DType::I32, {2, 3}, {{axis}, {}, {}}),
        (std::vector<int32_t>{1, 3, 4, 2, 5, 6}));
  BufferView data = in<float>(d, DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6});
  // gather axis 0, indices [2,-1,0] (-1 wraps to 2) -> rows 2,2,0 = [[5,6],[5,6],[1,2]]
  EXPECT_EQ(
      run<float>(d, "gather", {data, in<int64_t>(d, DType::I64, {3}, {2, -1, 0})}, DType::F32, {3, 2}, {{0}, {}, {}}),
      (std::vector<float>{5, 6, 5, 6, 1, 2}));
  // gather axis 1, i32 indices [[1],[0]] -> out[i,j,0] = data[i, idx[j]] = [[[2],[1]],[[4],[3]],[[6],[5]]]
  EXPECT_EQ(
      run<float>(d, "gather", {data, in<int32_t>(d, DType::I32, {2, 1}, {1, 0})}, DType::F32, {3, 2, 1}, {{1}, {}, {}}),
      (std::vector<float>{2, 1, 4, 3, 6, 5}));
  EXPECT_NE(errorOf([&] {
              run<float>(d, "gather", {data, in<int64_t>(d, DType::I64, {1}, {3})}, DType::F32, {1, 2}, {{0}, {}, {}});
            }).find("kernel 'gather': index 3 out of range for axis 0 of size 3"),
            std::string::npos);
  // range start 2 delta 3, 4 elements -> [2,5,8,11]; f32 0.5, -0.25 -> [0.5,0.25,0,-0.25]
  EXPECT_EQ(run<int32_t>(d, "range", {in<int32_t>(d, DType::I32, {}, {2}), in<int32_t>(d, DType::I32, {}, {3})},
                         DType::I32, {4}),
            (std::vector<int32_t>{2, 5, 8, 11}));
  EXPECT_EQ(run<float>(d, "range", {in<float>(d, DType::F32, {}, {0.5f}), in<float>(d, DType::F32, {}, {-0.25f})},
                       DType::F32, {4}),
            (std::vector<float>{0.5f, 0.25f, 0.0f, -0.25f}));
  // fill f16 with 1.5 -> 0x3E00 (1.1b x 2^0); fill i8 with -3.
  EXPECT_EQ(run<uint16_t>(d, "fill", {}, DType::F16, {2}, {{}, {1.5}, {}}), (std::vector<uint16_t>{0x3E00, 0x3E00}));
  EXPECT_EQ(run<int8_t>(d, "fill", {}, DType::I8, {2}, {{-3}, {}, {}}), (std::vector<int8_t>{-3, -3}));
}

TEST(Float16, ConversionsAtTheEdges) {
  // 65504 is the largest half (0x7BFF); 65520 ties to the next binade -> +inf (0x7C00).
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00);
  // Smallest subnormal 2^-24 = 0x0001; 2^-25 ties between 0 and it -> 0; 3*2^-26 -> 0x0001.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(floatToHalf(3 * std::ldexp(1.0f, -26)), 0x0001);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0xC000), -2.0f);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
  EXPECT_EQ(floatToBF16(-1.0f), 0xBF80);
  EXPECT_EQ(bf16ToFloat(0x4040), 3.0f);
}
