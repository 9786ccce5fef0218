#include "dynqual/stats/Descriptive.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace dynqual::stats {
namespace {

void checkNoNaN(const std::vector<double>& x, const char* what) {
  if (x.empty())
    throw std::invalid_argument(std::string(what) + " of no values");
  for (double v : x)
    if (std::isnan(v))
      throw std::invalid_argument(std::string(what) + " of a NaN value");
}

} // namespace

double median(std::vector<double> x) {
  checkNoNaN(x, "median");
  size_t n = x.size();
  auto mid = x.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(x.begin(), mid, x.end());
  double hi = *mid;
  if (n % 2)
    return hi;
  double lo = *std::max_element(x.begin(), mid);
  return (lo + hi) / 2;
}

double mean(const std::vector<double>& x) {
  checkNoNaN(x, "mean");
  double s = 0;
  for (double v : x)
    s += v;
  return s / static_cast<double>(x.size());
}

double lowerHalfMean(std::vector<double> x) {
  checkNoNaN(x, "lowerHalfMean");
  const size_t keep = (x.size() + 1) / 2;
  std::sort(x.begin(), x.end());
  double s = 0;
  for (size_t i = 0; i < keep; ++i)
    s += x[i];
  return s / static_cast<double>(keep);
}

double quantile(std::vector<double> x, double p) {
  checkNoNaN(x, "quantile");
  if (!(p >= 0 && p <= 1))
    throw std::invalid_argument("quantile probability " + std::to_string(p) + " outside [0, 1]");
  std::sort(x.begin(), x.end());
  double h = static_cast<double>(x.size() - 1) * p;
  auto lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= x.size())
    return x.back();
  return x[lo] + (h - static_cast<double>(lo)) * (x[lo + 1] - x[lo]);
}

double mad(const std::vector<double>& x) {
  double m = median(x);
  std::vector<double> dev(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    dev[i] = std::fabs(x[i] - m);
  return median(std::move(dev));
}

double scaledMad(const std::vector<double>& x) {
  return kMadNormalScale * mad(x);
}

std::vector<double> robustZScores(const std::vector<double>& x) {
  if (x.empty())
    throw std::invalid_argument("robust z-scores of no values");
  for (double v : x)
    if (!std::isfinite(v))
      throw std::invalid_argument("robust z-scores need finite values (got " + std::to_string(v) + ")");
  double m = median(x);
  std::vector<double> dev(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    dev[i] = std::fabs(x[i] - m);
  double meanDev = mean(dev);
  double scale = kMadNormalScale * median(dev);
  if (scale == 0)
    scale = kMeanAbsDevNormalScale * meanDev;
  std::vector<double> z(x.size(), 0.0);
  if (scale == 0)
    return z; // every value equals the median
  for (size_t i = 0; i < x.size(); ++i)
    z[i] = (x[i] - m) / scale;
  return z;
}

} // namespace dynqual::stats
