#include "dynqual/stats/Binomial.h"

#include <boost/math/distributions/beta.hpp>

#include <stdexcept>
#include <string>

namespace dynqual::stats {

ProportionInterval clopperPearson(std::int64_t k, std::int64_t n, double confidence) {
  if (n < 1)
    throw std::invalid_argument("Clopper-Pearson interval needs n >= 1 (got " + std::to_string(n) + ")");
  if (k < 0 || k > n)
    throw std::invalid_argument("Clopper-Pearson interval: k = " + std::to_string(k) + " outside [0, " +
                                std::to_string(n) + "]");
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("Clopper-Pearson interval: confidence " + std::to_string(confidence) +
                                " outside (0, 1)");
  double a = 1 - confidence;
  auto kd = static_cast<double>(k), nd = static_cast<double>(n);
  ProportionInterval r;
  r.estimate = kd / nd;
  r.low = k == 0 ? 0.0 : boost::math::quantile(boost::math::beta_distribution<double>(kd, nd - kd + 1), a / 2);
  r.high = k == n ? 1.0 : boost::math::quantile(boost::math::beta_distribution<double>(kd + 1, nd - kd), 1 - a / 2);
  return r;
}

} // namespace dynqual::stats
