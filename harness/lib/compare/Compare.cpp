#include "dynqual/compare/Compare.h"

#include "dynqual/stats/Accuracy.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace dynqual::compare {
namespace {

std::string sci(double v) {
  std::ostringstream s;
  s.precision(3);
  s << std::scientific << v;
  return s.str();
}

// 0 finite, 1 NaN, 2 +Inf, 3 -Inf.
int valueClass(double v) {
  if (std::isnan(v))
    return 1;
  if (std::isinf(v))
    return v > 0 ? 2 : 3;
  return 0;
}

void compareExact(OutputComparison& r, const Tensor& a, const Tensor& b) {
  int64_t first = -1;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (std::memcmp(a.elementPtr(i), b.elementPtr(i), a.elementSize()) != 0) {
      if (first < 0)
        first = i;
      ++r.mismatches;
    }
  if (r.mismatches == 0) {
    r.verdict = Verdict::Pass;
    r.reason = "exact";
    return;
  }
  r.reason = std::to_string(r.mismatches) + " of " + std::to_string(r.elements) + " elements differ (first at " +
             std::to_string(first) + ": " + std::to_string(a.getInt(first)) + " vs " + std::to_string(b.getInt(first)) +
             ")";
}

void compareBits(OutputComparison& r, const Tensor& a, const Tensor& b) {
  int64_t first = -1;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.getDouble(i), y = b.getDouble(i);
    const bool same =
        (std::isnan(x) && std::isnan(y)) || std::memcmp(a.elementPtr(i), b.elementPtr(i), a.elementSize()) == 0;
    if (!same) {
      if (first < 0)
        first = i;
      ++r.mismatches;
    }
  }
  if (r.mismatches == 0) {
    r.verdict = Verdict::Pass;
    r.reason = "bit-exact";
    return;
  }
  std::ostringstream s;
  s.precision(9);
  s << r.mismatches << " of " << r.elements << " elements differ bitwise (first at " << first << ": "
    << a.getDouble(first) << " vs " << b.getDouble(first) << ")";
  r.reason = s.str();
}

void compareFloat(OutputComparison& r, const Tensor& a, const Tensor& b, const CompareOptions& o) {
  double sumSqA = 0, dot = 0;
  int64_t firstPattern = -1;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.getDouble(i), y = b.getDouble(i);
    const int cx = valueClass(x), cy = valueClass(y);
    if (cx != 0 || cy != 0) {
      ++r.nonFiniteSkipped;
      if (cx != cy) {
        if (firstPattern < 0)
          firstPattern = i;
        ++r.mismatches;
      }
      continue;
    }
    const double d = x - y;
    r.sumSquaredDiff += d * d;
    r.sumSquaredExpected += y * y;
    sumSqA += x * x;
    dot += x * y;
    r.maxAbs = std::max(r.maxAbs, std::fabs(d));
  }
  r.l2 = std::sqrt(r.sumSquaredDiff);
  r.expectedNorm = std::sqrt(r.sumSquaredExpected);
  const double normA = std::sqrt(sumSqA);
  r.relL2 = stats::relativeL2(r.sumSquaredDiff, r.sumSquaredExpected);
  if (normA == 0 && r.expectedNorm == 0)
    r.cosine = 1;
  else if (normA == 0 || r.expectedNorm == 0)
    r.cosine = 0;
  else
    r.cosine = dot / (normA * r.expectedNorm);

  if (r.mismatches > 0) {
    std::ostringstream s;
    s.precision(9);
    s << "NaN/Inf pattern differs at " << r.mismatches << " elements (first at " << firstPattern << ": "
      << a.getDouble(firstPattern) << " vs " << b.getDouble(firstPattern) << ")";
    r.reason = s.str();
    return;
  }
  if (r.expectedNorm > 0) {
    const double gate = o.relL2GateFor(r.dtype);
    if (r.relL2 <= gate) {
      r.verdict = Verdict::Pass;
      r.reason = "rel-L2";
    } else {
      r.reason = "rel-L2 " + sci(r.relL2) + " > " + sci(gate) + " (max-abs " + sci(r.maxAbs) + ")";
    }
    return;
  }
  if (r.l2 <= o.absL2GateZeroNorm) {
    r.verdict = Verdict::Pass;
    r.reason = "abs-L2 (zero norm)";
  } else {
    r.reason = "expected norm is 0 and abs-L2 " + sci(r.l2) + " > " + sci(o.absL2GateZeroNorm);
  }
}

} // namespace

CompareOptions gatesForDevice(const std::string& device) {
  CompareOptions o;
  if (device == "sim")
    return o;
  o.relL2Gate = 1e-4;
  o.relL2GateF16 = 5e-3;
  o.relL2GateBF16 = 4e-2;
  return o;
}

const char* verdictName(Verdict v) {
  return v == Verdict::Pass ? "pass" : "fail";
}

OutputComparison compareOutput(const std::string& name, const Tensor& actual, const Tensor& expected,
                               const CompareOptions& options) {
  OutputComparison r;
  r.name = name;
  r.dtype = expected.dtype();
  r.shape = expected.dims();
  r.elements = expected.numel();
  r.isFloat = isFloatDType(expected.dtype());
  if (actual.dtype() != expected.dtype()) {
    r.reason = std::string("dtype ") + dtypeName(actual.dtype()) + " vs expected " + dtypeName(expected.dtype());
    return r;
  }
  if (actual.dims() != expected.dims()) {
    r.reason = "shape " + shapeToString(actual.dims()) + " vs expected " + shapeToString(expected.dims());
    return r;
  }
  if (!r.isFloat)
    compareExact(r, actual, expected);
  else if (options.bitExact)
    compareBits(r, actual, expected);
  else
    compareFloat(r, actual, expected, options);
  return r;
}

Comparison compareOutputs(const std::vector<std::string>& names, const std::vector<Tensor>& actual,
                          const std::vector<Tensor>& expected, const CompareOptions& options) {
  Comparison c;
  if (actual.size() != expected.size()) {
    c.reason = std::to_string(actual.size()) + " outputs vs " + std::to_string(expected.size()) + " expected";
    return c;
  }
  double sumDiff = 0, sumExpected = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const std::string name = i < names.size() ? names[i] : "output " + std::to_string(i);
    OutputComparison r = compareOutput(name, actual[i], expected[i], options);
    sumDiff += r.sumSquaredDiff;
    sumExpected += r.sumSquaredExpected;
    if (r.verdict == Verdict::Fail && c.reason.empty())
      c.reason = "output '" + name + "': " + r.reason;
    c.outputs.push_back(std::move(r));
  }
  c.combinedL2 = std::sqrt(sumDiff);
  c.combinedRelL2 = stats::relativeL2(sumDiff, sumExpected);
  c.verdict = c.reason.empty() ? Verdict::Pass : Verdict::Fail;
  return c;
}

} // namespace dynqual::compare
