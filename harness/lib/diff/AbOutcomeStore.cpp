// The outcome row of an A/B run (ab_outcomes, schema version 6): what the run ended with beyond
// its samples, checks and comparisons, so a report rebuilt from the store says what the run said.
#include "dynqual/diff/AbStore.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace dynqual::diff {

namespace {

using nlohmann::json;

json environmentJson(const Environment& e) {
  return {{"machine", e.machine},   {"load_average_1m", e.loadAverage1}, {"affinity", e.affinity},
          {"governor", e.governor}, {"gpu_clocks", e.gpuClocks},         {"kernel_env", e.kernelEnv}};
}

Environment environmentFrom(const json& j) {
  Environment e;
  e.machine = j.value("machine", "");
  auto load = j.find("load_average_1m");
  e.loadAverage1 = load != j.end() && load->is_number() ? load->get<double>() : -1; // NaN was stored as null
  e.affinity = j.value("affinity", "");
  e.governor = j.value("governor", "");
  e.gpuClocks = j.value("gpu_clocks", "");
  e.kernelEnv = j.value("kernel_env", std::map<std::string, std::string>{});
  return e;
}

// Non-finite numbers travel as "inf", "-inf", "nan", as in the store's exchange format.
json number(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  return v;
}

double numberFrom(const json& j) {
  if (j.is_number())
    return j.get<double>();
  std::string s = j.get<std::string>();
  if (s == "inf")
    return INFINITY;
  if (s == "-inf")
    return -INFINITY;
  if (s == "nan")
    return NAN;
  throw std::runtime_error("'" + s + "' is not a number");
}

json comparisonJson(const compare::Comparison& c) {
  json outputs = json::array();
  for (const auto& o : c.outputs)
    outputs.push_back({{"name", o.name},
                       {"verdict", compare::verdictName(o.verdict)},
                       {"reason", o.reason},
                       {"elements", o.elements},
                       {"l2", number(o.l2)},
                       {"rel_l2", number(o.relL2)},
                       {"max_abs", number(o.maxAbs)}});
  return {{"verdict", compare::verdictName(c.verdict)},
          {"reason", c.reason},
          {"combined_l2", number(c.combinedL2)},
          {"combined_rel_l2", number(c.combinedRelL2)},
          {"outputs", outputs}};
}

compare::Verdict compareVerdictFrom(const json& j) {
  std::string v = j.get<std::string>();
  if (v == compare::verdictName(compare::Verdict::Pass))
    return compare::Verdict::Pass;
  if (v == compare::verdictName(compare::Verdict::Fail))
    return compare::Verdict::Fail;
  throw std::runtime_error("comparison verdict '" + v + "' is not one this dynqual knows");
}

compare::Comparison comparisonFrom(const json& j) {
  compare::Comparison c;
  c.verdict = compareVerdictFrom(j.at("verdict"));
  c.reason = j.at("reason").get<std::string>();
  c.combinedL2 = numberFrom(j.at("combined_l2"));
  c.combinedRelL2 = numberFrom(j.at("combined_rel_l2"));
  for (const auto& o : j.at("outputs")) {
    compare::OutputComparison out;
    out.name = o.at("name").get<std::string>();
    out.verdict = compareVerdictFrom(o.at("verdict"));
    out.reason = o.at("reason").get<std::string>();
    out.elements = o.at("elements").get<int64_t>();
    out.l2 = numberFrom(o.at("l2"));
    out.relL2 = numberFrom(o.at("rel_l2"));
    out.maxAbs = numberFrom(o.at("max_abs"));
    c.outputs.push_back(std::move(out));
  }
  return c;
}

json checksJson(const std::vector<ModelCheck>& checks) {
  json out = json::array();
  for (const auto& m : checks) {
    json cases = json::array();
    for (const auto& c : m.cases)
      cases.push_back({{"name", c.name},
                       {"passed", c.passed},
                       {"base_error", c.baseError},
                       {"head_error", c.headError},
                       {"base_vs_reference", comparisonJson(c.baseVsReference)},
                       {"head_vs_reference", comparisonJson(c.headVsReference)},
                       {"head_vs_base", comparisonJson(c.headVsBase)}});
    out.push_back(
        {{"model", m.model}, {"base_version", m.baseVersion}, {"head_version", m.headVersion}, {"cases", cases}});
  }
  return out;
}

void checksFrom(const json& j, std::vector<ModelCheck>& checks) {
  for (const auto& m : j) {
    std::string model = m.at("model").get<std::string>();
    for (auto& check : checks) {
      if (check.model != model)
        continue;
      check.baseVersion = m.at("base_version").get<std::string>();
      check.headVersion = m.at("head_version").get<std::string>();
      check.cases.clear();
      for (const auto& c : m.at("cases")) {
        CaseCheck cc;
        cc.name = c.at("name").get<std::string>();
        cc.passed = c.at("passed").get<bool>();
        cc.baseError = c.at("base_error").get<std::string>();
        cc.headError = c.at("head_error").get<std::string>();
        cc.baseVsReference = comparisonFrom(c.at("base_vs_reference"));
        cc.headVsReference = comparisonFrom(c.at("head_vs_reference"));
        cc.headVsBase = comparisonFrom(c.at("head_vs_base"));
        check.cases.push_back(std::move(cc));
      }
    }
  }
}

} // namespace

void insertAbOutcome(store::Store& store, int64_t runId, const AbResult& r) {
  json binaries = json::object();
  for (const auto& [file, bytes] : r.binaryBytes)
    binaries[file] = {bytes.first, bytes.second};
  json details = {
      {"infrastructure_errors", r.infraErrors},
      {"warnings", r.warnings},
      {"environment",
       {{"start", environmentJson(r.envStart)}, {"end", environmentJson(r.envEnd)}, {"warnings", r.envWarnings}}},
      {"binary_bytes", binaries},
      {"slowdown_us", r.slowdownUs},
      {"checks", checksJson(r.checks)}};
  SQLite::Statement q(store.db(), "INSERT INTO ab_outcomes VALUES(?,?,?,?,?,?,?,?,?)");
  q.bind(1, static_cast<int64_t>(runId));
  q.bind(2, kAbRecordVersion);
  q.bind(3, exitCodeFor(r));
  q.bind(4, verdictLine(r));
  q.bind(5, r.rounds);
  q.bind(6, r.looksDone);
  q.bind(7, r.budgetExhausted ? 1 : 0);
  if (std::isfinite(r.wallSeconds))
    q.bind(8, r.wallSeconds);
  else
    q.bind(8);
  q.bind(9, details.dump(-1, ' ', false, json::error_handler_t::replace)); // invalid UTF-8 in an error text
  q.exec();
}

std::optional<StoredOutcome> loadAbOutcome(store::Store& store, int64_t runId, std::vector<ModelCheck>& checks) {
  auto& db = store.db();
  if (!db.tableExists("ab_outcomes"))
    return std::nullopt; // a store older than schema version 6, read without migrating
  SQLite::Statement q(db, "SELECT record_version, exit_code, verdict_line, rounds, looks_done, budget_exhausted, "
                          "wall_s, details FROM ab_outcomes WHERE run_id = ?");
  q.bind(1, static_cast<int64_t>(runId));
  if (!q.executeStep())
    return std::nullopt;
  StoredOutcome o;
  o.recordVersion = q.getColumn(0).getInt();
  if (o.recordVersion > kAbRecordVersion)
    throw std::runtime_error(fmt::format("unsupported: run {} holds an A/B outcome of record version {}, written by a "
                                         "newer dynqual (this one reads up to {}); use a newer dynqual",
                                         runId, o.recordVersion, kAbRecordVersion));
  o.exitCode = q.getColumn(1).getInt();
  o.verdictLine = q.getColumn(2).getString();
  o.rounds = q.getColumn(3).getInt();
  o.looksDone = q.getColumn(4).getInt();
  o.budgetExhausted = q.getColumn(5).getInt() != 0;
  o.wallSeconds = q.getColumn(6).isNull() ? NAN : q.getColumn(6).getDouble();
  json d = json::parse(q.getColumn(7).getString(), nullptr, false);
  if (d.is_discarded() || !d.is_object())
    throw std::runtime_error(fmt::format("run {}: ab_outcomes.details is not a JSON object", runId));
  try {
    o.infraErrors = d.value("infrastructure_errors", std::vector<std::string>{});
    o.warnings = d.value("warnings", std::vector<std::string>{});
    json env = d.value("environment", json::object());
    o.envStart = environmentFrom(env.value("start", json::object()));
    o.envEnd = environmentFrom(env.value("end", json::object()));
    o.envWarnings = env.value("warnings", std::vector<std::string>{});
    json binaries = d.value("binary_bytes", json::object());
    for (const auto& [file, bytes] : binaries.items())
      o.binaryBytes[file] = {bytes.at(0).get<uint64_t>(), bytes.at(1).get<uint64_t>()};
    o.slowdownUs = d.value("slowdown_us", std::map<std::string, double>{});
    checksFrom(d.value("checks", json::array()), checks);
  } catch (const json::exception& e) {
    throw std::runtime_error(fmt::format("run {}: malformed ab_outcomes.details: {}", runId, e.what()));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("run {}: ab_outcomes.details: {}", runId, e.what()));
  }
  return o;
}

} // namespace dynqual::diff
