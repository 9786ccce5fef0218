// JSON text for the device-side tools (dq-run, dq-bench), which link only the runtime and so
// cannot use a JSON library: string escaping, fixed-precision numbers and a timing summary.
#pragma once

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace dq::tools {

/// `s` as a JSON string literal (quotes, backslashes and control characters escaped).
inline std::string jsonString(const std::string &s) {
  std::string o = "\"";
  for (char c : s) {
    switch (c) {
    case '"':
      o += "\\\"";
      break;
    case '\\':
      o += "\\\\";
      break;
    case '\n':
      o += "\\n";
      break;
    case '\t':
      o += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        o += buf;
      } else {
        o += c;
      }
    }
  }
  return o + "\"";
}

/// `v` with 6 decimals; a non-finite value becomes null (JSON has no NaN or infinity).
inline std::string jsonNumber(double v) {
  if (!(v == v) || v > 1e300 || v < -1e300) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

/// Median of `v` (mean of the two middle values for an even count); 0 for an empty vector.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// {"median","min","max","samples":[...]} of `v` (only "samples" when empty).
inline std::string jsonStats(const std::vector<double> &v) {
  std::ostringstream o;
  o << "{";
  if (!v.empty()) {
    auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    o << "\"median\":" << jsonNumber(median(v)) << ",\"min\":" << jsonNumber(*lo) << ",\"max\":" << jsonNumber(*hi)
      << ",";
  }
  o << "\"samples\":[";
  for (size_t i = 0; i < v.size(); ++i)
    o << (i ? "," : "") << jsonNumber(v[i]);
  o << "]}";
  return o.str();
}

} // namespace dq::tools
