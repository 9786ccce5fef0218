#include "TestModels.h"

#include "dynqual/compare/Compare.h"
#include "dynqual/compare/MovementGraph.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace dynqual;
using namespace dynqual::compare;

namespace {

Tensor f32(std::vector<double> v) {
  return Tensor::fromDoubles(DType::Float, {static_cast<int64_t>(v.size())}, v);
}

} // namespace

TEST(Compare, OneUlpPasses) {
  Tensor b = f32({1, 2, 3, 4});
  Tensor a = b;
  float v = 2.0f;
  v = std::nextafter(v, 3.0f); // 2 + 2^-22
  a.setDouble(1, v);
  OutputComparison r = compareOutput("y", a, b);
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.reason;
  // l2 = 2^-22, ||b|| = sqrt(30): rel-L2 = 2^-22 / sqrt(30) ~ 4.35e-8.
  EXPECT_DOUBLE_EQ(r.l2, std::ldexp(1.0, -22));
  EXPECT_NEAR(r.relL2, std::ldexp(1.0, -22) / std::sqrt(30.0), 1e-15);
  EXPECT_DOUBLE_EQ(r.maxAbs, std::ldexp(1.0, -22));
  // The same 1-ulp change is a failure in bit-exact mode.
  CompareOptions exact;
  exact.bitExact = true;
  EXPECT_EQ(compareOutput("y", a, b, exact).verdict, Verdict::Fail);
}

TEST(Compare, PerturbationOf1em3Fails) {
  Tensor b = f32({1, 2, 3, 4});
  Tensor a = f32({1, 2 + 1e-3, 3, 4});
  OutputComparison r = compareOutput("y", a, b);
  // rel-L2 = 1e-3 / sqrt(30) ~ 1.8e-4 > 1e-5. Storing 2.001 as f32 moves it by at most half an
  // ulp (1.2e-7), i.e. 2.2e-8 of rel-L2.
  EXPECT_EQ(r.verdict, Verdict::Fail);
  EXPECT_NEAR(r.relL2, 1e-3 / std::sqrt(30.0), 2.2e-8);
  EXPECT_NE(r.reason.find("rel-L2"), std::string::npos) << r.reason;
}

TEST(Compare, NaNPatternMismatchFails) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // Same pattern: the NaN and Inf are skipped (2 elements), the finite ones equal -> pass.
  OutputComparison same = compareOutput("y", f32({nan, inf, 1}), f32({nan, inf, 1}));
  EXPECT_EQ(same.verdict, Verdict::Pass) << same.reason;
  EXPECT_EQ(same.nonFiniteSkipped, 2);
  // NaN vs finite fails even though the finite part agrees.
  OutputComparison diff = compareOutput("y", f32({nan, 1}), f32({0, 1}));
  EXPECT_EQ(diff.verdict, Verdict::Fail);
  EXPECT_NE(diff.reason.find("NaN/Inf pattern"), std::string::npos);
  // +Inf vs -Inf also differs.
  EXPECT_EQ(compareOutput("y", f32({inf}), f32({-inf})).verdict, Verdict::Fail);
  // Bit-exact mode treats any NaN as equal to any NaN.
  CompareOptions exact;
  exact.bitExact = true;
  Tensor a = f32({nan}), b = f32({nan});
  const uint32_t otherNaN = 0x7FC00001;
  std::memcpy(a.elementPtr(0), &otherNaN, 4);
  EXPECT_EQ(compareOutput("y", a, b, exact).verdict, Verdict::Pass);
}

TEST(Compare, ZeroNormUsesAbsoluteGate) {
  // ||b|| = 0: l2 = 1e-7 <= 1e-6 passes; l2 = 1e-5 fails.
  OutputComparison small = compareOutput("y", f32({1e-7, 0}), f32({0, 0}));
  EXPECT_EQ(small.verdict, Verdict::Pass) << small.reason;
  EXPECT_EQ(small.cosine, 0); // one side has zero norm
  OutputComparison large = compareOutput("y", f32({1e-5, 0}), f32({0, 0}));
  EXPECT_EQ(large.verdict, Verdict::Fail);
  EXPECT_NE(large.reason.find("norm is 0"), std::string::npos);
  EXPECT_EQ(compareOutput("y", f32({0}), f32({0})).cosine, 1);
}

TEST(Compare, CosineAndCombined) {
  // a = [1, 0], b = [0, 1]: cosine 0; a = [2, 0], b = [1, 0]: cosine 1.
  EXPECT_DOUBLE_EQ(compareOutput("y", f32({1, 0}), f32({0, 1})).cosine, 0);
  EXPECT_DOUBLE_EQ(compareOutput("y", f32({2, 0}), f32({1, 0})).cosine, 1);
  // Combined over [3]vs[0] and [4]vs[0]: sqrt(9 + 16) = 5; ints add nothing.
  Comparison c = compareOutputs({"p", "q", "n"}, {f32({3}), f32({4}), Tensor::fromInts(DType::Int64, {1}, {1})},
                                {f32({0}), f32({0}), Tensor::fromInts(DType::Int64, {1}, {1})});
  EXPECT_DOUBLE_EQ(c.combinedL2, 5);
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_NE(c.reason.find("output 'p'"), std::string::npos) << c.reason;
}

TEST(Compare, IntegersExactShapesAndDTypesChecked) {
  Tensor b = Tensor::fromInts(DType::Int64, {3}, {1, 2, 3});
  EXPECT_EQ(compareOutput("y", b, b).verdict, Verdict::Pass);
  OutputComparison r = compareOutput("y", Tensor::fromInts(DType::Int64, {3}, {1, 2, 4}), b);
  EXPECT_EQ(r.verdict, Verdict::Fail);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(compareOutput("y", b.reshaped({3, 1}), b).verdict, Verdict::Fail);
  EXPECT_EQ(compareOutput("y", Tensor::fromInts(DType::Int32, {3}, {1, 2, 3}), b).verdict, Verdict::Fail);
  Tensor t = Tensor::fromInts(DType::Bool, {2}, {1, 0});
  EXPECT_EQ(compareOutput("y", Tensor::fromInts(DType::Bool, {2}, {1, 1}), t).verdict, Verdict::Fail);
  EXPECT_EQ(compareOutputs({}, {b}, {}).verdict, Verdict::Fail);
}

TEST(MovementGraph, ClassifiesOpSets) {
  Tensor x = f32({1});
  onnx::ModelProto m = dynqual::test::singleNodeModel("Transpose", {x}, 13);
  dynqual::test::addNode(m, "Reshape", {"y0", "s"}, {"z"});
  EXPECT_TRUE(isDataMovementOnly(m));
  dynqual::test::addNode(m, "Add", {"z", "z"}, {"w"});
  EXPECT_FALSE(isDataMovementOnly(m));
}
