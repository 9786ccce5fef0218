// Sim kernels of the elementwise and reduction tail (relu ... one_hot) against hand-computed
// values; each expectation states its calculation.
#include "DeviceTestUtil.h"
#include "dq/runtime/ProgramCheck.h"
#include "dq/runtime/SimDevice.h"

#include <cmath>
#include <limits>

using namespace dq::rt;
using dq::rt::test::errorOf;
using dq::rt::test::in;
using dq::rt::test::run;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

} // namespace

TEST(TailKernels, UnaryMath) {
  SimDevice d;
  auto x = [&] { return in<float>(d, DType::F32, {6}, {-2.5f, -0.5f, 0.5f, 1.5f, 2.5f, kNaN}); };
  // relu: negatives to 0, NaN stays.
  auto r = run<float>(d, "relu", {x()}, DType::F32, {6});
  EXPECT_EQ(std::vector<float>(r.begin(), r.end() - 1), (std::vector<float>{0, 0, 0.5f, 1.5f, 2.5f}));
  EXPECT_TRUE(std::isnan(r[5]));
  // round: halves to even: -2.5 -> -2, -0.5 -> -0, 0.5 -> 0, 1.5 -> 2, 2.5 -> 2.
  auto ro = run<float>(d, "round", {x()}, DType::F32, {6});
  EXPECT_EQ(std::vector<float>(ro.begin(), ro.end() - 1), (std::vector<float>{-2, -0.0f, 0, 2, 2}));
  // floor / ceil of -2.5, -0.5, 0.5, 1.5, 2.5.
  auto fl = run<float>(d, "floor", {x()}, DType::F32, {6});
  EXPECT_EQ(std::vector<float>(fl.begin(), fl.end() - 1), (std::vector<float>{-3, -1, 0, 1, 2}));
  auto ce = run<float>(d, "ceil", {x()}, DType::F32, {6});
  EXPECT_EQ(std::vector<float>(ce.begin(), ce.end() - 1), (std::vector<float>{-2, -0.0f, 1, 2, 3}));
  // sign and abs on floats and integers; abs(INT8_MIN) wraps to -128.
  auto sg = run<float>(d, "sign", {x()}, DType::F32, {6});
  EXPECT_EQ(std::vector<float>(sg.begin(), sg.end() - 1), (std::vector<float>{-1, -1, 1, 1, 1}));
  EXPECT_TRUE(std::isnan(sg[5]));
  EXPECT_EQ(run<int8_t>(d, "abs", {in<int8_t>(d, DType::I8, {3}, {-128, -3, 4})}, DType::I8, {3}),
            (std::vector<int8_t>{-128, 3, 4}));
  EXPECT_EQ(run<int32_t>(d, "sign", {in<int32_t>(d, DType::I32, {3}, {-7, 0, 9})}, DType::I32, {3}),
            (std::vector<int32_t>{-1, 0, 1}));
  // log(e) = 1, log(0) = -inf.
  auto lg = run<double>(d, "log", {in<double>(d, DType::F64, {2}, {std::exp(1.0), 0})}, DType::F64, {2});
  EXPECT_EQ(lg[0], 1.0);
  EXPECT_EQ(lg[1], -std::numeric_limits<double>::infinity());
  // log admits floats only (ONNX Log).
  EXPECT_TRUE(
      contains(errorOf([&] { run<int32_t>(d, "log", {in<int32_t>(d, DType::I32, {1}, {1})}, DType::I32, {1}); }),
               "kernel 'log': unsupported: "));
  // leaky_relu alpha 0.5: [-4, 2] -> [-2, 2].
  EXPECT_EQ(run<float>(d, "leaky_relu", {in<float>(d, DType::F32, {2}, {-4, 2})}, DType::F32, {2}, {{}, {0.5}, {}}),
            (std::vector<float>{-2, 2}));
}

TEST(TailKernels, ModXor) {
  SimDevice d;
  // mod (divisor's sign): -7 mod 3 = 2, 7 mod -3 = -2, -7 mod -3 = -1, 6 mod 3 = 0.
  EXPECT_EQ(
      run<int32_t>(d, "mod",
                   {in<int32_t>(d, DType::I32, {4}, {-7, 7, -7, 6}), in<int32_t>(d, DType::I32, {4}, {3, -3, -3, 3})},
                   DType::I32, {4}),
      (std::vector<int32_t>{2, -2, -1, 0}));
  // fmod (dividend's sign): -7 fmod 3 = -1, 7 fmod -3 = 1; floats: 5.5 fmod 2 = 1.5, -5.5 fmod 2 = -1.5.
  EXPECT_EQ(run<int64_t>(d, "fmod",
                         {in<int64_t>(d, DType::I64, {2}, {-7, 7}), in<int64_t>(d, DType::I64, {2}, {3, -3})},
                         DType::I64, {2}),
            (std::vector<int64_t>{-1, 1}));
  EXPECT_EQ(run<float>(d, "fmod", {in<float>(d, DType::F32, {2}, {5.5f, -5.5f}), in<float>(d, DType::F32, {}, {2})},
                       DType::F32, {2}),
            (std::vector<float>{1.5f, -1.5f}));
  EXPECT_EQ(errorOf([&] {
              run<int32_t>(d, "mod", {in<int32_t>(d, DType::I32, {1}, {1}), in<int32_t>(d, DType::I32, {1}, {0})},
                           DType::I32, {1});
            }),
            "kernel 'mod': integer modulo by zero");
  // xor truth table.
  EXPECT_EQ(
      run<uint8_t>(d, "xor",
                   {in<uint8_t>(d, DType::Bool, {4}, {0, 0, 1, 1}), in<uint8_t>(d, DType::Bool, {4}, {0, 1, 0, 1})},
                   DType::Bool, {4}),
      (std::vector<uint8_t>{0, 1, 1, 0}));
}

TEST(TailKernels, Reductions) {
  SimDevice d;
  // x = [[1, -2, 3], [4, 5, -6]] reduced over axis 1.
  auto x = [&] { return in<float>(d, DType::F32, {2, 3}, {1, -2, 3, 4, 5, -6}); };
  KernelArgs ax1{{1}, {}, {}};
  EXPECT_EQ(run<float>(d, "reduce_min", {x()}, DType::F32, {2, 1}, ax1), (std::vector<float>{-2, -6}));
  EXPECT_EQ(run<float>(d, "reduce_prod", {x()}, DType::F32, {2, 1}, ax1), (std::vector<float>{-6, -120}));
  // sum of squares: 1 + 4 + 9 = 14, 16 + 25 + 36 = 77; l2 = sqrt of those.
  EXPECT_EQ(run<float>(d, "reduce_sum_square", {x()}, DType::F32, {2, 1}, ax1), (std::vector<float>{14, 77}));
  EXPECT_EQ(run<float>(d, "reduce_l2", {x()}, DType::F32, {2, 1}, ax1),
            (std::vector<float>{static_cast<float>(std::sqrt(14.0)), static_cast<float>(std::sqrt(77.0))}));
  // log_sum_exp of [0, ln 2, ln 5] = ln 8.
  auto lse = run<double>(d, "reduce_log_sum_exp", {in<double>(d, DType::F64, {3}, {0, std::log(2.0), std::log(5.0)})},
                         DType::F64, {1}, {{0}, {}, {}});
  EXPECT_NEAR(lse[0], std::log(8.0), 1e-15);
  // Integers: prod of [3, -4] = -12; l2 of [3, 4] = 5; sum_square of [3, 4] = 25.
  EXPECT_EQ(
      run<int64_t>(d, "reduce_prod", {in<int64_t>(d, DType::I64, {2}, {3, -4})}, DType::I64, {1}, {{0}, {}, {}})[0],
      -12);
  EXPECT_EQ(run<int32_t>(d, "reduce_l2", {in<int32_t>(d, DType::I32, {2}, {3, 4})}, DType::I32, {1}, {{0}, {}, {}})[0],
            5);
  EXPECT_EQ(run<int32_t>(d, "reduce_sum_square", {in<int32_t>(d, DType::I32, {2}, {3, 4})}, DType::I32, {1},
                         {{0}, {}, {}})[0],
            25);
  // NaN propagates in min; bool min is "all".
  EXPECT_TRUE(std::isnan(
      run<float>(d, "reduce_min", {in<float>(d, DType::F32, {2}, {kNaN, 1})}, DType::F32, {1}, {{0}, {}, {}})[0]));
  EXPECT_EQ(
      run<uint8_t>(d, "reduce_min", {in<uint8_t>(d, DType::Bool, {2}, {1, 0})}, DType::Bool, {1}, {{0}, {}, {}})[0], 0);
  // Empty extents: prod 1, l2 0, log_sum_exp -inf, min an error.
  auto empty = [&] { return dq::rt::test::blank(d, DType::F32, {2, 0}); };
  EXPECT_EQ(run<float>(d, "reduce_prod", {empty()}, DType::F32, {2, 1}, ax1), (std::vector<float>{1, 1}));
  EXPECT_EQ(run<float>(d, "reduce_l2", {empty()}, DType::F32, {2, 1}, ax1), (std::vector<float>{0, 0}));
  EXPECT_EQ(run<float>(d, "reduce_log_sum_exp", {empty()}, DType::F32, {2, 1}, ax1),
            (std::vector<float>{-kInf, -kInf}));
  EXPECT_EQ(errorOf([&] { run<float>(d, "reduce_min", {empty()}, DType::F32, {2, 1}, ax1); }),
            "kernel 'reduce_min': reduce_min over an empty extent [1,0]");
}

TEST(TailKernels, LogSoftmax) {
  SimDevice d;
  // [0, ln 3]: log softmax = [ln(1/4), ln(3/4)].
  auto y = run<double>(d, "log_softmax", {in<double>(d, DType::F64, {1, 2}, {0, std::log(3.0)})}, DType::F64, {1, 2},
                       {{1}, {}, {}});
  EXPECT_NEAR(y[0], std::log(0.25), 1e-15);
  EXPECT_NEAR(y[1], std::log(0.75), 1e-15);
  // Large inputs do not overflow: [1000, 1000] -> [-ln 2, -ln 2].
  auto big =
      run<float>(d, "log_softmax", {in<float>(d, DType::F32, {2}, {1000, 1000})}, DType::F32, {2}, {{0}, {}, {}});
  EXPECT_FLOAT_EQ(big[0], static_cast<float>(-std::log(2.0)));
}

TEST(TailKernels, ArgMaxArgMin) {
  SimDevice d;
  // x = [[2, 7, 7], [5, 1, 5]] along axis 1.
  auto x = [&] { return in<float>(d, DType::F32, {2, 3}, {2, 7, 7, 5, 1, 5}); };
  EXPECT_EQ(run<int64_t>(d, "arg_max", {x()}, DType::I64, {2, 1}, {{1, 0}, {}, {}}), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(run<int64_t>(d, "arg_max", {x()}, DType::I64, {2, 1}, {{1, 1}, {}, {}}), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(run<int64_t>(d, "arg_min", {x()}, DType::I64, {2, 1}, {{1, 0}, {}, {}}), (std::vector<int64_t>{0, 1}));
  // Along axis 0: 2 < 5 -> row 1; 7 > 1 -> row 0; 7 > 5 -> row 0.
  EXPECT_EQ(run<int64_t>(d, "arg_max", {x()}, DType::I64, {1, 3}, {{0, 0}, {}, {}}), (std::vector<int64_t>{1, 0, 0}));
  // NaN is the extreme for both: first NaN at 1, last NaN at 2.
  auto n = [&] { return in<float>(d, DType::F32, {3}, {1, kNaN, kNaN}); };
  EXPECT_EQ(run<int64_t>(d, "arg_min", {n()}, DType::I64, {1}, {{0, 0}, {}, {}})[0], 1);
  EXPECT_EQ(run<int64_t>(d, "arg_max", {n()}, DType::I64, {1}, {{0, 1}, {}, {}})[0], 2);
  // Integers: arg_max of i8 [-1, 3, 3] = 1.
  EXPECT_EQ(
      run<int64_t>(d, "arg_max", {in<int8_t>(d, DType::I8, {3}, {-1, 3, 3})}, DType::I64, {1}, {{0, 0}, {}, {}})[0], 1);
}

TEST(TailKernels, OneHot) {
  SimDevice d;
  // indices [1, -1, 5] depth 3 (axis 1), values [0, 9]: rows e1, e2 (-1 + 3), off (5 out of range).
  EXPECT_EQ(run<float>(d, "one_hot",
                       {in<int64_t>(d, DType::I64, {3}, {1, -1, 5}), in<float>(d, DType::F32, {2}, {0, 9})}, DType::F32,
                       {3, 3}, {{1}, {}, {}}),
            (std::vector<float>{0, 9, 0, 0, 0, 9, 0, 0, 0}));
  // Depth on axis 0 with float indices truncated: [0.9, 2.2] -> positions 0 and 2: out[j][i].
  EXPECT_EQ(run<int32_t>(d, "one_hot",
                         {in<float>(d, DType::F32, {2}, {0.9f, 2.2f}), in<int32_t>(d, DType::I32, {2}, {-1, 1})},
                         DType::I32, {3, 2}, {{0}, {}, {}}),
            (std::vector<int32_t>{1, -1, -1, -1, -1, 1}));
}

TEST(TailKernels, NamesAreLoadable) {
  for (const char *name : {"relu",
                           "abs",
                           "log",
                           "floor",
                           "ceil",
                           "round",
                           "sign",
                           "xor",
                           "mod",
                           "fmod",
                           "leaky_relu",
                           "log_softmax",
                           "reduce_min",
                           "reduce_prod",
                           "reduce_l2",
                           "reduce_sum_square",
                           "reduce_log_sum_exp",
                           "arg_max",
                           "arg_min",
                           "one_hot"})
    EXPECT_TRUE(isKernelName(name)) << name;
}
