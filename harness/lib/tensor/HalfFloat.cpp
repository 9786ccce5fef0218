#include "dynqual/tensor/HalfFloat.h"

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>

namespace dynqual {
namespace {

// A binary format with 1 sign bit, E exponent bits and M mantissa bits (IEEE 754 layout).
struct BinaryFormat {
  int expBits;
  int mantBits;
  int bias() const { return (1 << (expBits - 1)) - 1; }
  uint32_t expMask() const { return (1u << expBits) - 1; }
};

constexpr BinaryFormat kHalf{5, 10};
constexpr BinaryFormat kBFloat16{8, 7};

double decode(uint16_t bits, BinaryFormat f) {
  const bool negative = (bits >> (f.expBits + f.mantBits)) & 1;
  const uint32_t exp = (bits >> f.mantBits) & f.expMask();
  const uint32_t mant = bits & ((1u << f.mantBits) - 1);
  double mag;
  if (exp == f.expMask())
    mag = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (exp == 0)
    mag = std::ldexp(static_cast<double>(mant), 1 - f.bias() - f.mantBits);
  else
    mag = std::ldexp(static_cast<double>(mant | (1u << f.mantBits)), static_cast<int>(exp) - f.bias() - f.mantBits);
  return negative ? -mag : mag;
}

// Scaling by a power of two is exact in double, so one nearbyint() under the default
// round-to-nearest-even mode is the only rounding step.
uint16_t encode(double value, BinaryFormat f) {
  const uint16_t sign = std::signbit(value) ? static_cast<uint16_t>(1u << (f.expBits + f.mantBits)) : 0;
  const uint16_t infBits = static_cast<uint16_t>(f.expMask() << f.mantBits);
  if (std::isnan(value))
    return sign | infBits | static_cast<uint16_t>(1u << (f.mantBits - 1));
  const double mag = std::fabs(value);
  if (std::isinf(mag))
    return sign | infBits;
  if (mag == 0.0)
    return sign;
  const int minNormalExp = 1 - f.bias();
  int e2;
  std::frexp(mag, &e2); // mag = m * 2^e2, m in [0.5, 1): unbiased exponent is e2 - 1
  int unbiased = e2 - 1;
  if (unbiased < minNormalExp) {
    // Subnormal: units of 2^(minNormalExp - mantBits). A carry to 2^mantBits is the smallest
    // normal, whose bit pattern is exactly that integer.
    const double units = std::nearbyint(std::ldexp(mag, f.mantBits - minNormalExp));
    return sign | static_cast<uint16_t>(units);
  }
  double sig = std::nearbyint(std::ldexp(mag, f.mantBits - unbiased));
  if (sig == std::ldexp(1.0, f.mantBits + 1)) { // rounding carried into the next binade
    sig /= 2;
    ++unbiased;
  }
  const int biased = unbiased + f.bias();
  if (biased >= static_cast<int>(f.expMask()))
    return sign | infBits;
  const uint32_t mant = static_cast<uint32_t>(sig) - (1u << f.mantBits);
  return sign | static_cast<uint16_t>((static_cast<uint32_t>(biased) << f.mantBits) | mant);
}

} // namespace

double halfBitsToDouble(uint16_t bits) {
  return decode(bits, kHalf);
}
uint16_t doubleToHalfBits(double value) {
  return encode(value, kHalf);
}
double bfloat16BitsToDouble(uint16_t bits) {
  return decode(bits, kBFloat16);
}
uint16_t doubleToBFloat16Bits(double value) {
  return encode(value, kBFloat16);
}

uint16_t floatToBFloat16BitsTruncate(float value) {
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(value) >> 16);
}

} // namespace dynqual
