#include "dynqual/stats/MultipleTesting.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace dynqual::stats {
namespace {

void checkP(const std::vector<double>& p) {
  for (double v : p)
    if (!(v >= 0 && v <= 1))
      throw std::invalid_argument("p-value " + std::to_string(v) + " outside [0, 1]");
}

/// Indices of p in ascending order of p, ties in input order.
std::vector<size_t> ascending(const std::vector<double>& p) {
  std::vector<size_t> idx(p.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  return idx;
}

} // namespace

std::vector<double> bonferroniAdjust(const std::vector<double>& p) {
  checkP(p);
  std::vector<double> adj(p.size());
  double m = static_cast<double>(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    adj[i] = std::min(1.0, m * p[i]);
  return adj;
}

std::vector<double> holmAdjust(const std::vector<double>& p) {
  checkP(p);
  std::vector<size_t> idx = ascending(p);
  std::vector<double> adj(p.size());
  size_t m = p.size();
  double running = 0;
  for (size_t i = 0; i < m; ++i) { // i: 0-based sorted position, multiplier m - i
    running = std::max(running, std::min(1.0, static_cast<double>(m - i) * p[idx[i]]));
    adj[idx[i]] = running;
  }
  return adj;
}

std::vector<double> benjaminiHochbergAdjust(const std::vector<double>& p) {
  checkP(p);
  std::vector<size_t> idx = ascending(p);
  std::vector<double> adj(p.size());
  size_t m = p.size();
  double running = 1;
  for (size_t i = m; i-- > 0;) { // rank i + 1
    running = std::min(running, std::min(1.0, static_cast<double>(m) * p[idx[i]] / static_cast<double>(i + 1)));
    adj[idx[i]] = running;
  }
  return adj;
}

std::vector<double> holmAlphas(const std::vector<double>& p, double alpha) {
  if (!(alpha > 0 && alpha < 1))
    throw std::invalid_argument("family alpha " + std::to_string(alpha) + " outside (0, 1)");
  std::vector<double> adj = holmAdjust(p);
  std::vector<size_t> idx = ascending(p);
  size_t m = p.size();
  std::vector<double> out(m);
  for (size_t i = 0; i < m; ++i) {
    size_t c = idx[i];
    double level = alpha / static_cast<double>(m - i);
    if (adj[c] < alpha) {
      // Holm rejects: p_c * (m - i) <= adj_c < alpha. Keep p_c < level exact under rounding.
      out[c] = p[c] < level ? level : std::nextafter(p[c], 1.0);
    } else {
      out[c] = std::min(level, p[c]);
    }
  }
  return out;
}

} // namespace dynqual::stats
