#include "dynqual/stats/SignedRank.h"

#include "RankUtil.h"

#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace dynqual::stats {

SignedRankNull::SignedRankNull(const std::vector<int>& doubledRanks) : n_(static_cast<int>(doubledRanks.size())) {
  long total = 0;
  for (int a : doubledRanks) {
    if (a <= 0)
      throw std::invalid_argument("signed-rank null distribution: doubled rank " + std::to_string(a) +
                                  " is not positive");
    total += a;
  }
  pmf_.assign(static_cast<size_t>(total) + 1, 0.0);
  pmf_[0] = 1.0;
  long reach = 0; // largest sum reachable so far
  for (int a : doubledRanks) {
    // In place, downward: P_i(s) = (P_{i-1}(s) + P_{i-1}(s - a)) / 2.
    reach += a;
    for (long s = reach; s >= a; --s)
      pmf_[s] = 0.5 * (pmf_[s] + pmf_[s - a]);
    for (long s = std::min<long>(a - 1, reach); s >= 0; --s)
      pmf_[s] *= 0.5;
  }
  cdf_.resize(pmf_.size());
  double c = 0;
  for (size_t s = 0; s < pmf_.size(); ++s)
    cdf_[s] = (c += pmf_[s]);
}

std::shared_ptr<const SignedRankNull> SignedRankNull::noTies(int n) {
  if (n < 0)
    throw std::invalid_argument("signed-rank null distribution for n = " + std::to_string(n));
  static std::mutex mu;
  static std::map<int, std::shared_ptr<const SignedRankNull>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[n];
  if (!slot) {
    std::vector<int> ranks(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      ranks[static_cast<size_t>(i)] = 2 * (i + 1);
    slot = std::make_shared<const SignedRankNull>(ranks);
  }
  return slot;
}

double SignedRankNull::pmf(int s2) const {
  return s2 < 0 || s2 > maxDoubled() ? 0.0 : pmf_[static_cast<size_t>(s2)];
}

double SignedRankNull::cdf(int s2) const {
  if (s2 < 0)
    return 0.0;
  if (s2 >= maxDoubled())
    return 1.0;
  return std::min(1.0, cdf_[static_cast<size_t>(s2)]);
}

double SignedRankNull::sf(int s2) const {
  // P(X >= s2) = P(X <= max - s2) by the symmetry s -> max - s (flip every sign).
  return cdf(maxDoubled() - s2);
}

namespace detail {

RankedDifferences rankNonZero(const std::vector<double>& d) {
  RankedDifferences r;
  std::vector<std::pair<double, bool>> a; // |d|, positive
  a.reserve(d.size());
  for (double v : d) {
    if (!std::isfinite(v))
      throw std::invalid_argument("signed-rank test needs finite differences (got " + std::to_string(v) + ")");
    if (v == 0)
      ++r.zeros;
    else
      a.emplace_back(std::fabs(v), v > 0);
  }
  std::sort(a.begin(), a.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  size_t n = a.size();
  r.doubledRanks.resize(n);
  r.positive.resize(n);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && a[j + 1].first == a[i].first)
      ++j;
    // Positions i..j (0-based) share the midrank ((i + 1) + (j + 1)) / 2; doubled: i + j + 2.
    int t = static_cast<int>(j - i + 1);
    if (t > 1) {
      r.ties = true;
      r.tieCorrection += static_cast<double>(t) * t * t - t;
    }
    for (size_t k = i; k <= j; ++k) {
      r.doubledRanks[k] = static_cast<int>(i + j + 2);
      r.positive[k] = a[k].second;
      if (a[k].second)
        r.doubledWPlus += static_cast<long>(i + j + 2);
    }
    i = j + 1;
  }
  return r;
}

} // namespace detail

SignedRankResult signedRankTest(const std::vector<double>& d, int exactMaxN) {
  if (d.empty())
    throw std::invalid_argument("signed-rank test of no differences");
  if (exactMaxN < 0)
    throw std::invalid_argument("signed-rank test: exactMaxN < 0");
  detail::RankedDifferences r = detail::rankNonZero(d);
  SignedRankResult res;
  res.n = static_cast<int>(r.doubledRanks.size());
  res.zerosDropped = r.zeros;
  res.ties = r.ties;
  res.wPlus = static_cast<double>(r.doubledWPlus) / 2.0;
  if (res.n == 0)
    return res;
  if (res.n <= exactMaxN) {
    res.method = PValueMethod::Exact;
    std::shared_ptr<const SignedRankNull> null =
        r.ties ? std::make_shared<const SignedRankNull>(r.doubledRanks) : SignedRankNull::noTies(res.n);
    int w2 = static_cast<int>(r.doubledWPlus);
    res.pGreater = null->sf(w2);
    res.pLess = null->cdf(w2);
  } else {
    res.method = PValueMethod::NormalApprox;
    double n = res.n;
    double mu = n * (n + 1) / 4;
    double var = n * (n + 1) * (2 * n + 1) / 24 - r.tieCorrection / 48;
    double sd = std::sqrt(var);
    boost::math::normal_distribution<double> z;
    res.pGreater = boost::math::cdf(boost::math::complement(z, (res.wPlus - mu - 0.5) / sd));
    res.pLess = boost::math::cdf(z, (res.wPlus - mu + 0.5) / sd);
  }
  res.pTwoSided = std::min(1.0, 2 * std::min(res.pGreater, res.pLess));
  return res;
}

} // namespace dynqual::stats
