#include "dynqual/stats/ChangePoints.h"

#include "dynqual/stats/Descriptive.h"

#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>

namespace dynqual::stats {

namespace {

double meanOf(const std::vector<double>& z, int b, int e) {
  double s = 0;
  for (int i = b; i < e; ++i)
    s += z[static_cast<size_t>(i)];
  return s / (e - b);
}

double varOf(const std::vector<double>& z, int b, int e, double m) {
  double s = 0;
  for (int i = b; i < e; ++i) {
    double d = z[static_cast<size_t>(i)] - m;
    s += d * d;
  }
  return s / (e - b - 1);
}

/// Welch's test between z[a0, a1) and z[b0, b1) (each >= 2 points).
WelchTest welchRange(const std::vector<double>& z, int a0, int a1, int b0, int b1) {
  const double na = a1 - a0, nb = b1 - b0;
  const double ma = meanOf(z, a0, a1), mb = meanOf(z, b0, b1);
  const double va = varOf(z, a0, a1, ma) / na, vb = varOf(z, b0, b1, mb) / nb;
  WelchTest w;
  const double se2 = va + vb;
  // Spread and difference below rounding (sums of equal values) count as none.
  const double tiny = 1e-12 * std::max({1.0, std::fabs(ma), std::fabs(mb)});
  if (!(std::sqrt(se2) > tiny)) {
    const bool same = std::fabs(mb - ma) <= tiny;
    w.df = na + nb - 2;
    w.t = same ? 0 : std::copysign(std::numeric_limits<double>::infinity(), mb - ma);
    w.p = same ? 1 : 0;
    return w;
  }
  w.t = (mb - ma) / std::sqrt(se2);
  w.df = se2 * se2 / (va * va / (na - 1) + vb * vb / (nb - 1));
  boost::math::students_t dist(w.df);
  w.p = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(w.t))));
  return w;
}

/// A candidate in the merge step: its index and the Q that proposed it.
struct Candidate {
  int index;
  double q;
};

/// The statistics of change point `c` between segments [b, c) and [c, e).
ChangePoint describe(const std::vector<double>& z, bool logScale, int b, int c, int e, double q) {
  ChangePoint cp;
  cp.index = c;
  cp.segmentStart = b;
  cp.segmentEnd = e;
  cp.q = q;
  const double mb = meanOf(z, b, c), ma = meanOf(z, c, e);
  if (logScale) {
    cp.before = std::exp(mb);
    cp.after = std::exp(ma);
    cp.change = std::expm1(ma - mb);
  } else {
    cp.before = mb;
    cp.after = ma;
    cp.change = mb == 0 ? std::numeric_limits<double>::quiet_NaN() : ma / mb - 1;
  }
  cp.p = (c - b >= 2 && e - c >= 2) ? welchRange(z, b, c, c, e).p : 1.0;
  return cp;
}

/// Otava's merge step (see detectChangePoints), with the minimum segment length.
std::vector<ChangePoint> merge(const std::vector<double>& z, std::vector<Candidate> cands,
                               const ChangePointOptions& o) {
  const int n = static_cast<int>(z.size());
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) { return a.index < b.index; });
  cands.erase(std::unique(cands.begin(), cands.end(),
                          [](const Candidate& a, const Candidate& b) { return a.index == b.index; }),
              cands.end());
  while (true) {
    std::vector<ChangePoint> cps;
    for (size_t i = 0; i < cands.size(); ++i) {
      int b = i == 0 ? 0 : cands[i - 1].index;
      int e = i + 1 == cands.size() ? n : cands[i + 1].index;
      cps.push_back(describe(z, o.logScale, b, cands[i].index, e, cands[i].q));
    }
    int worst = -1;
    auto pick = [&](auto&& eligible, auto&& worse) {
      for (size_t i = 0; i < cps.size(); ++i)
        if (eligible(cps[i]) && (worst < 0 || worse(cps[i], cps[static_cast<size_t>(worst)])))
          worst = static_cast<int>(i);
    };
    auto largerP = [](const ChangePoint& a, const ChangePoint& b) { return a.p > b.p; };
    pick(
        [&](const ChangePoint& c) {
          return c.index - c.segmentStart < o.minSegment || c.segmentEnd - c.index < o.minSegment;
        },
        largerP);
    if (worst < 0)
      pick([&](const ChangePoint& c) { return c.p > o.maxP; }, largerP);
    if (worst < 0 && o.minMagnitude > 0)
      pick([&](const ChangePoint& c) { return !(std::fabs(c.change) > o.minMagnitude); },
           [](const ChangePoint& a, const ChangePoint& b) { return std::fabs(a.change) < std::fabs(b.change); });
    if (worst < 0)
      return cps;
    cands.erase(cands.begin() + worst);
  }
}

/// Matteson & James' permutation p of the best split over `intervals`: the points of each
/// interval are shuffled within it R times; p = (1 + #{max Q_r >= q}) / (R + 1). Stops early once
/// p can no longer reach maxP.
double permutationP(const std::vector<double>& z, const std::vector<std::pair<int, int>>& intervals, double q,
                    const ChangePointOptions& o, std::mt19937_64& rng) {
  const int limit = static_cast<int>(std::floor(o.maxP * (o.permutations + 1) + 1e-9)) - 1; // exceedances allowed
  std::vector<double> w = z;
  int exceed = 0;
  for (int r = 0; r < o.permutations; ++r) {
    for (auto [a, b] : intervals)
      for (int i = b - 1; i > a; --i) { // Fisher-Yates; index by the high bits (portable, no std:: distribution)
        auto k = static_cast<int>((static_cast<unsigned __int128>(rng()) * static_cast<unsigned>(i - a + 1)) >> 64);
        std::swap(w[static_cast<size_t>(i)], w[static_cast<size_t>(a + k)]);
      }
    double best = -std::numeric_limits<double>::infinity();
    for (auto [a, b] : intervals) {
      EnergySplit s = bestEnergySplit(w, a, b, o.minSegment);
      if (s.tau >= 0)
        best = std::max(best, s.q);
    }
    if (best >= q && ++exceed > limit)
      return 1.0; // cannot reach maxP any more; the exact p is not needed
  }
  return (1.0 + exceed) / (o.permutations + 1.0);
}

/// Hierarchical bisection of z[begin, end): splits kept while significant at `threshold`.
std::vector<Candidate> bisect(const std::vector<double>& z, int begin, int end, double threshold,
                              const ChangePointOptions& o, std::mt19937_64* rng) {
  std::vector<std::pair<int, int>> intervals = {{begin, end}};
  std::vector<Candidate> found;
  while (true) {
    int which = -1;
    EnergySplit best;
    for (size_t i = 0; i < intervals.size(); ++i) {
      EnergySplit s = bestEnergySplit(z, intervals[i].first, intervals[i].second, o.minSegment);
      if (s.tau >= 0 && (which < 0 || s.q > best.q)) {
        best = s;
        which = static_cast<int>(i);
      }
    }
    if (which < 0)
      return found;
    auto [a, b] = intervals[static_cast<size_t>(which)];
    double p = rng ? permutationP(z, intervals, best.q, o, *rng) : welchRange(z, a, best.tau, best.tau, b).p;
    if (!(p <= threshold))
      return found;
    found.push_back({best.tau, best.q});
    intervals[static_cast<size_t>(which)] = {a, best.tau};
    intervals.insert(intervals.begin() + which + 1, {best.tau, b});
  }
}

/// Otava's split step: windows of o.window points every o.window / 2.
std::vector<Candidate> windowedSplit(const std::vector<double>& z, const ChangePointOptions& o) {
  const int n = static_cast<int>(z.size());
  // Otava's first pass: 10 x max_pvalue below 0.05, 2 x below 0.5.
  const double first = o.maxP < 0.05 ? o.maxP * 10 : o.maxP < 0.5 ? o.maxP * 2 : o.maxP;
  const int step = o.window / 2;
  std::vector<Candidate> all;
  int start = 0;
  while (start < n) {
    int end = std::min(start + o.window, n);
    std::vector<Candidate> found = bisect(z, start, end, first, o, nullptr);
    int last = 0;
    for (const auto& c : found) {
      last = std::max(last, c.index);
      all.push_back(c);
    }
    start = std::max(last, start + step);
  }
  return all;
}

std::vector<Candidate> pelt(const std::vector<double>& z, const ChangePointOptions& o) {
  const int n = static_cast<int>(z.size());
  const int m = o.minSegment;
  std::vector<double> diffs;
  for (int i = 1; i < n; ++i)
    diffs.push_back(z[static_cast<size_t>(i)] - z[static_cast<size_t>(i - 1)]);
  double sigma = kMadNormalScale * mad(diffs) / std::sqrt(2.0);
  if (!(sigma > 0)) { // more than half the steps are 0: fall back to their mean absolute size
    double s = 0;
    for (double d : diffs)
      s += std::fabs(d);
    sigma = kMeanAbsDevNormalScale * s / static_cast<double>(diffs.size()) / std::sqrt(2.0);
  }
  if (!(sigma > 0))
    return {}; // a constant series
  const double beta = (o.peltPenalty > 0 ? o.peltPenalty : kDefaultPeltPenalty) * std::log(static_cast<double>(n));
  std::vector<double> s1(static_cast<size_t>(n) + 1, 0), s2(static_cast<size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) {
    s1[static_cast<size_t>(i) + 1] = s1[static_cast<size_t>(i)] + z[static_cast<size_t>(i)];
    s2[static_cast<size_t>(i) + 1] = s2[static_cast<size_t>(i)] + z[static_cast<size_t>(i)] * z[static_cast<size_t>(i)];
  }
  const double inv = 1 / (sigma * sigma);
  auto cost = [&](int s, int t) {
    double a = s1[static_cast<size_t>(t)] - s1[static_cast<size_t>(s)];
    double b = s2[static_cast<size_t>(t)] - s2[static_cast<size_t>(s)];
    return std::max(0.0, b - a * a / (t - s)) * inv;
  };
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> f(static_cast<size_t>(n) + 1, inf);
  std::vector<int> last(static_cast<size_t>(n) + 1, 0);
  f[0] = -beta;
  std::vector<int> keep = {0}; // R_t of Killick et al., ascending
  for (int t = m; t <= n; ++t) {
    double best = inf;
    int arg = 0;
    for (int s : keep)
      if (t - s >= m) {
        double v = f[static_cast<size_t>(s)] + cost(s, t) + beta;
        if (v < best) {
          best = v;
          arg = s;
        }
      }
    f[static_cast<size_t>(t)] = best;
    last[static_cast<size_t>(t)] = arg;
    // Prune s that can never be optimal again: F(s) + C(s, t) > F(t) (K = 0 for this cost).
    std::vector<int> next;
    for (int s : keep)
      if (t - s < m || f[static_cast<size_t>(s)] + cost(s, t) <= best + 1e-9 * (1 + std::fabs(best)))
        next.push_back(s);
    if (best < inf)
      next.push_back(t);
    keep = std::move(next);
  }
  std::vector<Candidate> cps;
  for (int t = last[static_cast<size_t>(n)]; t > 0; t = last[static_cast<size_t>(t)])
    cps.push_back({t, 0});
  std::reverse(cps.begin(), cps.end());
  return cps;
}

} // namespace

WelchTest welchTest(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || b.size() < 2)
    throw std::invalid_argument("Welch's t-test needs at least 2 values on each side");
  std::vector<double> z = a;
  z.insert(z.end(), b.begin(), b.end());
  for (double v : z)
    if (!std::isfinite(v))
      throw std::invalid_argument("Welch's t-test: value " + std::to_string(v) + " is not finite");
  const int na = static_cast<int>(a.size());
  return welchRange(z, 0, na, na, static_cast<int>(z.size()));
}

EnergySplit bestEnergySplit(const std::vector<double>& z, int begin, int end, int minSegment) {
  if (begin < 0 || end > static_cast<int>(z.size()) || begin > end)
    throw std::invalid_argument("energy split: range [" + std::to_string(begin) + ", " + std::to_string(end) +
                                ") outside the series of " + std::to_string(z.size()));
  if (minSegment < 1)
    throw std::invalid_argument("energy split: minimum segment " + std::to_string(minSegment) + " < 1");
  EnergySplit best;
  const int len = end - begin;
  if (len < 2 * minSegment)
    return best;
  // prefix[j][i] = sum_{i' < i} |z_i' - z_j| over local indices, so any sum of distances to one
  // point over a range is one subtraction.
  const size_t row = static_cast<size_t>(len) + 1;
  std::vector<double> prefix(static_cast<size_t>(len) * row, 0.0);
  for (int j = 0; j < len; ++j) {
    double* r = &prefix[static_cast<size_t>(j) * row];
    const double zj = z[static_cast<size_t>(begin + j)];
    for (int i = 0; i < len; ++i)
      r[i + 1] = r[i] + std::fabs(z[static_cast<size_t>(begin + i)] - zj);
  }
  double sxx = 0; // sum_{i<k<t} |z_i - z_k|
  for (int t = 1; t <= len - minSegment; ++t) {
    sxx += prefix[static_cast<size_t>(t - 1) * row + static_cast<size_t>(t - 1)]; // adds point t-1 to X
    if (t < minSegment)
      continue;
    const double n = t;
    double sxy = 0, syy = 0;
    for (int k = t + 1; k <= len; ++k) {
      const double* r = &prefix[static_cast<size_t>(k - 1) * row]; // point k-1 joins Y
      sxy += r[t];
      syy += r[k - 1] - r[t];
      const double m = k - t;
      if (m < minSegment)
        continue;
      double q = 2 * sxy / (m + n);
      if (n > 1)
        q -= 2 * m * sxx / ((m + n) * (n - 1));
      if (m > 1)
        q -= 2 * n * syy / ((m + n) * (m - 1));
      if (best.tau < 0 || q > best.q) {
        best.tau = begin + t;
        best.kappa = begin + k;
        best.q = q;
      }
    }
  }
  return best;
}

std::vector<ChangePoint> detectChangePoints(const std::vector<double>& x, const ChangePointOptions& o) {
  if (o.minSegment < 2)
    throw std::invalid_argument("change points: minimum segment " + std::to_string(o.minSegment) + " < 2");
  if (o.window < 2 * o.minSegment)
    throw std::invalid_argument("change points: window " + std::to_string(o.window) +
                                " holds fewer than two minimum segments of " + std::to_string(o.minSegment));
  if (!(o.maxP > 0 && o.maxP <= 1))
    throw std::invalid_argument("change points: p threshold " + std::to_string(o.maxP) + " outside (0, 1]");
  if (o.permutations < 1)
    throw std::invalid_argument("change points: permutations " + std::to_string(o.permutations) + " < 1");
  if (!(o.peltPenalty >= 0))
    throw std::invalid_argument("change points: PELT penalty " + std::to_string(o.peltPenalty) + " < 0");
  std::vector<double> z;
  z.reserve(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double v = x[i];
    if (!std::isfinite(v))
      throw std::invalid_argument("change points: value " + std::to_string(i) + " is not finite");
    if (o.logScale && !(v > 0))
      throw std::invalid_argument("change points: value " + std::to_string(i) + " (" + std::to_string(v) +
                                  ") is not positive; the log scale needs positive values");
    z.push_back(o.logScale ? std::log(v) : v);
  }
  if (static_cast<int>(z.size()) < 2 * o.minSegment)
    return {};
  std::vector<Candidate> cands;
  if (o.method == ChangePointMethod::Pelt) {
    cands = pelt(z, o);
  } else if (o.test == ChangePointTest::Permutation) {
    std::mt19937_64 rng(o.seed);
    cands = bisect(z, 0, static_cast<int>(z.size()), o.maxP, o, &rng);
  } else {
    cands = windowedSplit(z, o);
  }
  return merge(z, std::move(cands), o);
}

std::string changePointMethodName(const ChangePointOptions& o) {
  if (o.method == ChangePointMethod::Pelt)
    return "pelt";
  return o.test == ChangePointTest::Permutation ? "e-divisive-permutation" : "e-divisive";
}

} // namespace dynqual::stats
