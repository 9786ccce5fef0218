#include "dynqual/stats/Accuracy.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace dynqual::stats {

double relativeL2(double sumSquaredDiff, double sumSquaredExpected) {
  if (!(sumSquaredDiff >= 0) || !(sumSquaredExpected >= 0))
    throw std::invalid_argument("relativeL2: sums of squares must be >= 0 (NaN given or negative)");
  if (sumSquaredExpected > 0)
    return std::sqrt(sumSquaredDiff) / std::sqrt(sumSquaredExpected);
  return sumSquaredDiff > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

} // namespace dynqual::stats
