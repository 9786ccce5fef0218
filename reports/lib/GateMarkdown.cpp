#include "GateText.h"

#include "dynqual/reports/GateReport.h"
#include "dynqual/reports/Report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace dynqual::reports {

namespace detail {

std::string gatePercent(double ratio) {
  if (!std::isfinite(ratio) || ratio <= 0)
    return "unbounded";
  return fmt::format("{:+.2f}%", (ratio - 1) * 100);
}

std::string shortHash(const std::string& h) {
  return h.empty() ? "-" : h.substr(0, 12);
}

std::string worstRelL2(const diff::ModelCheck& c, bool head) {
  double worst = 0;
  bool any = false;
  for (const auto& cc : c.cases) {
    const auto& cmp = head ? cc.headVsReference : cc.baseVsReference;
    if (cmp.outputs.empty())
      continue;
    any = true;
    worst = std::max(worst, cmp.combinedRelL2);
  }
  if (!any)
    return "-";
  return c.bitExact ? (worst == 0 ? "bit-exact" : fmt::format("{:.2e}", worst)) : fmt::format("{:.2e}", worst);
}

std::string headVsBase(const diff::ModelCheck& c) {
  bool any = std::any_of(c.cases.begin(), c.cases.end(), [](const auto& cc) { return !cc.headVsBase.outputs.empty(); });
  if (!any)
    return "-";
  return std::all_of(c.cases.begin(), c.cases.end(),
                     [](const auto& cc) { return cc.headVsBase.verdict == compare::Verdict::Pass; })
             ? (c.bitExact ? "bit-exact" : "equal within gate")
             : "differs";
}

std::string closedAt(const diff::MetricComparison& c) {
  return c.decidedAtRounds > 0 ? std::to_string(c.decidedAtRounds) : "open";
}

std::string verdictCell(const diff::MetricComparison& c) {
  return std::string(stats::verdictName(c.verdict)) + (c.exact ? " (exact)" : "") +
         (c.deciding ? "" : " (beside, not deciding)");
}

std::string decisionMetricSentence(const diff::AbResult& r) {
  diff::Measurement m;
  m.clock = r.clock;
  m.metric = r.metric;
  std::string s = fmt::format("Decided on {} (--metric {}); {} is reported beside it and never changes the exit code.",
                              diff::decidingMetric(m), diff::decisionMetricName(r.metric), diff::sideMetric(m));
  if (std::any_of(r.comparisons.begin(), r.comparisons.end(), [](const diff::MetricComparison& c) { return c.exact; }))
    s += " exact: a deterministic metric whose every run of each arm had one value, decided by its exact ratio against "
         "the margin without a test (p 0 for any difference, 1 for none).";
  return s;
}

std::string joinedInts(const std::vector<int>& v) {
  std::string s;
  for (int x : v)
    s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

} // namespace detail

using namespace detail;

namespace {

std::string pct(double ratio) {
  return gatePercent(ratio);
}

} // namespace

std::string exitCodeMeaning(int code) {
  switch (code) {
  case diff::kPass:
    return "exit 0: pass (accuracy passed; no regression, nothing inconclusive)";
  case diff::kRegression:
    return "exit 1: a regression or an accuracy failure";
  case diff::kUsage:
    return "exit 2: usage or input error";
  case diff::kInconclusive:
    return "exit 3: inconclusive within the time budget";
  case diff::kInfra:
    return "exit 4: infrastructure error (an arm, runner or build was unusable)";
  default:
    return fmt::format("exit {}: not an exit code of this dynqual", code);
  }
}

std::string renderGateMarkdown(const diff::AbResult& r, const GateContext& ctx) {
  std::ostringstream md;
  md << kGateStickyMarker << "\n";
  md << "**dynqual " << ctx.command << ": " << escapeMarkdown(diff::verdictLine(r)) << "**\n\n";
  md << escapeMarkdown(exitCodeMeaning(diff::exitCodeFor(r))) << ".\n\n";
  md << "base `" << escapeMarkdown(ctx.baseLabel) << "` vs head `" << escapeMarkdown(ctx.headLabel) << "`\n\n";

  md << "### Timing\n\n";
  if (r.comparisons.empty()) {
    md << "No model was timed.\n\n";
  } else {
    md << "| model | metric | base | head | change | CI | equivalence CI | p | level | rounds | closed at | outlier "
          "rounds "
          "| verdict |\n"
          "|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---|\n";
    for (const auto& c : r.comparisons) {
      if (c.verdict == diff::Verdict::Identical) {
        md << fmt::format("| {} | {} | - | - | none | - | - | - | - | 0 | - | - | identical |\n",
                          escapeMarkdown(c.model), escapeMarkdown(c.metric));
        continue;
      }
      md << fmt::format(
          "| {} | {} | {:.4g} {} | {:.4g} {} | {} | [{}, {}] | [{}, {}] | {:.2g} | {:.2g} | {} | {} | {} | "
          "{} |\n",
          escapeMarkdown(c.model), escapeMarkdown(c.metric), c.baseMedian, c.unit, c.headMedian, c.unit, pct(c.ratio),
          pct(c.ciLow), pct(c.ciHigh), pct(c.eqLow), pct(c.eqHigh), c.p, c.alphaUsed, c.rounds, closedAt(c),
          c.outlierRounds.size(), verdictCell(c));
    }
    bool anyTimed = std::any_of(r.comparisons.begin(), r.comparisons.end(),
                                [](const diff::MetricComparison& c) { return c.verdict != diff::Verdict::Identical; });
    if (anyTimed)
      md << fmt::format("\nChange = Hodges-Lehmann estimate of head/base over per-round ratios (each arm's "
                        "round value: {}); a comparison is significant when p < level, its share of alpha "
                        "{:.3g} over the suite after the split over looks and Holm; CI at 1 - level; margin "
                        "+-{:.3g}%; no change when the equivalence CI (two one-sided tests at the look's share "
                        "of alpha before Holm, at 1 - 2 x that share) lies within the margin; closed at = the "
                        "rounds of the look that decided it (open: no look decided it).\n\n",
                        ctx.policy.roundValue == diff::RoundValue::Min ? "its fastest sample"
                                                                       : "the mean of its fastest half",
                        ctx.policy.alpha, ctx.policy.margin * 100);
    if (anyTimed)
      md << escapeMarkdown(decisionMetricSentence(r)) << "\n\n";
    if (std::any_of(r.comparisons.begin(), r.comparisons.end(),
                    [](const diff::MetricComparison& c) { return c.verdict == diff::Verdict::Identical; }))
      md << (anyTimed ? "" : "\n")
         << "Identical = both arms run byte-identical programs on byte-identical runtimes (hashes below): "
            "no timing difference can be a change of the code, so these models were not timed (a pass).\n\n";
  }

  md << "### Accuracy\n\n| model | cases | base vs reference | head vs reference | head vs base | verdict |\n"
        "|---|---:|---|---|---|---|\n";
  for (const auto& c : r.checks)
    md << fmt::format("| {} | {} | {} | {} | {} | {} |\n", escapeMarkdown(c.model), c.cases.size(),
                      worstRelL2(c, false), worstRelL2(c, true), headVsBase(c),
                      c.passed ? "pass" : "FAIL: " + escapeMarkdown(c.detail));
  md << "\n(max combined relative L2 over the cases)\n\n";

  md << "### Deterministic counters that changed\n\n";
  bool uncounted = std::any_of(r.checks.begin(), r.checks.end(), [](const diff::ModelCheck& c) {
    return c.baseCounters.empty() != c.headCounters.empty();
  });
  if (uncounted)
    md << "One arm reports no device counters (a runner arm), so its counters cannot be compared.\n\n";
  if (r.counterChanges.empty()) {
    if (!uncounted)
      md << "None: every device counter and artifact size is equal.\n\n";
  } else {
    md << "| model | counter | base | head | delta |\n|---|---|---:|---:|---:|\n";
    for (const auto& c : r.counterChanges)
      md << fmt::format("| {} | {} | {} | {} | {:+d} |\n", escapeMarkdown(c.model), escapeMarkdown(c.name), c.base,
                        c.head, c.head - c.base);
    md << "\n";
  }

  md << "### Sizes\n\n| model | artifact | This | Base | Delta |\n|---|---|---:|---:|---:|\n";
  for (const auto& c : r.checks)
    if (c.baseArtifactBytes || c.headArtifactBytes)
      md << fmt::format("| {} | .dqp + .dqp.bin | {} | {} | {} |\n", escapeMarkdown(c.model),
                        c.headArtifactBytes ? std::to_string(c.headArtifactBytes) : "-",
                        c.baseArtifactBytes ? std::to_string(c.baseArtifactBytes) : "-",
                        c.headArtifactBytes && c.baseArtifactBytes
                            ? fmt::format("{:+d}", static_cast<int64_t>(c.headArtifactBytes) -
                                                       static_cast<int64_t>(c.baseArtifactBytes))
                            : "-");
  for (const auto& [bin, bytes] : r.binaryBytes)
    md << fmt::format("| (binary) | {} | {} | {} | {:+d} |\n", bin, bytes.second, bytes.first,
                      static_cast<int64_t>(bytes.second) - static_cast<int64_t>(bytes.first));
  if (!r.runtimeSha256.empty()) {
    md << "\n### Artifact hashes (SHA-256, first 12 hex digits)\n\n| what | base | head | same |\n|---|---|---|---|\n";
    for (const auto& [bin, h] : r.runtimeSha256)
      md << fmt::format("| {} | {} | {} | {} |\n", bin, shortHash(h.first), shortHash(h.second),
                        !h.first.empty() && h.first == h.second ? "yes" : "no");
    for (const auto& c : r.checks)
      if (!c.baseProgramSha256.empty() || !c.headProgramSha256.empty())
        md << fmt::format("| {} program | {} | {} | {} |\n", escapeMarkdown(c.model), shortHash(c.baseProgramSha256),
                          shortHash(c.headProgramSha256),
                          !c.baseProgramSha256.empty() && c.baseProgramSha256 == c.headProgramSha256 ? "yes" : "no");
  }
  if (!ctx.notes.empty()) {
    md << "\n### Builds\n\n";
    for (const auto& n : ctx.notes)
      md << "- " << escapeMarkdown(n) << "\n";
  }
  md << "\n### Environment\n\n";
  md << fmt::format("{}; load {:.2f} -> {:.2f}; affinity {}; governor {}\n\n", escapeMarkdown(r.envStart.machine),
                    r.envStart.loadAverage1, r.envEnd.loadAverage1,
                    r.envStart.affinity.empty() ? "?" : r.envStart.affinity,
                    r.envStart.governor.empty() ? "unreadable" : r.envStart.governor);
  if (!r.envStart.gpuClocks.empty())
    md << "GPU: " << escapeMarkdown(r.envStart.gpuClocks) << "\n\n";
  for (const auto& w : r.envWarnings)
    md << "- warning: " << escapeMarkdown(w) << "\n";
  for (const auto& w : r.warnings)
    md << "- note: " << escapeMarkdown(w) << "\n";
  for (const auto& [model, us] : r.slowdownUs)
    md << fmt::format("- injected slowdown: {} head +{:.1f} us per run\n", escapeMarkdown(model), us);
  if (r.budgetExhausted)
    md << "- the time budget ended before the next look\n";
  md << "\n### Policy\n\n";
  md << fmt::format("alpha {:.3g} over the suite (Holm across the comparisons of a look, Bonferroni over the looks), "
                    "margin {:.3g}%, looks at rounds {}, {} bootstrap resamples, seed {}, round value {}.\n",
                    ctx.policy.alpha, ctx.policy.margin * 100, joinedInts(ctx.policy.looks),
                    ctx.policy.bootstrapResamples, ctx.policy.seed, diff::roundValueName(ctx.policy.roundValue));
  md << fmt::format("\n{} rounds, {} looks, {:.0f} s. Samples per ABBA position {}, min sample {} ms, budget {} s, "
                    "{} clock, {} interleaving{}.",
                    r.rounds, r.looksDone, r.wallSeconds, ctx.measure.samplesPerPosition, ctx.measure.minSampleMs,
                    ctx.measure.budgetSeconds, exec::timingClockName(r.clock),
                    diff::interleaveName(ctx.measure.interleave),
                    ctx.measure.cpu >= 0 ? fmt::format(" on CPU {}", ctx.measure.cpu) : "");
  if (ctx.runId)
    md << fmt::format(" Stored as run {}.", ctx.runId);
  md << "\n";
  return md.str();
}

} // namespace dynqual::reports
