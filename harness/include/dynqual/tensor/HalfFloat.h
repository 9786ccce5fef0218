#pragma once
// IEEE binary16 (f16) and bfloat16 conversions, rounding to nearest with ties to even.

#include <cstdint>

namespace dynqual {

/// Decodes an f16 bit pattern to double (exact: every f16 value is a double).
double halfBitsToDouble(uint16_t bits);

/// Encodes a double as f16 with one rounding step (round to nearest, ties to even).
/// Values of magnitude >= 65520 become +-Inf; NaN becomes a quiet NaN with the input's sign.
uint16_t doubleToHalfBits(double value);

/// Decodes a bfloat16 bit pattern (the high 16 bits of an f32) to double (exact).
double bfloat16BitsToDouble(uint16_t bits);

/// Encodes a double as bfloat16 with one rounding step (round to nearest, ties to even).
/// Overflow becomes +-Inf; NaN becomes a quiet NaN with the input's sign.
uint16_t doubleToBFloat16Bits(double value);

/// bfloat16 by dropping the low 16 bits of the f32 pattern (round toward zero). Not used for
/// casts; it documents and checks the ONNX 1.12 test-data quirk (docs/quirks.md).
uint16_t floatToBFloat16BitsTruncate(float value);

} // namespace dynqual
