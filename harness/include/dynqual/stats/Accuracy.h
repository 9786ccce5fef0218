#pragma once
// The L2 family of accuracy metrics (docs/metrics/l2.md, relative-l2.md): one place for the
// formula that per-output comparisons, combined comparisons and suite summaries all use.

namespace dynqual::stats {

/// Relative L2 error from its two sums: sqrt(sumSquaredDiff) / sqrt(sumSquaredExpected), where
/// sumSquaredDiff = sum (a_i - b_i)^2 and sumSquaredExpected = sum b_i^2 over the compared
/// elements (a actual, b expected). When ||b|| = 0 it is undefined: 0 when the difference is 0
/// too, +inf otherwise (docs/metrics/relative-l2.md). Sums that overflowed to +inf follow IEEE
/// arithmetic. Throws std::invalid_argument for a negative or NaN sum.
double relativeL2(double sumSquaredDiff, double sumSquaredExpected);

} // namespace dynqual::stats
