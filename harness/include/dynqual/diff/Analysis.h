#pragma once
// The statistics of an A/B run, as a pure function of its stored samples, so that
// `dynqual gate --reanalyze RUN` recomputes every verdict exactly (docs/metrics/gate-decision.md).
#include "dynqual/diff/AbTypes.h"

namespace dynqual::diff {

/// The `value` statistic of one arm's samples in one round (ms). Throws std::invalid_argument for
/// no samples or a NaN sample.
double roundValueOf(const std::vector<double>& samples, RoundValue value);

/// Per-round value of one arm of one model, in ms: by default the minimum of that arm's samples in
/// that round (its two ABBA positions), because interference on a shared machine only adds time:
/// the samples are bounded below by the cost of the code and skewed to the right, and the minimum
/// of several is the least disturbed estimate of that bound. RoundValue::LowerHalfMean averages
/// the fastest half instead (stats::lowerHalfMean), which is less noisy when a round holds many
/// short samples (docs/metrics/round-value.md gives the measured effect of both). Returns
/// round -> (base, head); a round missing either arm is absent.
std::map<int, std::pair<double, double>> roundValues(const std::vector<Sample>& samples, const std::string& model,
                                                     RoundValue value = RoundValue::Min);

/// The verdicts of a run and how far its looks got.
struct AnalysisOutcome {
  std::vector<MetricComparison> comparisons;  ///< one per model, empty when no look was reached
  int looksDone = 0;                          ///< looks whose rounds were all present
  bool allClosed = false;                     ///< every comparison got a decisive verdict
};

/// Replays the looks of policy.looks over `samples` for `models`: at each look whose rounds are
/// all present, the family of per-round log ratios r = ln(head/base) (roundValues, lower is
/// better) of every model's timed metric `metric` and, for the models with compile samples, of
/// their compile time `compileMetricName`, is decided by stats::applyLook: Wilcoxon signed-rank p, Holm over the
/// family at the look's Bonferroni share of policy.alpha, Hodges-Lehmann ratio and CI at the
/// matching level, bootstrap CI of the median ratio, verdict by stats::classify with
/// policy.margin. A comparison closed by a decisive verdict keeps it and that look's numbers;
/// open ones show the last look. A pure function of its arguments, so `gate --reanalyze` gives
/// the same verdicts. Throws std::invalid_argument for a malformed look schedule.
AnalysisOutcome analyze(const std::vector<Sample>& samples, const std::vector<std::string>& models,
                        const Policy& policy, const std::string& metric = "latency_ms",
                        const std::vector<Sample>& compileSamples = {},
                        const std::string& compileMetricName = "compile_ms");

/// One inconclusive comparison per model in `models` when no look was reached: the rounds present,
/// the medians of each arm's round values and the median per-round ratio head/base (descriptive),
/// intervals unbounded (0, +inf) and p = 1: nothing decided.
std::vector<MetricComparison> undecidedComparisons(const std::vector<Sample>& samples,
                                                   const std::vector<std::string>& models, RoundValue value,
                                                   const std::string& metric);

/// The size of a run's Holm family: per timed model one comparison, one more with a
/// Policy::tailValue, and one more with Measurement::compileTime.
int comparisonCount(int timedModels, const Policy& p, const Measurement& m);

/// Warnings when the schedule cannot reach the adjusted alpha: the exact two-sided signed-rank
/// test needs n >= minRoundsForAlpha(alpha_look / m) rounds to reject at all. `comparisons` is
/// the whole family (comparisonCount).
std::vector<std::string> reachabilityWarnings(const Policy& policy, int comparisons);

} // namespace dynqual::diff
