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
  std::vector<MetricComparison> comparisons; ///< one per model, empty when no look was reached
  int looksDone = 0;                         ///< looks whose rounds were all present
  bool allClosed = false;                    ///< every comparison got a decisive verdict
};

/// True when every sample of `model` in rounds < `rounds` of the base arm is one value, every one
/// of the head arm is one value, and both arms have samples.
bool constantArms(const std::vector<Sample>& samples, const std::string& model, int rounds);

/// The exact comparison of one deterministic series (MetricComparison::exact): ratio = head / base
/// with the interval [ratio, ratio], p = 0 (1 when head == base), verdict stats::classify on that
/// interval with `margin`: regression above 1 + m, improvement below 1 / (1 + m), else no change;
/// decided at `rounds`. Throws std::invalid_argument when base is not a positive finite number or
/// head is negative or not finite (no ratio exists).
MetricComparison exactComparison(const std::string& model, const std::string& metric, double base, double head,
                                 int rounds, double margin);

/// Replays the looks of policy.looks over `samples` for `models`: first, a series of a
/// deterministic metric (isDeterministicMetric) whose arms are each constant over the rounds of
/// the first look (constantArms) is decided there by exactComparison and left out of the family
/// (no test runs on it, so no constant difference can pass a test by accident, and no interval
/// divides by a zero spread). Then at each look whose rounds are
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

/// The comparisons of the side metric `metric` (AbResult::sideSamples), never deciding
/// (MetricComparison::deciding false): the models of `models` that have samples, analysed once
/// over the rounds all of them have (one look, their own Holm family at policy.alpha, no tail
/// value), exactly when the metric is deterministic and constant. Empty without samples.
std::vector<MetricComparison> sideComparisons(const std::vector<Sample>& samples,
                                              const std::vector<std::string>& models, const Policy& policy,
                                              const std::string& metric);

/// The size of a run's tested family: per timed model one comparison, one more with a
/// Policy::tailValue, and one more with Measurement::compileTime; the timing comparisons are not
/// counted when the modelled device time decides (they are decided exactly).
int comparisonCount(int timedModels, const Policy& p, const Measurement& m);

/// Warnings when the schedule cannot reach the adjusted alpha: the exact two-sided signed-rank
/// test needs n >= minRoundsForAlpha(alpha_look / m) rounds to reject at all. `comparisons` is
/// the whole family (comparisonCount).
std::vector<std::string> reachabilityWarnings(const Policy& policy, int comparisons);

} // namespace dynqual::diff
