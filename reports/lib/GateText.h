#pragma once
// Cell texts shared by the Markdown and HTML gate reports, so both say the same.
#include "dynqual/diff/AbTypes.h"
#include "dynqual/reports/GateReport.h"

#include <string>
#include <vector>

namespace dynqual::reports::detail {

/// "+3.25%" for a ratio of 1.0325; "unbounded" for a non-finite or non-positive ratio.
std::string gatePercent(double ratio);
/// Worst combined relative L2 over the cases of one arm vs the reference: "bit-exact", "1.2e-07",
/// or "-" when no case was compared.
std::string worstRelL2(const diff::ModelCheck& c, bool head);
/// Head vs base over the cases: "bit-exact", "equal within gate", "differs", or "-".
std::string headVsBase(const diff::ModelCheck& c);
/// The rounds of the look that closed a comparison, or "open".
std::string closedAt(const diff::MetricComparison& c);
/// The verdict of a comparison: "regression", .... A comparison decided without a test
/// (MetricComparison::exact) names its change against `margin` (a fraction, 0.02 for 2 %):
/// "+1.40 % (exact, within the ±2 % margin)" for a real change under the margin, "no-change
/// (exact, equal)" for none, "regression (exact, beyond the ±2 % margin)". " (beside, not
/// deciding)" is appended for the side metric.
std::string verdictCell(const diff::MetricComparison& c, double margin);
/// The sentence naming the metric that decided the run and the one reported beside it
/// (Measurement::metric; docs/metrics/gate-decision.md, "Decision metric").
std::string decisionMetricSentence(const diff::AbResult& r);
/// The footer of a gate report, "How this gate decided": how the metric that decided this run
/// (AbResult::metric) was decided under ctx.policy, with the run's own numbers (margin, alpha,
/// looks, round values, the rounds taken) and the page that defines the metric. Plain text, one
/// string per paragraph (the renderers escape it).
std::vector<std::string> decisionFooter(const diff::AbResult& r, const GateContext& ctx);
/// What a round value is, for a sentence: "its fastest sample" (min), "the mean of its fastest
/// half", "the mean of its samples", ....
std::string roundValueText(diff::RoundValue v);
/// "12, 16, 24".
std::string joinedInts(const std::vector<int>& v);

} // namespace dynqual::reports::detail
