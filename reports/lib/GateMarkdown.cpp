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

std::string verdictCell(const diff::MetricComparison& c, double margin) {
  std::string v = stats::verdictName(c.verdict);
  if (c.exact) {
    // An exact change is real however small; only its size against the margin decides.
    const std::string band = fmt::format("±{:.3g} % margin", margin * 100);
    if (c.verdict != diff::Verdict::NoChange)
      v += " (exact, beyond the " + band + ")";
    else if (c.ratio != 1)
      v = fmt::format("{:+.2f} % (exact, within the {})", (c.ratio - 1) * 100, band);
    else
      v += " (exact)";
  }
  return v + (c.deciding ? "" : " (beside, not deciding)");
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

std::string roundValueText(diff::RoundValue v) {
  switch (v) {
  case diff::RoundValue::Min:
    return "its fastest sample";
  case diff::RoundValue::LowerHalfMean:
    return "the mean of its fastest half";
  case diff::RoundValue::Mean:
    return "the mean of its samples";
  case diff::RoundValue::Median:
    return "the median of its samples";
  case diff::RoundValue::P90:
    return "the 90th percentile of its samples";
  }
  return diff::roundValueName(v);
}

namespace {

/// How the tested (not exact) comparisons were decided, with the policy's numbers.
std::string testedText(const GateContext& ctx, long family) {
  const diff::Policy& p = ctx.policy;
  std::string s =
      fmt::format("Each round times both arms in ABBA order, {} samples per position; an arm's round value is {} "
                  "({})",
                  ctx.measure.samplesPerPosition, roundValueText(p.roundValue), diff::roundValueName(p.roundValue));
  if (p.tailValue)
    s += fmt::format("; a second comparison per model uses {} ({}), and an improvement needs both",
                     roundValueText(*p.tailValue), diff::roundValueName(*p.tailValue));
  s += fmt::format(
      ". The per-round log ratios head/base are tested with the two-sided Wilcoxon signed-rank test and "
      "estimated by Hodges-Lehmann at looks after rounds {}; alpha {:.3g} over the suite is split over the looks "
      "(Bonferroni) and by Holm over the {} tested comparison{} of a look. A regression or an improvement needs p "
      "below its level and the whole interval beyond the ±{:.3g} % margin, no change the equivalence interval (two "
      "one-sided tests) within it; anything else is inconclusive (exit 3) when the looks or the {:.0f} s budget end.",
      joinedInts(p.looks), p.alpha, family, family == 1 ? "" : "s", p.margin * 100, ctx.measure.budgetSeconds);
  return s;
}

} // namespace

std::vector<std::string> decisionFooter(const diff::AbResult& r, const GateContext& ctx) {
  diff::Measurement m;
  m.clock = r.clock;
  m.metric = r.metric;
  const std::string metric = diff::decidingMetric(m);
  long timed = 0, exact = 0;
  for (const auto& c : r.comparisons)
    if (c.deciding && c.verdict != diff::Verdict::Identical) {
      ++timed;
      exact += c.exact ? 1 : 0;
    }
  const long tested = timed - exact;
  const std::string took =
      fmt::format("This run took {} round{} ({} look{}, {:.0f} s).", r.rounds, r.rounds == 1 ? "" : "s", r.looksDone,
                  r.looksDone == 1 ? "" : "s", r.wallSeconds);
  if (r.metric != diff::DecisionMetric::ModelledDeviceTime)
    return {fmt::format("Decided on {}, the measured {} time per run (docs/metrics/gate-decision.md). ", metric,
                        exec::timingClockName(r.clock)) +
            (timed == 0 ? std::string("No model was timed.") : testedText(ctx, tested)) + " " + took};
  std::string s = fmt::format("Decided on {}, the sim's modelled device time per run: an exact metric, computed from "
                              "the device events each run makes (kernels, bytes, copies, synchronizations) with a "
                              "roofline model of one GPU, so it has no noise (docs/metrics/modelled-device-time.md). ",
                              metric);
  const int firstLook = ctx.policy.looks.empty() ? 1 : ctx.policy.looks.front();
  if (timed == 0)
    s += "No model was timed.";
  else
    s += fmt::format("{} of {} timed comparison{} had one value per arm in every sample of the first look's {} "
                     "round{} and {} decided by the exact ratio head/base against the ±{:.3g} % margin: beyond it "
                     "a regression or an improvement, within it no change, however small the change; no "
                     "statistical test, no alpha.",
                     exact, timed, timed == 1 ? "" : "s", firstLook, firstLook == 1 ? "" : "s",
                     exact == 1 ? "was" : "were", ctx.policy.margin * 100);
  if (tested > 0)
    s += fmt::format(" {} {} not constant and {} tested as a measured time is. ", tested, tested == 1 ? "was" : "were",
                     tested == 1 ? "was" : "were") +
         testedText(ctx, tested);
  return {s + " " + took,
          "What it predicts: it ranks changes of kernel count, bytes moved, copies and synchronizations; it does "
          "not predict a GPU's absolute time, and how closely it follows a GPU's measured time has not been measured "
          "yet. What "
          "it leaves out: docs/metrics/modelled-device-time.md, \"What it ignores\"; a change only a GPU would "
          "feel needs the gate on a GPU machine (docs/commands/ab.md)."};
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
  const auto isSide = [](const diff::MetricComparison& c) { return !c.deciding; };
  const auto sideCount = std::count_if(r.comparisons.begin(), r.comparisons.end(), isSide);
  const std::string header =
      "| model | metric | base | head | change | CI | equivalence CI | p | level | rounds | closed at | outlier "
      "rounds | verdict |\n"
      "|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---|\n";
  const auto row = [&](const diff::MetricComparison& c) {
    if (c.verdict == diff::Verdict::Identical)
      return fmt::format("| {} | {} | - | - | none | - | - | - | - | 0 | - | - | identical |\n",
                         escapeMarkdown(c.model), escapeMarkdown(c.metric));
    return fmt::format(
        "| {} | {} | {:.4g} {} | {:.4g} {} | {} | [{}, {}] | [{}, {}] | {:.2g} | {:.2g} | {} | {} | {} | "
        "{} |\n",
        escapeMarkdown(c.model), escapeMarkdown(c.metric), c.baseMedian, c.unit, c.headMedian, c.unit, pct(c.ratio),
        pct(c.ciLow), pct(c.ciHigh), pct(c.eqLow), pct(c.eqHigh), c.p, c.alphaUsed, c.rounds, closedAt(c),
        c.outlierRounds.size(), verdictCell(c, ctx.policy.margin));
  };
  if (r.comparisons.size() == static_cast<size_t>(sideCount)) {
    md << "No model was timed.\n\n";
  } else {
    // The deciding comparisons only: as many rows as the verdict line counts.
    md << header;
    for (const auto& c : r.comparisons)
      if (c.deciding)
        md << row(c);
    bool anyTimed = std::any_of(r.comparisons.begin(), r.comparisons.end(), [](const diff::MetricComparison& c) {
      return c.deciding && c.verdict != diff::Verdict::Identical;
    });
    if (anyTimed)
      md << fmt::format("\nChange = Hodges-Lehmann estimate of head/base over per-round ratios (each arm's "
                        "round value: {}); a comparison is significant when p < level, its share of alpha "
                        "{:.3g} over the suite after the split over looks and Holm; CI at 1 - level; margin "
                        "+-{:.3g}%; no change when the equivalence CI (two one-sided tests at the look's share "
                        "of alpha before Holm, at 1 - 2 x that share) lies within the margin; closed at = the "
                        "rounds of the look that decided it (open: no look decided it).\n\n",
                        roundValueText(ctx.policy.roundValue), ctx.policy.alpha, ctx.policy.margin * 100);
    if (anyTimed)
      md << escapeMarkdown(decisionMetricSentence(r)) << "\n\n";
    if (std::any_of(r.comparisons.begin(), r.comparisons.end(),
                    [](const diff::MetricComparison& c) { return c.verdict == diff::Verdict::Identical; }))
      md << (anyTimed ? "" : "\n")
         << "Identical = both arms run byte-identical programs on byte-identical runtimes (hashes below): "
            "no timing difference can be a change of the code, so these models were not timed (a pass).\n\n";
  }
  if (sideCount > 0) {
    diff::Measurement m;
    m.clock = r.clock;
    m.metric = r.metric;
    md << "### Beside, not deciding: " << escapeMarkdown(diff::sideMetric(m)) << "\n\n"
       << fmt::format("{} comparison{} of the side metric, reported only: never in the exit code or the counts "
                      "above.\n\n",
                      sideCount, sideCount == 1 ? "" : "s")
       << header;
    for (const auto& c : r.comparisons)
      if (!c.deciding)
        md << row(c);
    md << "\n";
    if (r.metric == diff::DecisionMetric::ModelledDeviceTime)
      md << escapeMarkdown(fmt::format(
                "The measured {} is not what decided, and the two can disagree, even in sign: it is how long this "
                "machine took to run the sim, which interprets every kernel in C++, so it moves with the sim's own "
                "code, its code layout and the machine's load, while {} counts only the device events the program "
                "makes (kernels, bytes, copies, synchronizations) on a model of one GPU.",
                diff::sideMetric(m), diff::kModelledDeviceMetric))
         << "\n\n";
    else
      md << escapeMarkdown(fmt::format(
                "The {} beside it is not what decided, and the two can disagree: it counts only the device events "
                "the program makes on a model of one GPU, so it cannot see a change of the code's own speed or "
                "layout, which the measured {} includes.",
                diff::kModelledDeviceMetric, diff::decidingMetric(m)))
         << "\n\n";
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
    md << fmt::format(" Stored as run {}", ctx.runId)
       << (ctx.dbPath.empty() ? std::string(".") : " in `" + ctx.dbPath + "`.");
  md << "\n\n### How this gate decided\n\n";
  for (const auto& p : decisionFooter(r, ctx))
    md << escapeMarkdown(p) << "\n\n";
  return md.str();
}

} // namespace dynqual::reports
