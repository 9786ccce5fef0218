// The sim's two precision modes (docs/devices.md, "Precision modes") against hand calculations:
// Exact rounds once from double, ElementType rounds every accumulation step to fp32.
#include "DeviceTestUtil.h"
#include "dq/runtime/SimDevice.h"

#include <cmath>

using namespace dq::rt;
using dq::rt::test::in;
using dq::rt::test::run;

namespace {

// 2^-24: half an ulp of 1.0f. 1 + 2^-24 is a tie between 1 and 1 + 2^-23 that rounds to even (1).
const float kHalfUlp = std::ldexp(1.0f, -24);

} // namespace

TEST(SimPrecision, DeviceNamesAndDefault) {
  EXPECT_EQ(createDevice("sim")->name(), "sim");
  EXPECT_EQ(createDevice("sim-elem")->name(), "sim-elem");
  EXPECT_EQ(SimDevice().precision(), SimPrecision::Exact);
}

TEST(SimPrecision, MatmulAccumulatesInFp32OnlyInElementTypeMode) {
  // [1, h, h] . [1, 1, 1] with h = 2^-24. Exact: 1 + 2^-23, a float. Fp32 steps: 1 + h ties to
  // 1 (even), twice, so 1.
  for (SimPrecision p : {SimPrecision::Exact, SimPrecision::ElementType}) {
    SimDevice d(p);
    auto y = run<float>(
        d, "matmul",
        {in<float>(d, DType::F32, {1, 3}, {1, kHalfUlp, kHalfUlp}), in<float>(d, DType::F32, {3, 1}, {1, 1, 1})},
        DType::F32, {1, 1});
    EXPECT_EQ(y[0], p == SimPrecision::Exact ? 1.0f + 2 * kHalfUlp : 1.0f) << d.name();
  }
}

TEST(SimPrecision, ReduceSumAndCumsumRoundEveryStep) {
  SimDevice exact, elem(SimPrecision::ElementType);
  for (SimDevice *d : {&exact, &elem}) {
    const bool f32 = d == &elem;
    auto x = [&] { return in<float>(*d, DType::F32, {3}, {1, kHalfUlp, kHalfUlp}); };
    // reduce_sum over axis 0: as the matmul above.
    auto s = run<float>(*d, "reduce_sum", {x()}, DType::F32, {1}, KernelArgs{{0}, {}, {}});
    EXPECT_EQ(s[0], f32 ? 1.0f : 1.0f + 2 * kHalfUlp) << d->name();
    // cumsum: [1, 1 + h, 1 + 2h] rounds to [1, 1, 1 + 2^-23] exactly, and to [1, 1, 1] with fp32 steps.
    auto c = run<float>(*d, "cumsum", {x()}, DType::F32, {3}, KernelArgs{{0, 0, 0}, {}, {}});
    EXPECT_EQ(c[2], f32 ? 1.0f : 1.0f + 2 * kHalfUlp) << d->name();
  }
}

TEST(SimPrecision, F64AndIntegersAreTheSameInBothModes) {
  SimDevice elem(SimPrecision::ElementType);
  // f64: 1 + 2^-30 + 2^-30 = 1 + 2^-29 is exact in double; fp32 steps would give 1 (2^-30 is
  // below half an fp32 ulp of 1), and they apply to f32/f16/bf16 only.
  const double h = std::ldexp(1.0, -30);
  auto y = run<double>(elem, "reduce_sum", {in<double>(elem, DType::F64, {3}, {1, h, h})}, DType::F64, {1},
                       KernelArgs{{0}, {}, {}});
  EXPECT_EQ(y[0], 1.0 + 2 * h);
  // i64 sums stay exact: 2^40 + 1 + 1.
  auto i = run<int64_t>(elem, "reduce_sum", {in<int64_t>(elem, DType::I64, {3}, {int64_t{1} << 40, 1, 1})}, DType::I64,
                        {1}, KernelArgs{{0}, {}, {}});
  EXPECT_EQ(i[0], (int64_t{1} << 40) + 2);
}

TEST(SimPrecision, ElementwiseKernelsAgreeBetweenModes) {
  // A single +, *, exp or tanh rounds once in both modes (a double result rounded to fp32 is the
  // correctly rounded fp32 result for + and *), so elementwise outputs are identical.
  SimDevice exact, elem(SimPrecision::ElementType);
  std::vector<float> a = {1, kHalfUlp, 3.25f, -0.7f}, b = {kHalfUlp, 1, 1e-8f, 2.5f};
  for (const char *k : {"add", "mul", "div"})
    EXPECT_EQ(run<float>(exact, k, {in<float>(exact, DType::F32, {4}, a), in<float>(exact, DType::F32, {4}, b)},
                         DType::F32, {4}),
              run<float>(elem, k, {in<float>(elem, DType::F32, {4}, a), in<float>(elem, DType::F32, {4}, b)},
                         DType::F32, {4}))
        << k;
  for (const char *k : {"exp", "tanh", "sqrt"})
    EXPECT_EQ(run<float>(exact, k, {in<float>(exact, DType::F32, {4}, b)}, DType::F32, {4}),
              run<float>(elem, k, {in<float>(elem, DType::F32, {4}, b)}, DType::F32, {4}))
        << k;
}
