#pragma once
// Renderers of an A/B result (`dynqual ab`, `gate`, `calibrate`): Markdown for a PR comment,
// JSON for machines, JUnit XML for CI test tabs. They read only the typed AbResult.
#include "dynqual/diff/AbTypes.h"

#include <nlohmann/json.hpp>

#include <string>

namespace dynqual::reports {

/// What the renderers say about the run besides the result itself.
struct GateContext {
  std::string command;              ///< "ab", "gate" or "calibrate"
  std::string baseLabel, headLabel; ///< variant text, plus the revision for gates
  diff::Policy policy;
  diff::Measurement measure;
  int64_t runId = 0; ///< store row id, 0 when not recorded
  /// One line per arm on how its binaries came to be (gate: build time and ccache hit rate).
  std::vector<std::string> notes;
  /// The results database the run was recorded into (absolute), "" when it was not recorded.
  std::string dbPath;
};

/// The hidden marker a CI bot searches for to update one sticky PR comment.
inline constexpr const char* kGateStickyMarker = "<!-- dynqual-gate-comment -->";

/// "exit 1: a regression or an accuracy failure", ...: what an exit code of ab, gate and
/// calibrate (diff::ExitCode) means.
std::string exitCodeMeaning(int code);

/// Markdown: the sticky marker, one verdict line and the exit code's meaning, then per model and
/// metric base, head, change %, CI, p (raw and Holm), the level p was compared with
/// (MetricComparison::alphaUsed), rounds, the rounds of the look that closed it, outlier rounds
/// and verdict; the accuracy table; the deterministic counters that changed; artifact sizes
/// This/Base/Delta; the runtime and program hashes (first 12 hex digits) when the arms are dq; the
/// builds (ctx.notes); the environment check; the policy and measurement; the run id and database
/// (ctx.dbPath); and a footer, "How this gate decided", written from the run's decision metric and
/// ctx.policy (an exact modelled time: its margin, the rounds, the metric's page; a measured time:
/// the round values, test, looks, alpha and margin the analysis used). The comparisons of the side
/// metric (MetricComparison::deciding false) get a table of their own, so the Timing table has as
/// many rows as the verdict line counts comparisons. An identical comparison is a row with no
/// numbers and the verdict "identical".
std::string renderGateMarkdown(const diff::AbResult& r, const GateContext& ctx);

/// JSON document {"format":"dynqual-ab","version":1,...} with every field of the result,
/// the samples, the artifact hashes ("runtime_sha256", each check's "*_program_sha256") and the
/// build lines ("builds") included. Non-finite numbers are written as null.
nlohmann::json renderGateJson(const diff::AbResult& r, const GateContext& ctx);

/// JUnit XML: one testcase per model for accuracy and one per model and metric for timing.
/// A regression or accuracy failure is a <failure>, inconclusive is <skipped>, an infrastructure
/// error is an <error> testcase; identical passes (its <system-out> says it was not timed).
std::string renderGateJunit(const diff::AbResult& r, const GateContext& ctx);

/// Self-contained HTML gate page (Chart.js from `chartJsPath` inlined): the timing, accuracy and
/// counter tables, per model the samples of both arms side by side over the rounds, and each
/// model's ratio with its interval against the no-change band. Throws std::runtime_error when
/// Chart.js cannot be read.
std::string renderGateHtml(const diff::AbResult& r, const GateContext& ctx, const std::string& chartJsPath);

} // namespace dynqual::reports
