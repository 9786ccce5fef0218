#pragma once
// Internal: ranking of non-zero differences for the signed-rank procedures.
#include <vector>

namespace dynqual::stats::detail {

struct RankedDifferences {
  std::vector<int> doubledRanks; ///< 2 * midrank of |d| (ascending |d| order)
  std::vector<bool> positive;    ///< sign of the same entries
  long doubledWPlus = 0;         ///< 2 * W+
  int zeros = 0;
  bool ties = false;
  double tieCorrection = 0; ///< sum over tie groups of t^3 - t
};

/// Drops exact zeros, ranks |d| with midranks. Throws std::invalid_argument for a non-finite value.
RankedDifferences rankNonZero(const std::vector<double>& d);

} // namespace dynqual::stats::detail
