#include "dynqual/stats/ChangePointSimulation.h"

#include "dynqual/stats/Binomial.h"

#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

namespace dynqual::stats {

namespace {

/// Uniform index in [0, n) from the high bits of one 64-bit draw (portable).
int below(std::mt19937_64& rng, int n) {
  return static_cast<int>((static_cast<unsigned __int128>(rng()) * static_cast<unsigned>(n)) >> 64);
}

double uniform01(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
}

} // namespace

ChangePointSimResult simulateChangePoints(const ChangePointSimParams& p) {
  if (p.length < 2 || p.shifts < 0 || p.trials < 1 || p.tolerance < 0 || p.minSpacing < 1)
    throw std::invalid_argument("change-point simulation needs length >= 2, shifts >= 0, trials >= 1, tolerance >= 0 "
                                "and min spacing >= 1");
  if (static_cast<long>(p.shifts + 1) * p.minSpacing > p.length)
    throw std::invalid_argument("change-point simulation: " + std::to_string(p.shifts) + " shifts " +
                                std::to_string(p.minSpacing) + " points apart do not fit in " +
                                std::to_string(p.length) + " points");
  if (!(p.shiftSize > 0) || !std::isfinite(p.shiftSize))
    throw std::invalid_argument("change-point simulation: shift size must be > 0");
  if (!(p.noiseScale >= 0) || !std::isfinite(p.noiseScale))
    throw std::invalid_argument("change-point simulation: noise scale must be >= 0");
  if (p.residuals.empty() && !(p.sigma >= 0))
    throw std::invalid_argument("change-point simulation: sigma must be >= 0");
  for (double r : p.residuals)
    if (!std::isfinite(r))
      throw std::invalid_argument("change-point simulation: residual " + std::to_string(r) + " is not finite");

  std::mt19937_64 rng(p.seed);
  boost::math::normal_distribution<double> normal;
  const double step = std::log1p(p.shiftSize);
  ChangePointSimResult out;
  double locationError = 0;
  std::vector<double> x(static_cast<size_t>(p.length));
  for (int trial = 0; trial < p.trials; ++trial) {
    // Positions: sorted, each segment (ends included) at least minSpacing long; by rejection.
    std::vector<int> at;
    while (true) {
      at.clear();
      for (int s = 0; s < p.shifts; ++s)
        at.push_back(p.minSpacing + below(rng, p.length - 2 * p.minSpacing + 1));
      std::sort(at.begin(), at.end());
      bool ok = true;
      for (size_t i = 1; i < at.size(); ++i)
        ok = ok && at[i] - at[i - 1] >= p.minSpacing;
      if (ok)
        break;
    }
    double level = std::log(10.0);
    size_t next = 0;
    for (int i = 0; i < p.length; ++i) {
      while (next < at.size() && at[next] == i) {
        level += (rng() & 1) ? step : -step;
        ++next;
      }
      double e = p.residuals.empty()
                     ? p.sigma * boost::math::quantile(normal, uniform01(rng))
                     : p.residuals[static_cast<size_t>(below(rng, static_cast<int>(p.residuals.size())))];
      x[static_cast<size_t>(i)] = std::exp(level + p.noiseScale * e);
    }
    std::vector<ChangePoint> found = detectChangePoints(x, p.options);
    std::vector<bool> matched(at.size(), false);
    std::int64_t falseHere = 0;
    for (const auto& cp : found) {
      int best = -1;
      for (size_t k = 0; k < at.size(); ++k)
        if (!matched[k] && std::abs(at[k] - cp.index) <= p.tolerance &&
            (best < 0 || std::abs(at[k] - cp.index) < std::abs(at[static_cast<size_t>(best)] - cp.index)))
          best = static_cast<int>(k);
      if (best < 0) {
        ++falseHere;
        continue;
      }
      matched[static_cast<size_t>(best)] = true;
      ++out.truePositives;
      locationError += std::abs(at[static_cast<size_t>(best)] - cp.index);
    }
    out.falsePositives += falseHere;
    out.historiesWithFalse += falseHere > 0;
    out.falseNegatives += std::count(matched.begin(), matched.end(), false);
  }
  out.precision = rateEstimate(out.truePositives, out.truePositives + out.falsePositives);
  out.recall = rateEstimate(out.truePositives, out.truePositives + out.falseNegatives);
  out.meanAbsLocationError = out.truePositives ? locationError / static_cast<double>(out.truePositives) : 0;
  return out;
}

} // namespace dynqual::stats
