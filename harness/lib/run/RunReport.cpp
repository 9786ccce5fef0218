#include "dynqual/run/RunReport.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>

namespace dynqual::run {

void RunTotals::add(const std::string& status, const std::string& skipReason,
                    const std::vector<std::string>& missingOps, int notAdmitted) {
  bindingsNotAdmitted += notAdmitted;
  if (status == "pass") {
    ++passed;
  } else if (status == "skip") {
    ++skipped;
    ++skippedByReason[skipReason];
    for (const auto& op : missingOps)
      ++modelsMissingOp[op];
  } else {
    ++failed;
  }
}

int bindingsNotAdmitted(const ModelResult& r) {
  int n = 0;
  for (const auto& c : r.cases)
    n += c.kind == "binding" && c.skipped ? 1 : 0;
  return n;
}

RunTotals totals(const std::vector<ModelResult>& results) {
  RunTotals t;
  for (const auto& r : results)
    t.add(modelStatusName(r.status), r.skipReason ? scope::skipReasonName(*r.skipReason) : "", r.missingOps,
          bindingsNotAdmitted(r));
  return t;
}

std::string skipSummary(const RunTotals& t, std::size_t maxOps) {
  std::vector<std::pair<std::string, int>> ops(t.modelsMissingOp.begin(), t.modelsMissingOp.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string opText;
  for (std::size_t i = 0; i < ops.size() && i < maxOps; ++i)
    opText += fmt::format("{}{} {}", i ? ", " : "", ops[i].first, ops[i].second);
  if (ops.size() > maxOps)
    opText += fmt::format(", {} more ops", ops.size() - maxOps);
  std::string reasons;
  for (const auto& [k, v] : t.skippedByReason) {
    reasons += fmt::format("{}{}={}", reasons.empty() ? "" : ", ", k, v);
    if (k == scope::skipReasonName(scope::SkipReason::OpOutsideSupportedSet) && !opText.empty())
      reasons += " (" + opText + ")";
  }
  std::string out = reasons.empty() ? "" : " (" + reasons + ")";
  if (t.bindingsNotAdmitted > 0)
    out += fmt::format("; {} binding{} not admitted by the model", t.bindingsNotAdmitted,
                       t.bindingsNotAdmitted == 1 ? "" : "s");
  return out;
}

namespace {

std::string shapeText(const std::vector<int64_t>& s) {
  return shapeToString(s);
}

std::string num(double v) {
  return fmt::format("{:.3g}", v);
}

uint64_t counter(const CaseResult& c, const std::string& name) {
  for (const auto& [k, v] : c.counters)
    if (k == name)
      return v;
  return 0;
}

nlohmann::json comparisonJson(const compare::Comparison& c) {
  nlohmann::json outs = nlohmann::json::array();
  for (const auto& o : c.outputs)
    outs.push_back({{"name", o.name},
                    {"verdict", compare::verdictName(o.verdict)},
                    {"reason", o.reason},
                    {"dtype", dtypeName(o.dtype)},
                    {"shape", o.shape},
                    {"elements", o.elements},
                    {"l2", o.l2},
                    {"rel_l2", o.relL2},
                    {"max_abs", o.maxAbs},
                    {"cosine", o.cosine},
                    {"nan_inf_skipped", o.nonFiniteSkipped},
                    {"mismatches", o.mismatches}});
  return {{"verdict", compare::verdictName(c.verdict)},
          {"reason", c.reason},
          {"combined_l2", c.combinedL2},
          {"combined_rel_l2", c.combinedRelL2},
          {"outputs", outs}};
}

} // namespace

void renderText(std::ostream& os, const std::vector<ModelResult>& results, bool listSkipped) {
  fmt::print(os, "{:<28} {:<22} {:<14} {:<14} {:>9} {:>9} {:>9} {:>7} {:>9} {}\n", "model", "set/binding", "output",
             "shape", "L2", "rel-L2", "max-abs", "NaN/Inf", "readbacks", "verdict");
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
                   o.name.substr(0, 14), shapeText(o.shape), num(o.l2), num(o.relL2), num(o.maxAbs), o.nonFiniteSkipped,
                   counter(c, "scalar_readbacks"),
                   ok ? (r.bitExact && o.isFloat ? "pass (bit-exact)" : "pass") : "FAIL");
      }
      if (!c.passed)
        fmt::print(os, "  -> {}: {}\n", c.name, c.error);
    }
  }
  RunTotals t = totals(results);
  fmt::print(os, "\n{} models: {} passed, {} failed, {} skipped{}\n", results.size(), t.passed, t.failed, t.skipped,
             skipSummary(t));
}

nlohmann::json renderJson(const std::vector<ModelResult>& results) {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json m = {{"name", r.name},     {"path", r.dir.string()},  {"status", modelStatusName(r.status)},
                        {"detail", r.detail}, {"bit_exact", r.bitExact}, {"compile_ms", r.compileMs}};
    if (r.skipReason)
      m["skip_reason"] = scope::skipReasonName(*r.skipReason);
    if (!r.missingOps.empty())
      m["missing_ops"] = r.missingOps;
    nlohmann::json cases = nlohmann::json::array();
    for (const auto& c : r.cases) {
      nlohmann::json cj = {
          {"name", c.name},       {"kind", c.kind},   {"binding", c.binding},          {"passed", c.passed},
          {"skipped", c.skipped}, {"error", c.error}, {"input_shapes", c.inputShapes}, {"execute_ms", c.executeMs}};
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
  return {{"format", "dynqual-run"},
          {"version", 1},
          {"models", models},
          {"totals",
           {{"passed", t.passed},
            {"failed", t.failed},
            {"skipped", t.skipped},
            {"tried", t.tried()},
            {"skipped_by_reason", t.skippedByReason},
            {"models_missing_op", t.modelsMissingOp},
            {"bindings_not_admitted", t.bindingsNotAdmitted}}}};
}

} // namespace dynqual::run
