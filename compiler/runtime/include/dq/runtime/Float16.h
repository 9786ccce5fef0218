// IEEE binary16 and bfloat16 conversions (bit patterns stored as uint16_t).
#pragma once

#include <cstdint>

namespace dq::rt {

/// binary16 bits -> float (exact: every half value is a float).
float halfToFloat(uint16_t bits);
/// float -> binary16 bits, round to nearest even; overflow gives +-inf, NaN stays a quiet NaN.
uint16_t floatToHalf(float value);
/// double -> binary16 bits with a single correct rounding (nearest even).
uint16_t doubleToHalf(double value);
/// bfloat16 bits -> float (exact).
float bf16ToFloat(uint16_t bits);
/// float -> bfloat16 bits, round to nearest even; NaN stays a quiet NaN.
uint16_t floatToBF16(float value);
/// double -> bfloat16 bits with a single correct rounding (nearest even).
uint16_t doubleToBF16(double value);

} // namespace dq::rt
