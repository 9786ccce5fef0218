// The overall outcome of an A/B run: one exit code and one verdict line.
#include "dynqual/diff/AbTypes.h"

#include <fmt/format.h>

#include <algorithm>

namespace dynqual::diff {

int exitCodeFor(const AbResult& r) {
  bool accuracy = std::any_of(r.checks.begin(), r.checks.end(), [](const ModelCheck& c) { return !c.passed; });
  // Comparisons of the side metric are reported only (MetricComparison::deciding).
  bool regression = std::any_of(r.comparisons.begin(), r.comparisons.end(), [](const MetricComparison& c) {
    return c.deciding && c.verdict == Verdict::Regression;
  });
  if (accuracy || (regression && r.exploratory.empty()))
    return kRegression;
  if (!r.infraErrors.empty())
    return kInfra;
  if (regression)
    return kInconclusive; // exploratory: an analysis chosen after the data confirms nothing
  if (std::any_of(r.comparisons.begin(), r.comparisons.end(),
                  [](const MetricComparison& c) { return c.deciding && c.verdict == Verdict::Inconclusive; }))
    return kInconclusive;
  return kPass;
}

std::string verdictLine(const AbResult& r) {
  std::vector<std::string> parts;
  for (const auto& c : r.checks)
    if (!c.passed)
      parts.push_back(fmt::format("accuracy failure: {}: {}", c.model, c.detail));
  for (const auto& c : r.comparisons)
    if (c.deciding && c.verdict == Verdict::Regression)
      parts.push_back(fmt::format("regression: {} {} {:+.1f}% [{:+.1f}%, {:+.1f}%]", c.model, c.metric,
                                  (c.ratio - 1) * 100, (c.ciLow - 1) * 100, (c.ciHigh - 1) * 100));
  for (const auto& e : r.infraErrors)
    parts.push_back("infrastructure error: " + e);
  std::string head;
  switch (exitCodeFor(r)) {
  case kPass:
    head = "PASS";
    break;
  case kRegression:
    head = "FAIL";
    break;
  case kInconclusive:
    head = "INCONCLUSIVE";
    break;
  default:
    head = "ERROR";
    break;
  }
  auto count = [&](Verdict v) {
    return std::count_if(r.comparisons.begin(), r.comparisons.end(),
                         [&](const MetricComparison& c) { return c.deciding && c.verdict == v; });
  };
  const auto deciding =
      std::count_if(r.comparisons.begin(), r.comparisons.end(), [](const MetricComparison& c) { return c.deciding; });
  std::string line = fmt::format("{}: {} models, {} comparisons ({} no change, {} improvement, {} regression, {} "
                                 "inconclusive) after {} rounds",
                                 head, r.checks.size(), deciding, count(Verdict::NoChange), count(Verdict::Improvement),
                                 count(Verdict::Regression), count(Verdict::Inconclusive), r.rounds);
  if (auto same = count(Verdict::Identical); same > 0)
    line += fmt::format("; {} identical (same runtime and program bytes, not timed)", same);
  for (const auto& p : parts)
    line += "; " + p;
  if (!r.exploratory.empty()) {
    std::string why;
    for (const auto& e : r.exploratory)
      why += (why.empty() ? "" : "; ") + e;
    line = "EXPLORATORY (the analysis was chosen after the data: " + why + "; timing verdicts confirm nothing) " + line;
  }
  return line;
}

} // namespace dynqual::diff
