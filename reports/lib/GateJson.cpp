#include "dynqual/reports/GateReport.h"

#include <cmath>

namespace dynqual::reports {

namespace {

nlohmann::json num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json comparisonJson(const compare::Comparison& c) {
  if (c.outputs.empty())
    return nullptr;
  return {{"verdict", compare::verdictName(c.verdict)},
          {"reason", c.reason},
          {"combined_l2", num(c.combinedL2)},
          {"combined_rel_l2", num(c.combinedRelL2)}};
}

} // namespace

nlohmann::json renderGateJson(const diff::AbResult& r, const GateContext& ctx) {
  using nlohmann::json;
  json checks = json::array();
  for (const auto& c : r.checks) {
    json cases = json::array();
    for (const auto& cc : c.cases)
      cases.push_back({{"name", cc.name},
                       {"passed", cc.passed},
                       {"base_error", cc.baseError},
                       {"head_error", cc.headError},
                       {"base_vs_reference", comparisonJson(cc.baseVsReference)},
                       {"head_vs_reference", comparisonJson(cc.headVsReference)},
                       {"head_vs_base", comparisonJson(cc.headVsBase)}});
    checks.push_back({{"model", c.model},
                      {"passed", c.passed},
                      {"detail", c.detail},
                      {"bit_exact", c.bitExact},
                      {"cases", cases},
                      {"base_counters", c.baseCounters},
                      {"head_counters", c.headCounters},
                      {"base_artifact_bytes", c.baseArtifactBytes},
                      {"head_artifact_bytes", c.headArtifactBytes},
                      {"base_compile_ms", num(c.baseCompileMs)},
                      {"head_compile_ms", num(c.headCompileMs)},
                      {"base_version", c.baseVersion},
                      {"head_version", c.headVersion},
                      {"base_program_sha256", c.baseProgramSha256},
                      {"head_program_sha256", c.headProgramSha256}});
  }
  json comps = json::array();
  for (const auto& c : r.comparisons)
    comps.push_back(
        {{"model", c.model},
         {"metric", c.metric},
         {"unit", c.unit},
         {"direction", c.direction == diff::Direction::LowerIsBetter ? "lower_is_better" : "higher_is_better"},
         {"rounds", c.rounds},
         {"base_median", num(c.baseMedian)},
         {"head_median", num(c.headMedian)},
         {"ratio", num(c.ratio)},
         {"ci_low", num(c.ciLow)},
         {"ci_high", num(c.ciHigh)},
         {"equivalence_low", num(c.eqLow)},
         {"equivalence_high", num(c.eqHigh)},
         {"median_ratio", num(c.medianRatio)},
         {"bootstrap_low", num(c.bootLow)},
         {"bootstrap_high", num(c.bootHigh)},
         {"p", num(c.p)},
         {"p_holm", num(c.pAdjusted)},
         {"alpha", num(c.alphaUsed)},
         {"decided_at_rounds", c.decidedAtRounds},
         {"outlier_rounds", c.outlierRounds},
         {"verdict", stats::verdictName(c.verdict)},
         {"deciding", c.deciding},
         {"exact", c.exact}});
  json runtime = json::object();
  for (const auto& [bin, h] : r.runtimeSha256)
    runtime[bin] = {{"base", h.first}, {"head", h.second}};
  json counters = json::array();
  for (const auto& c : r.counterChanges)
    counters.push_back({{"model", c.model}, {"name", c.name}, {"base", c.base}, {"head", c.head}});
  json samples = json::array();
  for (const auto& s : r.samples)
    samples.push_back({s.model, s.arm, s.round, s.position, s.rep, s.valueMs, s.iterations});
  json compileSamples = json::array();
  for (const auto& s : r.compileSamples)
    compileSamples.push_back({s.model, s.arm, s.round, s.position, s.valueMs});
  auto env = [](const diff::Environment& e) {
    return json{{"machine", e.machine},      {"load_average_1m", num(e.loadAverage1)},
                {"affinity", e.affinity},    {"governor", e.governor},
                {"gpu_clocks", e.gpuClocks}, {"kernel_env", e.kernelEnv}};
  };
  return {{"format", "dynqual-ab"},
          {"version", 1},
          {"command", ctx.command},
          {"verdict", diff::verdictLine(r)},
          {"exit_code", diff::exitCodeFor(r)},
          {"exit_meaning", exitCodeMeaning(diff::exitCodeFor(r))},
          {"run_id", ctx.runId},
          {"base", ctx.baseLabel},
          {"head", ctx.headLabel},
          {"policy",
           {{"alpha", ctx.policy.alpha},
            {"margin", ctx.policy.margin},
            {"looks", ctx.policy.looks},
            {"bootstrap_resamples", ctx.policy.bootstrapResamples},
            {"seed", ctx.policy.seed},
            {"round_value", diff::roundValueName(ctx.policy.roundValue)},
            {"family_correction", "holm"},
            {"alpha_spending", "bonferroni over looks"}}},
          {"measurement",
           {{"samples_per_position", ctx.measure.samplesPerPosition},
            {"warmup", ctx.measure.warmup},
            {"min_sample_ms", ctx.measure.minSampleMs},
            {"budget_s", ctx.measure.budgetSeconds},
            {"clock", exec::timingClockName(r.clock)},
            {"decision_metric", diff::decisionMetricName(r.metric)},
            {"interleave", diff::interleaveName(ctx.measure.interleave)},
            {"pin_cpu", ctx.measure.cpu}}},
          {"rounds", r.rounds},
          {"looks_done", r.looksDone},
          {"budget_exhausted", r.budgetExhausted},
          {"wall_s", num(r.wallSeconds)},
          {"accuracy", checks},
          {"comparisons", comps},
          {"counter_changes", counters},
          {"slowdown_us", r.slowdownUs},
          {"compile_samples", compileSamples},
          {"binary_bytes", r.binaryBytes},
          {"runtime_sha256", runtime},
          {"builds", ctx.notes},
          {"environment", {{"start", env(r.envStart)}, {"end", env(r.envEnd)}, {"warnings", r.envWarnings}}},
          {"warnings", r.warnings},
          {"exploratory", r.exploratory},
          {"infrastructure_errors", r.infraErrors},
          {"samples_columns", {"model", "arm", "round", "position", "rep", "ms", "iterations"}},
          {"samples", samples}};
}

} // namespace dynqual::reports
