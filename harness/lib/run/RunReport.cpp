#include "dynqual/run/RunReport.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace dynqual::run {

RunTotals totals(const std::vector<ModelResult>& results) {
  RunTotals t;
  for (const auto& r : results) {
    if (r.status == ModelStatus::Passed)
      ++t.passed;
    else if (r.status == ModelStatus::Failed)
      ++t.failed;
    else {
      ++t.skipped;
      ++t.skippedByReason[scope::skipReasonName(*r.skipReason)];
    }
  }
  return t;
}

namespace {

std::string shapeText(const std::vector<int64_t>& s) { return shapeToString(s); }

std::string num(double v) { return fmt::format("{:.3g}", v); }

uint64_t counter(const CaseResult& c, const std::string& name) {
  for (const auto& [k, v] : c.counters)
    if (k == name)
      return v;
  return 0;
}

nlohmann::json comparisonJson(const compare::Comparison& c) {
  nlohmann::json outs = nlohmann::json::array();
  for (const auto& o : c.outputs)
    outs.push_back({{"name", o.name}, {"verdict", compare::verdictName(o.verdict)}, {"reason", o.reason},
                    {"dtype", dtypeName(o.dtype)}, {"shape", o.shape}, {"elements", o.elements},
                    {"l2", o.l2}, {"rel_l2", o.relL2}, {"max_abs", o.maxAbs}, {"cosine", o.cosine},
                    {"nan_inf_skipped", o.nonFiniteSkipped}, {"mismatches", o.mismatches}});
  return {{"verdict", compare::verdictName(c.verdict)}, {"reason", c.reason},
          {"combined_l2", c.combinedL2}, {"combined_rel_l2", c.combinedRelL2}, {"outputs", outs}};
}

} // namespace

void renderText(std::ostream& os, const std::vector<ModelResult>& results, bool listSkipped) {
  fmt::print(os, "{:<28} {:<22} {:<14} {:<14} {:>9} {:>9} {:>9} {:>7} {:>9} {}\n", "model", "set/binding",
             "output", "shape", "L2", "rel-L2", "max-abs", "NaN/Inf", "readbacks", "verdict");
  for (const auto& r : results) {
    if (r.status == ModelStatus::Skipped) {
      if (listSkipped)
        fmt::print(os, "{:<28} skipped: {} ({})\n", r.name, scope::skipReasonName(*r.skipReason), r.detail);
      continue;
    }
    if (r.cases.empty())
      fmt::print(os, "{:<28} {:<22} {}: {}\n", r.name, "-", modelStatusName(r.status), r.detail);
    for (const auto& c : r.cases) {
      if (c.skipped || !c.vsExpected) {
        fmt::print(os, "{:<28} {:<22} {}: {}\n", r.name, c.name, c.skipped ? "skip" : "FAIL", c.error);
        continue;
      }
      for (const auto& o : c.vsExpected->outputs) {
        bool ok = o.verdict == compare::Verdict::Pass && c.passed;
        fmt::print(os, "{:<28} {:<22} {:<14} {:<14} {:>9} {:>9} {:>9} {:>7} {:>9} {}\n", r.name, c.name,
                   o.name.substr(0, 14), shapeText(o.shape), num(o.l2), num(o.relL2), num(o.maxAbs),
                   o.nonFiniteSkipped, counter(c, "scalar_readbacks"),
                   ok ? (r.bitExact && o.isFloat ? "pass (bit-exact)" : "pass") : "FAIL");
      }
      if (!c.passed)
        fmt::print(os, "  -> {}: {}\n", c.name, c.error);
    }
  }
  RunTotals t = totals(results);
  std::string reasons;
  for (const auto& [k, v] : t.skippedByReason)
    reasons += fmt::format("{}{}={}", reasons.empty() ? "" : ", ", k, v);
  fmt::print(os, "\n{} models: {} passed, {} failed, {} skipped{}\n", results.size(), t.passed, t.failed, t.skipped,
             reasons.empty() ? "" : " (" + reasons + ")");
}

nlohmann::json renderJson(const std::vector<ModelResult>& results) {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json m = {{"name", r.name}, {"path", r.dir.string()}, {"status", modelStatusName(r.status)},
                        {"detail", r.detail}, {"bit_exact", r.bitExact}, {"compile_ms", r.compileMs}};
    if (r.skipReason)
      m["skip_reason"] = scope::skipReasonName(*r.skipReason);
    nlohmann::json cases = nlohmann::json::array();
    for (const auto& c : r.cases) {
      nlohmann::json cj = {{"name", c.name}, {"kind", c.kind}, {"binding", c.binding}, {"passed", c.passed},
                           {"skipped", c.skipped}, {"error", c.error}, {"input_shapes", c.inputShapes},
                           {"execute_ms", c.executeMs}};
      nlohmann::json counters = nlohmann::json::object();
      for (const auto& [k, v] : c.counters)
        counters[k] = v;
      cj["counters"] = counters;
      if (c.vsExpected)
        cj["vs_expected"] = comparisonJson(*c.vsExpected);
      if (c.vsReference)
        cj["vs_reference"] = comparisonJson(*c.vsReference);
      if (c.referenceVsStored)
        cj["reference_vs_stored"] = comparisonJson(*c.referenceVsStored);
      cases.push_back(cj);
    }
    m["cases"] = cases;
    models.push_back(m);
  }
  RunTotals t = totals(results);
  return {{"format", "dynqual-run"}, {"version", 1}, {"models", models},
          {"totals", {{"passed", t.passed}, {"failed", t.failed}, {"skipped", t.skipped},
                      {"tried", t.tried()}, {"skipped_by_reason", t.skippedByReason}}}};
}

} // namespace dynqual::run
