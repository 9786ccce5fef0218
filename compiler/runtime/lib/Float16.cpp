// binary16 / bfloat16 conversions with round-to-nearest-even.
#include "dq/runtime/Float16.h"

#include <cmath>
#include <cstring>

namespace dq::rt {
namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Rounds to float with round-to-odd: the sticky bit survives, so a second rounding to a format
// at least two bits narrower gives the correctly rounded result (no double-rounding error).
float roundToOddFloat(double d) {
  if (std::isnan(d) || std::isinf(d)) return static_cast<float>(d);
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return floatOf(bitsOf(f) | 1u);
}

} // namespace

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) return floatOf(sign | 0x7F800000u | (mant << 13));
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return floatOf(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t floatToHalf(float value) {
  uint32_t x = bitsOf(value);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) {
    if (a > 0x7F800000u) return sign | 0x7E00u | static_cast<uint16_t>((a >> 13) & 0x3FFu);
    return sign | 0x7C00u;
  }
  if (a >= 0x477FF000u) return sign | 0x7C00u; // >= 65520 rounds to infinity
  if (a < 0x38800000u) {                       // below 2^-14: half subnormal or zero
    if (a < 0x33000000u) return sign;          // below 2^-25: rounds to zero
    uint32_t mant = (a & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126u - (a >> 23);
    uint32_t m = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (m & 1u))) ++m;
    return sign | static_cast<uint16_t>(m);
  }
  uint32_t r = a - 0x38000000u; // rebias exponent 127 -> 15
  uint32_t m = r >> 13;
  uint32_t rem = r & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (m & 1u))) ++m; // carry may reach infinity: correct
  return sign | static_cast<uint16_t>(m);
}

uint16_t doubleToHalf(double value) { return floatToHalf(roundToOddFloat(value)); }

float bf16ToFloat(uint16_t bits) { return floatOf(static_cast<uint32_t>(bits) << 16); }

uint16_t floatToBF16(float value) {
  uint32_t x = bitsOf(value);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

uint16_t doubleToBF16(double value) { return floatToBF16(roundToOddFloat(value)); }

} // namespace dq::rt
