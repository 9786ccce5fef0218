#include "dynqual/tensor/HalfFloat.h"
#include "dynqual/tensor/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace dynqual;

TEST(DType, RejectsUnsupportedCodesByName) {
  EXPECT_EQ(dtypeFromOnnx(16), DType::BFloat16);
  try {
    dtypeFromOnnx(8);
    FAIL() << "STRING accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported dtype STRING"), std::string::npos) << e.what();
  }
  EXPECT_THROW(dtypeFromOnnx(12), std::runtime_error); // UINT32
  EXPECT_THROW(dtypeFromOnnx(0), std::runtime_error);
}

TEST(Tensor, ZeroSizeDimsAreLegal) {
  Tensor t(DType::Float, {2, 0, 3});
  EXPECT_EQ(t.numel(), 0);
  EXPECT_TRUE(t.bytes().empty());
  Tensor scalar(DType::Int64, {});
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_THROW(Tensor(DType::Float, {-1}), std::invalid_argument);
}

TEST(Tensor, ByteSizeIsChecked) {
  EXPECT_THROW(Tensor(DType::Int32, {2}, std::vector<uint8_t>(7)), std::invalid_argument);
}

TEST(Tensor, IntegerStoresWrap) {
  // 300 mod 256 = 44; -1 as u8 = 255; 2^31 as i32 = -2^31.
  Tensor t = Tensor::fromInts(DType::Uint8, {2}, {300, -1});
  EXPECT_EQ(t.getInt(0), 44);
  EXPECT_EQ(t.getInt(1), 255);
  Tensor i = Tensor::fromInts(DType::Int32, {1}, {int64_t{1} << 31});
  EXPECT_EQ(i.getInt(0), -(int64_t{1} << 31));
}

TEST(Tensor, FloatToIntTruncatesTowardZero) {
  Tensor t = Tensor::fromDoubles(DType::Int64, {3}, {2.9, -2.9, std::nan("")});
  EXPECT_EQ(t.getInt(0), 2);
  EXPECT_EQ(t.getInt(1), -2);
  EXPECT_EQ(t.getInt(2), 0);
}

TEST(Tensor, EqualityIsBitwise) {
  Tensor a = Tensor::fromDoubles(DType::Float, {1}, {0.0});
  Tensor b = Tensor::fromDoubles(DType::Float, {1}, {-0.0});
  EXPECT_NE(a, b);
  EXPECT_EQ(a, Tensor::fromDoubles(DType::Float, {1}, {0.0}));
  EXPECT_NE(a, a.reshaped({1, 1}));
  EXPECT_THROW(a.getDouble(1), std::out_of_range);
}

TEST(HalfFloat, KnownPatterns) {
  // f16: 1.0 = 0x3C00, -2.0 = 0xC000, 65504 = 0x7BFF (max), 2^-24 = 0x0001 (min subnormal).
  EXPECT_EQ(doubleToHalfBits(1.0), 0x3C00);
  EXPECT_EQ(doubleToHalfBits(-2.0), 0xC000);
  EXPECT_EQ(doubleToHalfBits(65504.0), 0x7BFF);
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(halfBitsToDouble(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(halfBitsToDouble(0x7BFF), 65504.0);
  EXPECT_TRUE(std::isinf(halfBitsToDouble(0x7C00)));
  EXPECT_TRUE(std::isnan(halfBitsToDouble(0x7E00)));
  // bf16: 1.0 = 0x3F80, -0.5 = 0xBF00.
  EXPECT_EQ(doubleToBFloat16Bits(1.0), 0x3F80);
  EXPECT_EQ(doubleToBFloat16Bits(-0.5), 0xBF00);
  EXPECT_EQ(bfloat16BitsToDouble(0x3F80), 1.0);
}

TEST(HalfFloat, RoundsToNearestEven) {
  // f16 spacing at 1.0 is 2^-10. 1 + 2^-11 is a tie between 0x3C00 (even) and 0x3C01: even wins.
  EXPECT_EQ(doubleToHalfBits(1.0 + std::ldexp(1.0, -11)), 0x3C00);
  // 1 + 3*2^-11 ties between 0x3C01 and 0x3C02 (even).
  EXPECT_EQ(doubleToHalfBits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);
  // Just above the tie rounds up.
  EXPECT_EQ(doubleToHalfBits(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)), 0x3C01);
  // 65520 is the tie between 65504 (odd mantissa 0x3FF) and 65536 (overflow): rounds to Inf.
  EXPECT_EQ(doubleToHalfBits(65520.0), 0x7C00);
  EXPECT_EQ(doubleToHalfBits(65519.0), 0x7BFF);
  // Mantissa carry into the next binade: 2 - 2^-12 rounds up to 2.0 = 0x4000.
  EXPECT_EQ(doubleToHalfBits(2.0 - std::ldexp(1.0, -12)), 0x4000);
  // bf16 spacing at 1.0 is 2^-7; 1 + 2^-8 ties to even 0x3F80; 1 + 3*2^-8 ties to 0x3F82.
  EXPECT_EQ(doubleToBFloat16Bits(1.0 + std::ldexp(1.0, -8)), 0x3F80);
  EXPECT_EQ(doubleToBFloat16Bits(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);
  // Truncation drops the low half instead: 1 + 3*2^-8 keeps 0x3F81.
  EXPECT_EQ(floatToBFloat16BitsTruncate(1.0f + 3 * 0x1p-8f), 0x3F81);
}

TEST(HalfFloat, EveryHalfPatternRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const double v = halfBitsToDouble(static_cast<uint16_t>(bits));
    if (std::isnan(v))
      continue;
    ASSERT_EQ(doubleToHalfBits(v), bits) << "pattern " << bits;
  }
}

TEST(HalfFloat, EveryBFloat16PatternRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const double v = bfloat16BitsToDouble(static_cast<uint16_t>(bits));
    if (std::isnan(v))
      continue;
    // bf16 is the high half of an f32, so the f32 cast of v must have exactly these high bits.
    ASSERT_EQ(floatToBFloat16BitsTruncate(static_cast<float>(v)), bits);
    ASSERT_EQ(doubleToBFloat16Bits(v), bits);
  }
}
