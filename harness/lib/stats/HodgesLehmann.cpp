#include "dynqual/stats/HodgesLehmann.h"

#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace dynqual::stats {
namespace {

std::vector<double> walshAverages(const std::vector<double>& d) {
  if (d.empty())
    throw std::invalid_argument("Hodges-Lehmann estimate of no values");
  for (double v : d)
    if (!std::isfinite(v))
      throw std::invalid_argument("Hodges-Lehmann estimate needs finite values (got " + std::to_string(v) + ")");
  size_t n = d.size();
  std::vector<double> w;
  w.reserve(n * (n + 1) / 2);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i; j < n; ++j)
      w.push_back(d[i] / 2 + d[j] / 2);
  return w;
}

/// Median of w; leaves w partitioned around index w.size() / 2 (std::nth_element).
double medianOf(std::vector<double>& w) {
  size_t n = w.size();
  auto mid = w.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(w.begin(), mid, w.end());
  double hi = *mid;
  if (n % 2)
    return hi;
  double lo = *std::max_element(w.begin(), mid);
  return (lo + hi) / 2;
}

/// The element of sorted index `idx` (0-based) of w, which medianOf has partitioned around
/// index w.size() / 2: only the side holding idx is searched.
double selectAfterMedian(std::vector<double>& w, size_t idx) {
  auto mid = w.begin() + static_cast<std::ptrdiff_t>(w.size() / 2);
  auto it = w.begin() + static_cast<std::ptrdiff_t>(idx);
  if (it < mid)
    std::nth_element(w.begin(), it, mid);
  else if (it > mid)
    std::nth_element(mid + 1, it, w.end());
  return *it;
}

} // namespace

double hodgesLehmann(const std::vector<double>& d) {
  std::vector<double> w = walshAverages(d);
  return medianOf(w);
}

HodgesLehmannResult hodgesLehmannInterval(const std::vector<double>& d, double confidence, int exactMaxN) {
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("Hodges-Lehmann interval: confidence " + std::to_string(confidence) +
                                " outside (0, 1)");
  if (exactMaxN < 0)
    throw std::invalid_argument("Hodges-Lehmann interval: exactMaxN < 0");
  std::vector<double> w = walshAverages(d);
  HodgesLehmannResult r;
  r.n = static_cast<int>(d.size());
  r.confidence = confidence;
  r.estimate = medianOf(w);
  double tail = (1 - confidence) / 2;
  long big = static_cast<long>(w.size()); // N = n (n + 1) / 2
  long k = 0;
  if (r.n <= exactMaxN) {
    r.method = PValueMethod::Exact;
    auto null = SignedRankNull::noTies(r.n);
    // Largest k with P(W+ <= k - 1) <= tail; in doubled units P(2W+ <= 2(k - 1)).
    while (k < big && null->cdf(static_cast<int>(2 * k)) <= tail)
      ++k;
    r.achievedCoverage = k == 0 ? 1.0 : 1 - 2 * null->cdf(static_cast<int>(2 * (k - 1)));
  } else {
    r.method = PValueMethod::NormalApprox;
    double n = r.n;
    double mu = n * (n + 1) / 4;
    double sd = std::sqrt(n * (n + 1) * (2 * n + 1) / 24);
    boost::math::normal_distribution<double> z;
    double zq = boost::math::quantile(z, 1 - tail);
    k = std::clamp(static_cast<long>(std::floor(mu + 0.5 - zq * sd)), 0L, big);
    r.achievedCoverage = k == 0 ? 1.0 : 1 - 2 * boost::math::cdf(z, (static_cast<double>(k) - 0.5 - mu) / sd);
  }
  r.k = static_cast<int>(k);
  if (k == 0) {
    r.low = -std::numeric_limits<double>::infinity();
    r.high = std::numeric_limits<double>::infinity();
  } else {
    r.low = selectAfterMedian(w, static_cast<size_t>(k - 1));
    r.high = selectAfterMedian(w, static_cast<size_t>(big - k));
  }
  return r;
}

} // namespace dynqual::stats
