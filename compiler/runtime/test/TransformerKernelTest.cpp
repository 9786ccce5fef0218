// Sim kernels of the transformer op set against hand-computed values (each expectation states
// its calculation); dtype admission follows the ONNX type constraints of the matching op.
#include "DeviceTestUtil.h"
#include "TestPrograms.h"
#include "dq/runtime/ProgramCheck.h"
#include "dq/runtime/Runtime.h"
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

// True when `parts` occur in `s` in order (operand labels carry a buffer number between them).
bool hasParts(const std::string &s, const std::vector<std::string> &parts) {
  size_t pos = 0;
  for (const std::string &p : parts) {
    pos = s.find(p, pos);
    if (pos == std::string::npos) return false;
    pos += p.size();
  }
  return true;
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Element-wise EXPECT_NEAR over two float vectors of equal length.
void expectNear(const std::vector<float> &got, const std::vector<double> &want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

} // namespace

// ---- elementwise ---------------------------------------------------------------------------------

TEST(TransformerKernels, PowBroadcastsAndMixesDTypes) {
  SimDevice d;
  // [[1,2],[3,4]] ^ [2,0.5] (row broadcast) = [[1, sqrt 2],[9, 2]]
  expectNear(run<float>(d, "pow",
                        {in<float>(d, DType::F32, {2, 2}, {1, 2, 3, 4}), in<float>(d, DType::F32, {2}, {2, 0.5f})},
                        DType::F32, {2, 2}),
             {1, 1.41421356, 9, 2}, 1e-6);
  // f32 base, i64 exponent (ONNX T1 may differ): [2,-3] ^ [3,2] = [8, 9]
  EXPECT_EQ(run<float>(d, "pow", {in<float>(d, DType::F32, {2}, {2, -3}), in<int64_t>(d, DType::I64, {2}, {3, 2})},
                       DType::F32, {2}),
            (std::vector<float>{8, 9}));
  // i32 base, f32 exponent: 3^2.0 = 9; 2^0.5 = 1.414 truncated toward zero = 1.
  EXPECT_EQ(run<int32_t>(d, "pow", {in<int32_t>(d, DType::I32, {2}, {3, 2}), in<float>(d, DType::F32, {2}, {2, 0.5f})},
                         DType::I32, {2}),
            (std::vector<int32_t>{9, 1}));
  // i32 integer power: 3^4 = 81; 2^31 = 2147483648 wraps to -2147483648; 2^-1 = 0.5 -> 0;
  // (-1)^-3 = -1; 7^0 = 1.
  EXPECT_EQ(run<int32_t>(d, "pow",
                         {in<int32_t>(d, DType::I32, {5}, {3, 2, 2, -1, 7}),
                          in<int32_t>(d, DType::I32, {5}, {4, 31, -1, -3, 0})},
                         DType::I32, {5}),
            (std::vector<int32_t>{81, std::numeric_limits<int32_t>::min(), 0, -1, 1}));
  EXPECT_EQ(errorOf([&] {
              run<int64_t>(d, "pow", {in<int64_t>(d, DType::I64, {1}, {0}), in<int64_t>(d, DType::I64, {1}, {-2})},
                           DType::I64, {1});
            }),
            "kernel 'pow': integer 0 raised to the negative power -2");
  // ONNX Pow admits no u8 base.
  EXPECT_TRUE(
      hasParts(errorOf([&] {
                 run<uint8_t>(d, "pow", {in<uint8_t>(d, DType::U8, {1}, {2}), in<uint8_t>(d, DType::U8, {1}, {2})},
                              DType::U8, {1});
               }),
               {"kernel 'pow': unsupported: in 0 (buffer #", ") is u8; 'pow' admits f32 f64 f16 bf16 i32 i64"}));
}

TEST(TransformerKernels, MaxMinPropagateNaNAndKeepIntegerWidth) {
  SimDevice d;
  // max([1,NaN,-2], 0 (0-d)) = [1, NaN, 0]; min = [0, NaN, -2]
  auto mx = run<float>(d, "max", {in<float>(d, DType::F32, {3}, {1, kNaN, -2}), in<float>(d, DType::F32, {}, {0})},
                       DType::F32, {3});
  EXPECT_EQ(mx[0], 1.0f);
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_EQ(mx[2], 0.0f);
  auto mn = run<float>(d, "min", {in<float>(d, DType::F32, {3}, {1, kNaN, -2}), in<float>(d, DType::F32, {}, {0})},
                       DType::F32, {3});
  EXPECT_EQ(mn[0], 0.0f);
  EXPECT_TRUE(std::isnan(mn[1]));
  EXPECT_EQ(mn[2], -2.0f);
  // u8 compares unsigned: max(200, 100) = 200, min = 100.
  EXPECT_EQ(run<uint8_t>(d, "max", {in<uint8_t>(d, DType::U8, {1}, {200}), in<uint8_t>(d, DType::U8, {1}, {100})},
                         DType::U8, {1})[0],
            200);
  EXPECT_EQ(run<uint8_t>(d, "min", {in<uint8_t>(d, DType::U8, {1}, {200}), in<uint8_t>(d, DType::U8, {1}, {100})},
                         DType::U8, {1})[0],
            100);
  // i64 extremes survive: max(INT64_MIN, INT64_MAX) = INT64_MAX.
  EXPECT_EQ(run<int64_t>(d, "max",
                         {in<int64_t>(d, DType::I64, {1}, {std::numeric_limits<int64_t>::min()}),
                          in<int64_t>(d, DType::I64, {1}, {std::numeric_limits<int64_t>::max()})},
                         DType::I64, {1})[0],
            std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(hasParts(errorOf([&] {
                         run<uint8_t>(d, "max",
                                      {in<uint8_t>(d, DType::Bool, {1}, {1}), in<uint8_t>(d, DType::Bool, {1}, {0})},
                                      DType::Bool, {1});
                       }),
                       {"kernel 'max': unsupported: in 0 (buffer #", ") is bool"}));
}

TEST(TransformerKernels, LogicalAndComparisons) {
  SimDevice d;
  // and/or of [[1],[0]] with [1,0] broadcast to [2,2]: and = [[1,0],[0,0]], or = [[1,1],[1,0]]
  BufferView a = in<uint8_t>(d, DType::Bool, {2, 1}, {1, 0}), b = in<uint8_t>(d, DType::Bool, {2}, {1, 0});
  EXPECT_EQ(run<uint8_t>(d, "and", {a, b}, DType::Bool, {2, 2}), (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(run<uint8_t>(d, "or", {a, b}, DType::Bool, {2, 2}), (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_TRUE(hasParts(errorOf([&] {
                         run<float>(d, "and", {in<float>(d, DType::F32, {1}, {1}), in<float>(d, DType::F32, {1}, {1})},
                                    DType::F32, {1});
                       }),
                       {"kernel 'and': unsupported: in 0 (buffer #", ") is f32; 'and' admits bool"}));
  // [1, 2, 3, NaN] vs 2: less [1,0,0,0], less_equal [1,1,0,0], greater [0,0,1,0],
  // greater_equal [0,1,1,0] (every comparison with NaN is false).
  BufferView x = in<float>(d, DType::F32, {4}, {1, 2, 3, kNaN}), two = in<float>(d, DType::F32, {}, {2});
  EXPECT_EQ(run<uint8_t>(d, "less", {x, two}, DType::Bool, {4}), (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(run<uint8_t>(d, "less_equal", {x, two}, DType::Bool, {4}), (std::vector<uint8_t>{1, 1, 0, 0}));
  EXPECT_EQ(run<uint8_t>(d, "greater", {x, two}, DType::Bool, {4}), (std::vector<uint8_t>{0, 0, 1, 0}));
  EXPECT_EQ(run<uint8_t>(d, "greater_equal", {x, two}, DType::Bool, {4}), (std::vector<uint8_t>{0, 1, 1, 0}));
  // u8 200 > 100 (unsigned, not -56 > 100); i8 -56 < 100.
  EXPECT_EQ(run<uint8_t>(d, "greater", {in<uint8_t>(d, DType::U8, {1}, {200}), in<uint8_t>(d, DType::U8, {1}, {100})},
                         DType::Bool, {1})[0],
            1);
  EXPECT_EQ(run<uint8_t>(d, "less", {in<int8_t>(d, DType::I8, {1}, {-56}), in<int8_t>(d, DType::I8, {1}, {100})},
                         DType::Bool, {1})[0],
            1);
  // The output must be bool; the inputs one dtype.
  EXPECT_TRUE(hasParts(errorOf([&] { run<float>(d, "less", {x, two}, DType::F32, {4}); }),
                       {"kernel 'less': out 0 (buffer #", ") is f32, expected bool"}));
  EXPECT_TRUE(
      hasParts(errorOf([&] { run<uint8_t>(d, "less", {x, in<double>(d, DType::F64, {}, {2})}, DType::Bool, {4}); }),
               {"kernel 'less': in 0 (buffer #", ") is f32 but in 1 (buffer #", ") is f64"}));
}

TEST(TransformerKernels, UnaryFloatFunctions) {
  SimDevice d;
  // Known values at 0 and 1: sigmoid(0) = 0.5, sigmoid(1) = 1/(1+1/e) = 0.7310585786;
  // tanh(1) = 0.7615941560; erf(1) = 0.8427007929; exp(1) = e = 2.7182818285;
  // cos(1) = 0.5403023059; sin(1) = 0.8414709848.
  BufferView x = in<double>(d, DType::F64, {2}, {0, 1});
  auto f = [&](const char *k) { return run<double>(d, k, {x}, DType::F64, {2}); };
  EXPECT_NEAR(f("sigmoid")[0], 0.5, 1e-15);
  EXPECT_NEAR(f("sigmoid")[1], 0.7310585786300049, 1e-12);
  EXPECT_NEAR(f("tanh")[1], 0.7615941559557649, 1e-12);
  EXPECT_NEAR(f("erf")[1], 0.8427007929497149, 1e-12);
  EXPECT_NEAR(f("exp")[1], 2.718281828459045, 1e-12);
  EXPECT_NEAR(f("cos")[1], 0.5403023058681398, 1e-12);
  EXPECT_NEAR(f("sin")[1], 0.8414709848078965, 1e-12);
  EXPECT_EQ(f("cos")[0], 1.0);
  EXPECT_EQ(f("sin")[0], 0.0);
  // sqrt [4, 2, -1] = [2, 1.4142135624, NaN]; reciprocal [4, -0.5, 0] = [0.25, -2, inf].
  auto s = run<float>(d, "sqrt", {in<float>(d, DType::F32, {3}, {4, 2, -1})}, DType::F32, {3});
  EXPECT_EQ(s[0], 2.0f);
  EXPECT_NEAR(s[1], 1.41421356, 1e-6);
  EXPECT_TRUE(std::isnan(s[2]));
  EXPECT_EQ(run<float>(d, "reciprocal", {in<float>(d, DType::F32, {3}, {4, -0.5f, 0})}, DType::F32, {3}),
            (std::vector<float>{0.25f, -2.0f, kInf}));
  // sigmoid saturates without overflow: sigmoid(-1000) = 1/(1+e^1000) = 1/inf = 0; sigmoid(1000) = 1.
  EXPECT_EQ(run<float>(d, "sigmoid", {in<float>(d, DType::F32, {2}, {-1000, 1000})}, DType::F32, {2}),
            (std::vector<float>{0, 1}));
  // f16 exp(0) = 1.0 = 0x3C00; bf16 sqrt(4.0 = 0x4080) = 2.0 = 0x4000.
  EXPECT_EQ(run<uint16_t>(d, "exp", {in<uint16_t>(d, DType::F16, {1}, {0})}, DType::F16, {1})[0], 0x3C00);
  EXPECT_EQ(run<uint16_t>(d, "sqrt", {in<uint16_t>(d, DType::BF16, {1}, {0x4080})}, DType::BF16, {1})[0], 0x4000);
  // ONNX Erf also admits integers: erf(0) = 0, erf(3) = 0.99998 truncated toward zero = 0,
  // so every integer result is 0; the computation must still run without error.
  EXPECT_EQ(run<int32_t>(d, "erf", {in<int32_t>(d, DType::I32, {2}, {0, 3})}, DType::I32, {2}),
            (std::vector<int32_t>{0, 0}));
  EXPECT_TRUE(
      hasParts(errorOf([&] { run<int32_t>(d, "sqrt", {in<int32_t>(d, DType::I32, {1}, {4})}, DType::I32, {1}); }),
               {"kernel 'sqrt': unsupported: in 0 (buffer #", ") is i32; 'sqrt' admits f32 f64 f16 bf16"}));
}

TEST(TransformerKernels, NegNotIsNaN) {
  SimDevice d;
  // neg i8: -(-128) = 128 wraps to -128; -(5) = -5. f16 neg(1.0 = 0x3C00) = -1.0 = 0xBC00.
  EXPECT_EQ(run<int8_t>(d, "neg", {in<int8_t>(d, DType::I8, {2}, {-128, 5})}, DType::I8, {2}),
            (std::vector<int8_t>{-128, -5}));
  EXPECT_EQ(run<uint16_t>(d, "neg", {in<uint16_t>(d, DType::F16, {1}, {0x3C00})}, DType::F16, {1})[0], 0xBC00);
  EXPECT_EQ(run<int64_t>(d, "neg", {in<int64_t>(d, DType::I64, {1}, {7})}, DType::I64, {1})[0], -7);
  // ONNX Neg admits no unsigned type.
  EXPECT_TRUE(hasParts(errorOf([&] { run<uint8_t>(d, "neg", {in<uint8_t>(d, DType::U8, {1}, {1})}, DType::U8, {1}); }),
                       {"kernel 'neg': unsupported: in 0 (buffer #", ") is u8"}));
  EXPECT_EQ(run<uint8_t>(d, "not", {in<uint8_t>(d, DType::Bool, {2}, {1, 0})}, DType::Bool, {2}),
            (std::vector<uint8_t>{0, 1}));
  // isnan [NaN, inf, 0] = [1, 0, 0]; the output dtype is bool.
  EXPECT_EQ(run<uint8_t>(d, "isnan", {in<float>(d, DType::F32, {3}, {kNaN, kInf, 0})}, DType::Bool, {3}),
            (std::vector<uint8_t>{1, 0, 0}));
  EXPECT_TRUE(
      hasParts(errorOf([&] { run<int32_t>(d, "isnan", {in<int32_t>(d, DType::I32, {1}, {1})}, DType::Bool, {1}); }),
               {"kernel 'isnan': unsupported: in 0 (buffer #", ") is i32"}));
}

TEST(TransformerKernels, ElementwiseOnStridedAndBroadcastViewsAndEmpty) {
  SimDevice d;
  // x = [[1,2,3],[4,5,6]] read transposed (strides {1,3}) as [[1,4],[2,5],[3,6]];
  // y = [10,20] viewed as [3,2] with stride 0 on dim 0. max(xT, y) = [[10,20],[10,20],[10,20]],
  // min = [[1,4],[2,5],[3,6]].
  BufferView x = in<float>(d, DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  BufferView xt = x;
  xt.sizes = {3, 2};
  xt.strides = {1, 3};
  BufferView y = in<float>(d, DType::F32, {2}, {10, 20});
  y.sizes = {3, 2};
  y.strides = {0, 1};
  EXPECT_EQ(run<float>(d, "max", {xt, y}, DType::F32, {3, 2}), (std::vector<float>{10, 20, 10, 20, 10, 20}));
  EXPECT_EQ(run<float>(d, "min", {xt, y}, DType::F32, {3, 2}), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // neg of the reversed view [3,2,1] of [1,2,3] = [-3,-2,-1].
  BufferView v = in<float>(d, DType::F32, {3}, {1, 2, 3});
  v.offset = 2;
  v.strides = {-1};
  EXPECT_EQ(run<float>(d, "neg", {v}, DType::F32, {3}), (std::vector<float>{-3, -2, -1}));
  // A zero-size dim writes nothing and reads nothing.
  BufferView empty = blank(d, DType::F32, {0, 3});
  EXPECT_EQ(run<float>(d, "sqrt", {empty}, DType::F32, {0, 3}).size(), 0u);
  EXPECT_EQ(run<uint8_t>(d, "less", {empty, in<float>(d, DType::F32, {3}, {1, 2, 3})}, DType::Bool, {0, 3}).size(), 0u);
}

// ---- matmul --------------------------------------------------------------------------------------

TEST(TransformerKernels, MatmulPlainAndStrided) {
  SimDevice d;
  // [[1,2,3],[4,5,6]] x [[1,2],[3,4],[5,6]]:
  // row 0: [1+6+15, 2+8+18] = [22, 28]; row 1: [4+15+30, 8+20+36] = [49, 64].
  BufferView a = in<float>(d, DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(run<float>(d, "matmul", {a, in<float>(d, DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6})}, DType::F32, {2, 2}),
            (std::vector<float>{22, 28, 49, 64}));
  // b = a transposed through strides {1,3}: a x a^T = [[1+4+9, 4+10+18],[4+10+18, 16+25+36]] = [[14,32],[32,77]].
  BufferView at = a;
  at.sizes = {3, 2};
  at.strides = {1, 3};
  EXPECT_EQ(run<float>(d, "matmul", {a, at}, DType::F32, {2, 2}), (std::vector<float>{14, 32, 32, 77}));
  // i64: [[1,2]] x [[3],[4]] = 1*3 + 2*4 = 11.
  EXPECT_EQ(run<int64_t>(d, "matmul",
                         {in<int64_t>(d, DType::I64, {1, 2}, {1, 2}), in<int64_t>(d, DType::I64, {2, 1}, {3, 4})},
                         DType::I64, {1, 1})[0],
            11);
  // ONNX MatMul admits no 8-bit integers (that is MatMulInteger).
  EXPECT_TRUE(hasParts(errorOf([&] {
                         run<int8_t>(d, "matmul",
                                     {in<int8_t>(d, DType::I8, {1, 1}, {1}), in<int8_t>(d, DType::I8, {1, 1}, {1})},
                                     DType::I8, {1, 1});
                       }),
                       {"kernel 'matmul': unsupported: in 0 (buffer #", ") is i8"}));
  // Mismatched K: [2,3] x [2,2].
  EXPECT_TRUE(contains(errorOf([&] {
                         run<float>(d, "matmul", {a, in<float>(d, DType::F32, {2, 2}, {1, 2, 3, 4})}, DType::F32,
                                    {2, 2});
                       }),
                       "kernel 'matmul': [2,3] x [2,2] does not give [2,2]"));
}

TEST(TransformerKernels, MatmulBroadcastsBatchDims) {
  SimDevice d;
  // a [1,2,2] = [[1,0],[0,1]] (identity, broadcast over the batch) x b [3,2,2] where batch i is
  // [[i,i+1],[i+2,i+3]]: out[i] = b[i], so out = 0..3, 1..4, 2..5.
  BufferView a = in<float>(d, DType::F32, {1, 2, 2}, {1, 0, 0, 1});
  BufferView b = in<float>(d, DType::F32, {3, 2, 2}, {0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5});
  EXPECT_EQ(run<float>(d, "matmul", {a, b}, DType::F32, {3, 2, 2}),
            (std::vector<float>{0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5}));
  // a [2,1,1,2] x b [3,2,1] (ranks differ): batch dims [2,1] and [3] broadcast to [2,3]. a[i] = [i+1, 1], b[j] =
  // [[j],[1]]: out[i,j] = (i+1)*j + 1 -> [[1,2,3],[1,3,5]].
  BufferView a4 = in<float>(d, DType::F32, {2, 1, 1, 2}, {1, 1, 2, 1});
  BufferView b3 = in<float>(d, DType::F32, {3, 2, 1}, {0, 1, 1, 1, 2, 1});
  EXPECT_EQ(run<float>(d, "matmul", {a4, b3}, DType::F32, {2, 3, 1, 1}), (std::vector<float>{1, 2, 3, 1, 3, 5}));
  // Batch dims 2 and 3 do not broadcast: [2,1,2] x [3,2,1].
  EXPECT_TRUE(contains(errorOf([&] {
                         run<float>(d, "matmul", {in<float>(d, DType::F32, {2, 1, 2}, {1, 1, 1, 1}), b3}, DType::F32,
                                    {3, 1, 1});
                       }),
                       "does not give [3,1,1]"));
}

TEST(TransformerKernels, MatmulZeroSizeAndWideAccumulation) {
  SimDevice d;
  // K = 0: every output is the empty sum 0.
  EXPECT_EQ(run<float>(d, "matmul", {blank(d, DType::F32, {2, 0}), blank(d, DType::F32, {0, 3})}, DType::F32, {2, 3}),
            (std::vector<float>(6, 0.0f)));
  // M = 0 or batch 0: nothing to write.
  EXPECT_EQ(run<float>(d, "matmul", {blank(d, DType::F32, {0, 2}), in<float>(d, DType::F32, {2, 1}, {1, 1})},
                       DType::F32, {0, 1})
                .size(),
            0u);
  EXPECT_EQ(run<float>(d, "matmul", {blank(d, DType::F32, {0, 1, 2}), in<float>(d, DType::F32, {2, 1}, {1, 1})},
                       DType::F32, {0, 1, 1})
                .size(),
            0u);
  // f16 [2048, 1, 1] . [1, 1, 1]: an f16 accumulator gives 2048 + 1 = 2049 -> 2048 (tie to even)
  // twice, i.e. 2048; a wide accumulator gives 2050 = 0x6801 exactly. f16 2048 = 0x6800, 1 = 0x3C00.
  EXPECT_EQ(run<uint16_t>(d, "matmul",
                          {in<uint16_t>(d, DType::F16, {1, 3}, {0x6800, 0x3C00, 0x3C00}),
                           in<uint16_t>(d, DType::F16, {3, 1}, {0x3C00, 0x3C00, 0x3C00})},
                          DType::F16, {1, 1})[0],
            0x6801);
}

// ---- softmax and layer_norm ----------------------------------------------------------------------

TEST(TransformerKernels, SoftmaxIsStableForLargeValues) {
  SimDevice d;
  // softmax([1000,1001,1002]) = softmax([-2,-1,0]) = [e^-2, e^-1, 1] / (1 + e^-1 + e^-2)
  // = [0.0900305732, 0.2447284711, 0.6652409558]; a naive exp(1000) would overflow to inf/inf = NaN.
  expectNear(run<float>(d, "softmax", {in<float>(d, DType::F32, {1, 3}, {1000, 1001, 1002})}, DType::F32, {1, 3},
                        {{1}, {}, {}}),
             {0.0900305732, 0.2447284711, 0.6652409558}, 1e-7);
  // Axis 0 of [[0, -inf],[2, -inf]]: column 0 = [1, e^2]/(1+e^2) = [0.1192029220, 0.8807970780];
  // column 1 = exp(-inf - -inf) = NaN (as numpy computes it).
  auto r = run<float>(d, "softmax", {in<float>(d, DType::F32, {2, 2}, {0, -kInf, 2, -kInf})}, DType::F32, {2, 2},
                      {{0}, {}, {}});
  EXPECT_NEAR(r[0], 0.1192029220, 1e-7);
  EXPECT_NEAR(r[2], 0.8807970780, 1e-7);
  EXPECT_TRUE(std::isnan(r[1]) && std::isnan(r[3]));
  // A -inf next to finite values gets exactly 0: softmax([0, -inf]) = [1, 0].
  EXPECT_EQ(run<float>(d, "softmax", {in<float>(d, DType::F32, {2}, {0, -kInf})}, DType::F32, {2}, {{0}, {}, {}}),
            (std::vector<float>{1, 0}));
  // A zero-size axis writes nothing.
  EXPECT_EQ(run<float>(d, "softmax", {blank(d, DType::F32, {2, 0})}, DType::F32, {2, 0}, {{1}, {}, {}}).size(), 0u);
  // The documented axis is non-negative.
  EXPECT_EQ(errorOf([&] {
              run<float>(d, "softmax", {in<float>(d, DType::F32, {2}, {0, 1})}, DType::F32, {2}, {{-1}, {}, {}});
            }),
            "kernel 'softmax': axis -1 out of range for rank 1 (must be non-negative)");
  EXPECT_TRUE(hasParts(errorOf([&] {
                         run<int32_t>(d, "softmax", {in<int32_t>(d, DType::I32, {1}, {0})}, DType::I32, {1},
                                      {{0}, {}, {}});
                       }),
                       {"kernel 'softmax': unsupported: in 0 (buffer #", ") is i32"}));
}

TEST(TransformerKernels, LayerNormWithAndWithoutBias) {
  SimDevice d;
  // X = [[1,2,3,4],[2,2,2,2]], axis 1, eps 1e-5. Row 0: mean 2.5, var (2.25+0.25+0.25+2.25)/4 = 1.25,
  // 1/sqrt(1.25001) = 0.8944236133, (x - mean) * that = [-1.3416354200, -0.4472118067, +, +].
  // Row 1: var 0, so every (x - mean) is 0 and Y = bias.
  BufferView x = in<float>(d, DType::F32, {2, 4}, {1, 2, 3, 4, 2, 2, 2, 2});
  BufferView ones = in<float>(d, DType::F32, {4}, {1, 1, 1, 1});
  expectNear(run<float>(d, "layer_norm", {x, ones}, DType::F32, {2, 4}, {{1}, {1e-5}, {}}),
             {-1.3416354200, -0.4472118067, 0.4472118067, 1.3416354200, 0, 0, 0, 0}, 1e-6);
  // scale [1,2,1,1] and bias [0,0,0,10]: row 0 = [-1.3416354200, -0.8944236133, 0.4472118067, 11.3416354200],
  // row 1 = bias.
  BufferView scale = in<float>(d, DType::F32, {4}, {1, 2, 1, 1}), bias = in<float>(d, DType::F32, {4}, {0, 0, 0, 10});
  expectNear(run<float>(d, "layer_norm", {x, scale, bias}, DType::F32, {2, 4}, {{1}, {1e-5}, {}}),
             {-1.3416354200, -0.8944236133, 0.4472118067, 11.3416354200, 0, 0, 0, 10}, 1e-5);
  // Axis 0 (and -2, which counts from the end) normalizes all 8 values: mean 2.25,
  // var = (1.5625+0.0625+0.5625+3.0625+4*0.0625)/8 = 5.5/8 = 0.6875; with eps 0 and scale [2]
  // (broadcast), Y[0] = 2 * (1 - 2.25)/sqrt(0.6875) = -2.5/0.8291561976 = -3.0151134458.
  for (int64_t axis : {0, -2})
    EXPECT_NEAR(run<float>(d, "layer_norm", {x, in<float>(d, DType::F32, {1}, {2})}, DType::F32, {2, 4},
                           {{axis}, {0.0}, {}})[0],
                -3.0151134458, 1e-6);
  EXPECT_EQ(errorOf([&] { run<float>(d, "layer_norm", {x, ones}, DType::F32, {2, 4}, {{1}, {}, {}}); }),
            "kernel 'layer_norm': missing epsilon (fimm[0])");
  EXPECT_TRUE(hasParts(
      errorOf([&] {
        run<float>(d, "layer_norm", {x, in<float>(d, DType::F32, {3}, {1, 1, 1})}, DType::F32, {2, 4},
                   {{1}, {0.0}, {}});
      }),
      {"kernel 'layer_norm': in 1 (buffer #", ") shape [3] does not broadcast to out 0 (buffer #", ") shape [2,4]"}));
}

// ---- reductions ----------------------------------------------------------------------------------

TEST(TransformerKernels, ReductionsOverSeveralAxes) {
  SimDevice d;
  // x[i,j,k] = 6i + 2j + k, shape [2,3,2] (values 0..11). Over axes {0,2}:
  // sum_j = sum_{i,k} (6i + 2j + k) = 4*2j + 2*6 + 2*1 = 8j + 14 -> [14, 22, 30];
  // mean = sum/4 -> [3.5, 5.5, 7.5]; max_j = 6 + 2j + 1 -> [7, 9, 11].
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>(i);
  BufferView x = in<float>(d, DType::F32, {2, 3, 2}, v);
  KernelArgs axes02{{0, 2}, {}, {}};
  EXPECT_EQ(run<float>(d, "reduce_sum", {x}, DType::F32, {1, 3, 1}, axes02), (std::vector<float>{14, 22, 30}));
  EXPECT_EQ(run<float>(d, "reduce_mean", {x}, DType::F32, {1, 3, 1}, axes02), (std::vector<float>{3.5f, 5.5f, 7.5f}));
  EXPECT_EQ(run<float>(d, "reduce_max", {x}, DType::F32, {1, 3, 1}, axes02), (std::vector<float>{7, 9, 11}));
  // All axes: sum 0..11 = 66, mean 5.5. No axes reduces nothing: out = in.
  EXPECT_EQ(run<float>(d, "reduce_sum", {x}, DType::F32, {1, 1, 1}, {{0, 1, 2}, {}, {}})[0], 66.0f);
  EXPECT_EQ(run<float>(d, "reduce_mean", {x}, DType::F32, {1, 1, 1}, {{0, 1, 2}, {}, {}})[0], 5.5f);
  EXPECT_EQ(run<float>(d, "reduce_sum", {x}, DType::F32, {2, 3, 2}), v);
  // A transposed view xt[k,j,i] = x[i,j,k] (strides {1,2,6}) reduced over axis 2 (= i):
  // sum_i (6i + 2j + k) = 6 + 4j + 2k -> [[6,10,14],[8,12,16]].
  BufferView xt = x;
  xt.sizes = {2, 3, 2};
  xt.strides = {1, 2, 6};
  EXPECT_EQ(run<float>(d, "reduce_sum", {xt}, DType::F32, {2, 3, 1}, {{2}, {}, {}}),
            (std::vector<float>{6, 10, 14, 8, 12, 16}));
  // Axes known only at run time as per-axis flags {1,0,1} = axes {0,2}: same [14, 22, 30].
  EXPECT_EQ(run<float>(d, "reduce_sum", {x}, DType::F32, {1, 3, 1}, {{}, {}, {1, 0, 1}}),
            (std::vector<float>{14, 22, 30}));
  EXPECT_EQ(errorOf([&] { run<float>(d, "reduce_sum", {x}, DType::F32, {1, 3, 1}, {{0}, {}, {1, 0, 1}}); }),
            "kernel 'reduce_sum': expects either axes in imm or one 0/1 flag scalar per input axis (3), not both");
  EXPECT_EQ(errorOf([&] { run<float>(d, "reduce_max", {x}, DType::F32, {1, 3, 1}, {{}, {}, {1, 0, 2}}); }),
            "kernel 'reduce_max': axis flag s[2] must be 0 or 1");
}

TEST(TransformerKernels, ReductionDTypesAndEmptyExtents) {
  SimDevice d;
  // Integer mean truncates toward zero: (1+2)/2 = 1, (-1-2)/2 = -1.5 -> -1.
  EXPECT_EQ(run<int32_t>(d, "reduce_mean", {in<int32_t>(d, DType::I32, {2, 2}, {1, 2, -1, -2})}, DType::I32, {2, 1},
                         {{1}, {}, {}}),
            (std::vector<int32_t>{1, -1}));
  // f16 sum of [2048, 1, 1] accumulates wide: 2050 = 0x6801 (an f16 accumulator gives 2048).
  EXPECT_EQ(run<uint16_t>(d, "reduce_sum", {in<uint16_t>(d, DType::F16, {3}, {0x6800, 0x3C00, 0x3C00})}, DType::F16,
                          {1}, {{0}, {}, {}})[0],
            0x6801);
  // reduce_max: u8 max(3, 250) = 250; bool any -> 1; NaN propagates.
  EXPECT_EQ(run<uint8_t>(d, "reduce_max", {in<uint8_t>(d, DType::U8, {2}, {3, 250})}, DType::U8, {1}, {{0}, {}, {}})[0],
            250);
  EXPECT_EQ(
      run<uint8_t>(d, "reduce_max", {in<uint8_t>(d, DType::Bool, {2}, {0, 1})}, DType::Bool, {1}, {{0}, {}, {}})[0], 1);
  EXPECT_TRUE(std::isnan(
      run<float>(d, "reduce_max", {in<float>(d, DType::F32, {2}, {kNaN, 1})}, DType::F32, {1}, {{0}, {}, {}})[0]));
  // ONNX ReduceSum admits no 8-bit integers.
  EXPECT_TRUE(hasParts(
      errorOf([&] {
        run<uint8_t>(d, "reduce_sum", {in<uint8_t>(d, DType::U8, {2}, {1, 2})}, DType::U8, {1}, {{0}, {}, {}});
      }),
      {"kernel 'reduce_sum': unsupported: in 0 (buffer #", ") is u8; 'reduce_sum' admits f32 f64 f16 bf16 i32 i64"}));
  // Reducing an empty extent ([2,0] over axis 1): sum 0, mean NaN, max an error.
  BufferView empty = blank(d, DType::F32, {2, 0});
  EXPECT_EQ(run<float>(d, "reduce_sum", {empty}, DType::F32, {2, 1}, {{1}, {}, {}}), (std::vector<float>{0, 0}));
  EXPECT_TRUE(std::isnan(run<float>(d, "reduce_mean", {empty}, DType::F32, {2, 1}, {{1}, {}, {}})[1]));
  EXPECT_EQ(errorOf([&] { run<float>(d, "reduce_max", {empty}, DType::F32, {2, 1}, {{1}, {}, {}}); }),
            "kernel 'reduce_max': reduce_max over an empty extent [1,0]");
  // Zero-size kept dim: nothing to reduce into, so no error even for max.
  EXPECT_EQ(run<float>(d, "reduce_max", {blank(d, DType::F32, {0, 3})}, DType::F32, {0, 1}, {{1}, {}, {}}).size(), 0u);
  // Axes must be strictly increasing and in range; the output keeps reduced dims as 1.
  BufferView x = in<float>(d, DType::F32, {2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(errorOf([&] { run<float>(d, "reduce_sum", {x}, DType::F32, {1, 1}, {{1, 0}, {}, {}}); }),
            "kernel 'reduce_sum': axes [1,0] must be strictly increasing in [0, 2)");
  EXPECT_TRUE(hasParts(errorOf([&] { run<float>(d, "reduce_sum", {x}, DType::F32, {2}, {{1}, {}, {}}); }),
                       {"kernel 'reduce_sum': out 0 (buffer #", ") shape [2], expected [2,1]"}));
}

// ---- trilu and cumsum ----------------------------------------------------------------------------

TEST(TransformerKernels, TriluWithPositiveAndNegativeK) {
  SimDevice d;
  // m = [[1,2,3,4],[5,6,7,8],[9,10,11,12]]; element (i,j) is kept by upper when j - i >= k and
  // by lower when j - i <= k.
  BufferView m = in<int32_t>(d, DType::I32, {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  auto trilu = [&](int64_t upper, int64_t k) {
    return run<int32_t>(d, "trilu", {m}, DType::I32, {3, 4}, {{upper}, {}, {k}});
  };
  EXPECT_EQ(trilu(1, 0), (std::vector<int32_t>{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  EXPECT_EQ(trilu(1, 1), (std::vector<int32_t>{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}));
  EXPECT_EQ(trilu(1, -1), (std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12}));
  EXPECT_EQ(trilu(0, 0), (std::vector<int32_t>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(trilu(0, -1), (std::vector<int32_t>{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  EXPECT_EQ(trilu(0, 2), (std::vector<int32_t>{1, 2, 3, 0, 5, 6, 7, 8, 9, 10, 11, 12}));
  // k far beyond the matrix: upper k=5 keeps nothing; lower k=-5 keeps nothing.
  EXPECT_EQ(trilu(1, 5), std::vector<int32_t>(12, 0));
  EXPECT_EQ(trilu(0, -5), std::vector<int32_t>(12, 0));
  // Batched bool [2,2,2] of ones, lower k=0: each [[1,0],[1,1]].
  EXPECT_EQ(run<uint8_t>(d, "trilu", {in<uint8_t>(d, DType::Bool, {2, 2, 2}, std::vector<uint8_t>(8, 1))}, DType::Bool,
                         {2, 2, 2}, {{0}, {}, {0}}),
            (std::vector<uint8_t>{1, 0, 1, 1, 1, 0, 1, 1}));
  // A zero-size batch writes nothing; rank 1 is refused.
  EXPECT_EQ(run<float>(d, "trilu", {blank(d, DType::F32, {0, 2, 2})}, DType::F32, {0, 2, 2}, {{1}, {}, {0}}).size(),
            0u);
  EXPECT_EQ(errorOf([&] {
              run<float>(d, "trilu", {in<float>(d, DType::F32, {2}, {1, 2})}, DType::F32, {2}, {{1}, {}, {0}});
            }),
            "kernel 'trilu': expects rank >= 2, got [2]");
}

TEST(TransformerKernels, CumsumExclusiveAndReverse) {
  SimDevice d;
  // [1,2,3,4]: inclusive [1,3,6,10]; exclusive [0,1,3,6]; reverse [10,9,7,4];
  // reverse exclusive [9,7,4,0].
  BufferView x = in<float>(d, DType::F32, {4}, {1, 2, 3, 4});
  EXPECT_EQ(run<float>(d, "cumsum", {x}, DType::F32, {4}, {{0, 0, 0}, {}, {}}), (std::vector<float>{1, 3, 6, 10}));
  EXPECT_EQ(run<float>(d, "cumsum", {x}, DType::F32, {4}, {{0, 1, 0}, {}, {}}), (std::vector<float>{0, 1, 3, 6}));
  EXPECT_EQ(run<float>(d, "cumsum", {x}, DType::F32, {4}, {{0, 0, 1}, {}, {}}), (std::vector<float>{10, 9, 7, 4}));
  EXPECT_EQ(run<float>(d, "cumsum", {x}, DType::F32, {4}, {{0, 1, 1}, {}, {}}), (std::vector<float>{9, 7, 4, 0}));
  // 2-D i64 [[1,2,3],[4,5,6]]: axis 0 -> [[1,2,3],[5,7,9]]; axis -1 (= 1) -> [[1,3,6],[4,9,15]].
  BufferView m = in<int64_t>(d, DType::I64, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(run<int64_t>(d, "cumsum", {m}, DType::I64, {2, 3}, {{0, 0, 0}, {}, {}}),
            (std::vector<int64_t>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(run<int64_t>(d, "cumsum", {m}, DType::I64, {2, 3}, {{-1, 0, 0}, {}, {}}),
            (std::vector<int64_t>{1, 3, 6, 4, 9, 15}));
  // Axis as scalar s[0] overrides imm[1]: s[0] = -1 with imm axis 0 still gives [[1,3,6],[4,9,15]].
  EXPECT_EQ(run<int64_t>(d, "cumsum", {m}, DType::I64, {2, 3}, {{0, 0, 0}, {}, {-1}}),
            (std::vector<int64_t>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(errorOf([&] { run<int64_t>(d, "cumsum", {m}, DType::I64, {2, 3}, {{0, 0, 0}, {}, {2}}); }),
            "kernel 'cumsum': axis s[0] = 2 out of range for rank 2");
  // ONNX CumSum admits no 8-bit integers; flags must be 0 or 1.
  EXPECT_TRUE(hasParts(errorOf([&] {
                         run<int8_t>(d, "cumsum", {in<int8_t>(d, DType::I8, {1}, {1})}, DType::I8, {1},
                                     {{0, 0, 0}, {}, {}});
                       }),
                       {"kernel 'cumsum': unsupported: in 0 (buffer #", ") is i8"}));
  EXPECT_EQ(errorOf([&] { run<float>(d, "cumsum", {x}, DType::F32, {4}, {{0, 2, 0}, {}, {}}); }),
            "kernel 'cumsum': imm[2] (exclusive) must be 0 or 1");
}

// ---- gathers -------------------------------------------------------------------------------------

TEST(TransformerKernels, GatherElements) {
  SimDevice d;
  // axis 1: data [[1,2],[3,4]], indices [[0,0],[1,0]] -> out[i][j] = data[i][idx[i][j]] = [[1,1],[4,3]].
  EXPECT_EQ(
      run<float>(d, "gather_elements",
                 {in<float>(d, DType::F32, {2, 2}, {1, 2, 3, 4}), in<int64_t>(d, DType::I64, {2, 2}, {0, 0, 1, 0})},
                 DType::F32, {2, 2}, {{1}, {}, {}}),
      (std::vector<float>{1, 1, 4, 3}));
  // axis 0 with negative i32 indices: data [[1,2,3],[4,5,6],[7,8,9]], idx [[-1,-2,0],[-2,0,0]]
  // (-1 -> 2, -2 -> 1): out[i][j] = data[idx[i][j]][j] = [[7,5,3],[4,2,3]].
  BufferView data = in<int32_t>(d, DType::I32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(run<int32_t>(d, "gather_elements", {data, in<int32_t>(d, DType::I32, {2, 3}, {-1, -2, 0, -2, 0, 0})},
                         DType::I32, {2, 3}, {{0}, {}, {}}),
            (std::vector<int32_t>{7, 5, 3, 4, 2, 3}));
  EXPECT_EQ(errorOf([&] {
              run<int32_t>(d, "gather_elements", {data, in<int64_t>(d, DType::I64, {1, 1}, {3})}, DType::I32, {1, 1},
                           {{1}, {}, {}});
            }),
            "kernel 'gather_elements': index 3 out of range for axis 1 of size 3");
  EXPECT_EQ(errorOf([&] {
              run<int32_t>(d, "gather_elements", {data, in<int64_t>(d, DType::I64, {1, 1}, {-4})}, DType::I32, {1, 1},
                           {{0}, {}, {}});
            }),
            "kernel 'gather_elements': index -4 out of range for axis 0 of size 3");
  EXPECT_TRUE(hasParts(
      errorOf([&] {
        run<int32_t>(d, "gather_elements", {data, in<float>(d, DType::F32, {1, 1}, {0})}, DType::I32, {1, 1},
                     {{0}, {}, {}});
      }),
      {"kernel 'gather_elements': unsupported: in 1 (buffer #", ") is f32; 'gather_elements' admits i32 i64"}));
}

TEST(TransformerKernels, GatherND) {
  SimDevice d;
  // batch_dims 0, data [[0,1],[2,3]]: indices [[0,0],[1,1]] pick elements -> [0,3];
  // indices [[1],[0]] pick rows -> [[2,3],[0,1]].
  BufferView data = in<int64_t>(d, DType::I64, {2, 2}, {0, 1, 2, 3});
  EXPECT_EQ(run<int64_t>(d, "gather_nd", {data, in<int64_t>(d, DType::I64, {2, 2}, {0, 0, 1, 1})}, DType::I64, {2},
                         {{0}, {}, {}}),
            (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(run<int64_t>(d, "gather_nd", {data, in<int64_t>(d, DType::I64, {2, 1}, {1, 0})}, DType::I64, {2, 2},
                         {{0}, {}, {}}),
            (std::vector<int64_t>{2, 3, 0, 1}));
  // batch_dims 1, data [2,2,2] = [[[0,1],[2,3]],[[4,5],[6,7]]], indices [[1],[0]]: batch 0 takes
  // row 1 of its matrix = [2,3], batch 1 takes row 0 = [4,5] -> [[2,3],[4,5]].
  BufferView d3 = in<float>(d, DType::F32, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(
      run<float>(d, "gather_nd", {d3, in<int64_t>(d, DType::I64, {2, 1}, {1, 0})}, DType::F32, {2, 2}, {{1}, {}, {}}),
      (std::vector<float>{2, 3, 4, 5}));
  // batch_dims 1 with full index tuples and a negative index: indices [[[1,-1]],[[0,1]]] ->
  // batch 0: d3[0][1][1] = 3; batch 1: d3[1][0][1] = 5 -> [[3],[5]].
  EXPECT_EQ(run<float>(d, "gather_nd", {d3, in<int32_t>(d, DType::I32, {2, 1, 2}, {1, -1, 0, 1})}, DType::F32, {2, 1},
                       {{1}, {}, {}}),
            (std::vector<float>{3, 5}));
  EXPECT_EQ(errorOf([&] {
              run<float>(d, "gather_nd", {d3, in<int64_t>(d, DType::I64, {2, 1}, {1, 2})}, DType::F32, {2, 2},
                         {{1}, {}, {}});
            }),
            "kernel 'gather_nd': index 2 out of range for axis 1 of size 2");
  EXPECT_EQ(errorOf([&] {
              run<float>(d, "gather_nd", {d3, in<int64_t>(d, DType::I64, {2, 3}, {0, 0, 0, 0, 0, 0})}, DType::F32, {2},
                         {{1}, {}, {}});
            }),
            "kernel 'gather_nd': the last indices dim is 3, must be in [1, 2] (data rank - batch_dims)");
  EXPECT_TRUE(contains(errorOf([&] {
                         run<float>(d, "gather_nd", {d3, in<int64_t>(d, DType::I64, {3, 1}, {0, 0, 0})}, DType::F32,
                                    {3, 2}, {{1}, {}, {}});
                       }),
                       "kernel 'gather_nd': batch dim 0 differs"));
}

// ---- range length --------------------------------------------------------------------------------

TEST(TransformerKernels, RangeLengthCountsLikeOnnxRange) {
  SimDevice d;
  auto count = [&](DType t, auto s, auto l, auto step) {
    using T = decltype(s);
    return run<int64_t>(d, "range_length", {in<T>(d, t, {}, {s}), in<T>(d, t, {}, {l}), in<T>(d, t, {}, {step})},
                        DType::I64, {})[0];
  };
  // ceil((5 - 1) / 2) = 2; ceil((10 - 1) / 3) = ceil(3) = 3; ceil((1 - 0.5) / 0.3) = ceil(1.67) = 2.
  EXPECT_EQ(count(DType::F32, 1.0f, 5.0f, 2.0f), 2);
  EXPECT_EQ(count(DType::F32, 1.0f, 10.0f, 3.0f), 3);
  EXPECT_EQ(count(DType::F64, 0.5, 1.0, 0.3), 2);
  // Negative delta: ceil((1 - 10) / -3) = 3; the wrong direction gives max(ceil(-4/2), 0) = 0.
  EXPECT_EQ(count(DType::F32, 10.0f, 1.0f, -3.0f), 3);
  EXPECT_EQ(count(DType::F32, 5.0f, 1.0f, 2.0f), 0);
  // Integers exactly: ceil(7 / 2) = 4, ceil(-7 / -2) = 4, ceil(6 / 3) = 2, ceil(-5 / 1) -> 0.
  EXPECT_EQ(count(DType::I64, int64_t{0}, int64_t{7}, int64_t{2}), 4);
  EXPECT_EQ(count(DType::I64, int64_t{7}, int64_t{0}, int64_t{-2}), 4);
  EXPECT_EQ(count(DType::I32, int32_t{0}, int32_t{6}, int32_t{3}), 2);
  EXPECT_EQ(count(DType::I32, int32_t{5}, int32_t{0}, int32_t{1}), 0);
  EXPECT_EQ(errorOf([&] { count(DType::F32, 0.0f, 1.0f, 0.0f); }), "kernel 'range_length': delta is 0");
}

// ---- loading -------------------------------------------------------------------------------------

TEST(TransformerKernels, EveryKernelNameIsLoadableAndImplementedOnSim) {
  // Launching each Program.h name with no operands must fail on operands, never as an unknown
  // kernel: the sim has an implementation for every name the loader accepts.
  SimDevice d;
  for (const char *name : {"pow",
                           "max",
                           "min",
                           "and",
                           "or",
                           "less",
                           "less_equal",
                           "greater",
                           "greater_equal",
                           "neg",
                           "sqrt",
                           "reciprocal",
                           "sigmoid",
                           "tanh",
                           "erf",
                           "exp",
                           "cos",
                           "sin",
                           "not",
                           "isnan",
                           "matmul",
                           "softmax",
                           "layer_norm",
                           "reduce_sum",
                           "reduce_mean",
                           "reduce_max",
                           "trilu",
                           "cumsum",
                           "gather_elements",
                           "gather_nd"})
    EXPECT_TRUE(isKernelName(name)) << name;
  for (const std::string &name : kernelNames()) {
    std::string err = errorOf([&] { d.launch(name, {}, {}, {}); });
    EXPECT_TRUE(contains(err, "kernel '" + name + "': ")) << err;
    EXPECT_FALSE(contains(err, "unsupported: kernel")) << err;
  }
}

TEST(TransformerKernels, ProgramWithSoftmaxRunsThroughTheVm) {
  // y = softmax(x, axis 1) for x = [[0, ln 3]] -> [1, 3] / 4 = [0.25, 0.75].
  test::Builder b;
  b.addInput("x", DType::F32, {1, 2});
  b.addOutput("y", DType::F32, {1, 2});
  int32_t x = b.input(0);
  int32_t y = b.allocOutput(0, DType::F32, {b.index(1), b.index(2)});
  b.kernel("softmax", {x}, {y}, {1});
  b.ret({y});
  SimDevice d;
  RunResult r = runProgram(b.program, d, {HostTensor::fromValues<float>(DType::F32, {1, 2}, {0.0f, std::log(3.0f)})});
  expectNear(r.outputs[0].values<float>(), {0.25, 0.75}, 1e-7);
}
