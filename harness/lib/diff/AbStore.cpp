#include "dynqual/diff/AbStore.h"

#include "dynqual/diff/Analysis.h"
#include "dynqual/diff/Identical.h"
#include "dynqual/stats/Descriptive.h"

#include <algorithm>
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

namespace dynqual::diff {

namespace {

std::string joinInts(const std::vector<int>& v) {
  std::string s;
  for (int x : v)
    s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

std::vector<int> splitInts(const std::string& s) {
  std::vector<int> v;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty())
      v.push_back(std::stoi(part));
  return v;
}

void bindReal(SQLite::Statement& q, int i, double v) {
  if (std::isfinite(v))
    q.bind(i, v);
  else
    q.bind(i); // NULL: SQLite has no infinity in every reader
}

double realOr(const SQLite::Column& c, double fallback) {
  return c.isNull() ? fallback : c.getDouble();
}

/// Writes timing samples (ms) of run `runId` into `table` (ab_samples or ab_side_samples).
void insertSamples(SQLite::Database& db, const char* table, int64_t runId, const std::vector<Sample>& samples) {
  SQLite::Statement q(db, std::string("INSERT INTO ") + table + " VALUES(?,?,?,?,?,?,?,?,?)");
  for (const auto& s : samples) {
    q.bind(1, static_cast<int64_t>(runId));
    q.bind(2, s.model);
    q.bind(3, s.arm);
    q.bind(4, s.round);
    q.bind(5, s.position);
    q.bind(6, s.rep);
    q.bind(7, s.valueMs);
    q.bind(8, "ms");
    q.bind(9, s.iterations);
    q.exec();
    q.reset();
  }
}

/// Reads the samples of run `runId` from `table`, in round, model, position, rep order.
std::vector<Sample> loadSamples(SQLite::Database& db, const char* table, int64_t runId) {
  std::vector<Sample> out;
  SQLite::Statement q(db, std::string("SELECT model, arm, round, position, rep, value, iterations FROM ") + table +
                              " WHERE run_id = ? ORDER BY round, model, position, rep");
  q.bind(1, static_cast<int64_t>(runId));
  while (q.executeStep())
    out.push_back({q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getInt(),
                   q.getColumn(3).getInt(), q.getColumn(4).getInt(), q.getColumn(5).getDouble(),
                   q.getColumn(6).getInt()});
  return out;
}

void insertComparisons(SQLite::Database& db, int64_t runId, const std::vector<MetricComparison>& cs) {
  SQLite::Statement q(db, "INSERT INTO ab_comparisons VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& c : cs) {
    q.bind(1, static_cast<int64_t>(runId));
    q.bind(2, c.model);
    q.bind(3, c.metric);
    q.bind(4, c.unit);
    q.bind(5, c.direction == Direction::LowerIsBetter ? "lower_is_better" : "higher_is_better");
    q.bind(6, c.rounds);
    int i = 7;
    for (double v : {c.baseMedian, c.headMedian, c.ratio, c.ciLow, c.ciHigh, c.medianRatio, c.bootLow, c.bootHigh, c.p,
                     c.pAdjusted, c.alphaUsed})
      bindReal(q, i++, v);
    q.bind(18, c.decidedAtRounds);
    q.bind(19, joinInts(c.outlierRounds));
    q.bind(20, stats::verdictName(c.verdict));
    bindReal(q, 21, c.eqLow);
    bindReal(q, 22, c.eqHigh);
    q.exec();
    q.reset();
  }
}

Verdict verdictFromName(const std::string& s) {
  for (Verdict v :
       {Verdict::Regression, Verdict::Improvement, Verdict::NoChange, Verdict::Inconclusive, Verdict::Identical})
    if (s == stats::verdictName(v))
      return v;
  throw std::runtime_error("stored verdict '" + s + "' is not one this dynqual knows");
}

} // namespace

std::map<std::string, std::string> policyParams(const Policy& p, const Measurement& m) {
  return {{"alpha", fmt::format("{}", p.alpha)},
          {"margin", fmt::format("{}", p.margin)},
          {"looks", joinInts(p.looks)},
          {"bootstrap_resamples", std::to_string(p.bootstrapResamples)},
          {"seed", std::to_string(p.seed)},
          {"round_value", roundValueName(p.roundValue)},
          {"tail_value", p.tailValue ? roundValueName(*p.tailValue) : "none"},
          {"samples_per_position", std::to_string(m.samplesPerPosition)},
          {"warmup", std::to_string(m.warmup)},
          {"min_sample_ms", fmt::format("{}", m.minSampleMs)},
          {"budget_s", fmt::format("{}", m.budgetSeconds)},
          {"clock", exec::timingClockName(m.clock)},
          {"interleave", interleaveName(m.interleave)},
          {"pin_cpu", std::to_string(m.cpu)},
          {"timing_metric", timingMetric(m.clock)},
          {"decision_metric", decisionMetricName(m.metric)},
          {"compile_time", m.compileTime ? "1" : "0"},
          {"compile_metric", compileMetric(m.clock)}};
}

std::string compileMetricFromParams(const std::map<std::string, std::string>& params) {
  auto it = params.find("compile_metric");
  return it == params.end() ? "compile_ms" : it->second;
}

std::string timingMetricFromParams(const std::map<std::string, std::string>& params) {
  auto it = params.find("timing_metric");
  return it == params.end() ? "latency_ms" : it->second; // runs before --clock timed wall
}

DecisionMetric decisionMetricFromParams(const std::map<std::string, std::string>& params) {
  auto it = params.find("decision_metric");
  if (it == params.end())
    return DecisionMetric::Measured; // runs before the parameter decided on the measured time
  try {
    return parseDecisionMetric(it->second);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("malformed A/B run parameter decision_metric: ") + e.what());
  }
}

std::string decidingMetricFromParams(const std::map<std::string, std::string>& params) {
  return decisionMetricFromParams(params) == DecisionMetric::ModelledDeviceTime ? kModelledDeviceMetric
                                                                                : timingMetricFromParams(params);
}

Policy policyFromParams(const std::map<std::string, std::string>& params) {
  auto get = [&](const char* k) {
    auto it = params.find(k);
    if (it == params.end())
      throw std::runtime_error(std::string("run parameter '") + k + "' is missing: not an A/B run of this format");
    return it->second;
  };
  Policy p;
  try {
    p.alpha = std::stod(get("alpha"));
    p.margin = std::stod(get("margin"));
    p.looks = splitInts(get("looks"));
    p.bootstrapResamples = std::stoi(get("bootstrap_resamples"));
    p.seed = std::stoull(get("seed"));
    // Runs recorded before the round value was a policy used the minimum.
    if (auto it = params.find("round_value"); it != params.end())
      p.roundValue = parseRoundValue(it->second);
    if (auto it = params.find("tail_value"); it != params.end() && it->second != "none")
      p.tailValue = parseRoundValue(it->second); // absent: a run from before the second comparison
  } catch (const std::logic_error& e) {          // std::invalid_argument is one
    throw std::runtime_error(std::string("malformed A/B run parameter: ") + e.what());
  }
  return p;
}

void recordAbResult(store::Store& store, int64_t runId, const AbResult& r) {
  auto& db = store.db();
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement check(db, "INSERT INTO ab_checks VALUES(?,?,?,?,?,?,?,?,?,?)");
  SQLite::Statement counter(db, "INSERT INTO ab_counters VALUES(?,?,?,?,?)");
  for (const auto& c : r.checks) {
    check.bind(1, static_cast<int64_t>(runId));
    check.bind(2, c.model);
    check.bind(3, c.passed ? 1 : 0);
    check.bind(4, c.detail);
    check.bind(5, c.bitExact ? 1 : 0);
    check.bind(6, static_cast<int64_t>(c.cases.size()));
    check.bind(7, static_cast<int64_t>(c.baseArtifactBytes));
    check.bind(8, static_cast<int64_t>(c.headArtifactBytes));
    bindReal(check, 9, c.baseCompileMs);
    bindReal(check, 10, c.headCompileMs);
    check.exec();
    check.reset();
    for (const auto* arm : {"base", "head"})
      for (const auto& [name, value] : std::string(arm) == "base" ? c.baseCounters : c.headCounters) {
        counter.bind(1, static_cast<int64_t>(runId));
        counter.bind(2, c.model);
        counter.bind(3, arm);
        counter.bind(4, name);
        counter.bind(5, static_cast<int64_t>(value));
        counter.exec();
        counter.reset();
      }
  }
  insertSamples(db, "ab_samples", runId, r.samples);
  insertSamples(db, "ab_side_samples", runId, r.sideSamples);
  SQLite::Statement compile(db, "INSERT INTO ab_compile_samples VALUES(?,?,?,?,?,?,?)");
  for (const auto& s : r.compileSamples) {
    compile.bind(1, static_cast<int64_t>(runId));
    compile.bind(2, s.model);
    compile.bind(3, s.arm);
    compile.bind(4, s.round);
    compile.bind(5, s.position);
    compile.bind(6, s.valueMs);
    compile.bind(7, "ms");
    compile.exec();
    compile.reset();
  }
  insertComparisons(db, runId, r.comparisons);
  // The artifact hashes that decided "identical", with the run (gate --reanalyze shows them).
  SQLite::Statement param(db, "INSERT OR REPLACE INTO run_params VALUES(?,?,?)");
  for (const auto& [key, value] : hashParams(r)) {
    param.bind(1, static_cast<int64_t>(runId));
    param.bind(2, key);
    param.bind(3, value);
    param.exec();
    param.reset();
  }
  insertAbOutcome(store, runId, r);
  tx.commit();
}

void recordComparisons(store::Store& store, int64_t runId, const std::vector<MetricComparison>& comparisons) {
  auto& db = store.db();
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement del(db, "DELETE FROM ab_comparisons WHERE run_id = ?");
  del.bind(1, static_cast<int64_t>(runId));
  del.exec();
  insertComparisons(db, runId, comparisons);
  tx.commit();
}

bool isAbRunKind(const std::string& kind) {
  return kind == "ab" || kind == "gate" || kind == "calibrate" || kind == "bisect-step";
}

int64_t latestAbRun(store::Store& store) {
  // The kinds of isAbRunKind.
  SQLite::Statement q(store.db(), "SELECT id FROM runs WHERE kind IN ('ab','gate','calibrate','bisect-step') "
                                  "ORDER BY started_at DESC, id DESC LIMIT 1");
  if (!q.executeStep())
    throw std::runtime_error(store.path().string() + ": holds no ab, gate, calibrate or bisect-step run");
  return q.getColumn(0).getInt64();
}

StoredAbRun loadAbRun(store::Store& store, int64_t runId) {
  auto& db = store.db();
  StoredAbRun out;
  out.runId = runId;
  SQLite::Statement run(db, "SELECT kind FROM runs WHERE id = ?");
  run.bind(1, static_cast<int64_t>(runId));
  if (!run.executeStep())
    throw std::runtime_error(store.path().string() + ": no run " + std::to_string(runId));
  out.kind = run.getColumn(0).getString();
  if (!isAbRunKind(out.kind))
    throw std::runtime_error(
        fmt::format("run {} is a '{}' run, not an ab, gate, calibrate or bisect-step run", runId, out.kind));
  SQLite::Statement params(db, "SELECT key, value FROM run_params WHERE run_id = ?");
  params.bind(1, static_cast<int64_t>(runId));
  while (params.executeStep())
    out.params[params.getColumn(0).getString()] = params.getColumn(1).getString();
  out.samples = loadSamples(db, "ab_samples", runId);
  out.sideSamples = loadSamples(db, "ab_side_samples", runId);
  SQLite::Statement compile(db, "SELECT model, arm, round, position, value FROM ab_compile_samples "
                                "WHERE run_id = ? ORDER BY round, model, position");
  compile.bind(1, static_cast<int64_t>(runId));
  while (compile.executeStep())
    out.compileSamples.push_back({compile.getColumn(0).getString(), compile.getColumn(1).getString(),
                                  compile.getColumn(2).getInt(), compile.getColumn(3).getInt(), 0,
                                  compile.getColumn(4).getDouble(), 1});
  SQLite::Statement comps(db, "SELECT * FROM ab_comparisons WHERE run_id = ? ORDER BY rowid");
  comps.bind(1, static_cast<int64_t>(runId));
  while (comps.executeStep()) {
    MetricComparison c;
    c.model = comps.getColumn(1).getString();
    c.metric = comps.getColumn(2).getString();
    c.unit = comps.getColumn(3).getString();
    c.direction =
        comps.getColumn(4).getString() == "lower_is_better" ? Direction::LowerIsBetter : Direction::HigherIsBetter;
    c.rounds = comps.getColumn(5).getInt();
    double* fields[] = {&c.baseMedian, &c.headMedian, &c.ratio, &c.ciLow,     &c.ciHigh,   &c.medianRatio,
                        &c.bootLow,    &c.bootHigh,   &c.p,     &c.pAdjusted, &c.alphaUsed};
    for (int i = 0; i < 11; ++i)
      *fields[i] = realOr(comps.getColumn(6 + i), std::numeric_limits<double>::infinity());
    c.decidedAtRounds = comps.getColumn(17).getInt();
    c.outlierRounds = splitInts(comps.getColumn(18).getString());
    c.verdict = verdictFromName(comps.getColumn(19).getString());
    // Before schema version 8 "no change" rested on the CI itself: NULL reads as that CI.
    c.eqLow = comps.getColumn(20).isNull() ? c.ciLow : comps.getColumn(20).getDouble();
    c.eqHigh = comps.getColumn(21).isNull() ? c.ciHigh : comps.getColumn(21).getDouble();
    out.comparisons.push_back(std::move(c));
  }
  // Which rows decided is a run parameter; an exact comparison is one of a deterministic metric
  // stored with a zero-width interval at the ratio and no level (analyze).
  const std::string deciding = decidingMetricFromParams(out.params);
  for (auto& c : out.comparisons) {
    const std::string base = c.metric.substr(0, c.metric.find('.'));
    c.deciding = base == deciding || base.rfind("compile", 0) == 0;
    c.exact = isDeterministicMetric(c.metric) && c.ciLow == c.ratio && c.ciHigh == c.ratio && c.alphaUsed == 0;
  }
  SQLite::Statement checks(db, "SELECT model, passed, detail, bit_exact, base_artifact_bytes, head_artifact_bytes "
                               "FROM ab_checks WHERE run_id = ? ORDER BY rowid");
  checks.bind(1, static_cast<int64_t>(runId));
  while (checks.executeStep()) {
    ModelCheck c;
    c.model = checks.getColumn(0).getString();
    c.passed = checks.getColumn(1).getInt() != 0;
    c.detail = checks.getColumn(2).getString();
    c.bitExact = checks.getColumn(3).getInt() != 0;
    c.baseArtifactBytes = checks.getColumn(4).getInt64();
    c.headArtifactBytes = checks.getColumn(5).getInt64();
    out.checks.push_back(std::move(c));
  }
  SQLite::Statement counters(db, "SELECT model, arm, name, value FROM ab_counters WHERE run_id = ?");
  counters.bind(1, static_cast<int64_t>(runId));
  while (counters.executeStep())
    for (auto& c : out.checks)
      if (c.model == counters.getColumn(0).getString())
        (counters.getColumn(1).getString() == "base" ? c.baseCounters
                                                     : c.headCounters)[counters.getColumn(2).getString()] =
            counters.getColumn(3).getInt64();
  out.outcome = loadAbOutcome(store, runId, out.checks);
  return out;
}

std::map<std::string, std::vector<double>> logRatiosByModel(const std::vector<Sample>& samples, RoundValue value) {
  std::map<std::string, std::vector<double>> out;
  std::map<std::string, bool> seen;
  for (const auto& s : samples)
    seen[s.model] = true;
  for (const auto& [model, _] : seen)
    for (const auto& [round, bh] : roundValues(samples, model, value))
      out[model].push_back(std::log(bh.second / bh.first));
  return out;
}

std::vector<NoiseEstimate> estimateNoise(const std::vector<Sample>& samples, RoundValue value) {
  std::vector<NoiseEstimate> out;
  for (const auto& [model, r] : logRatiosByModel(samples, value)) {
    if (r.size() < 2)
      continue;
    double m = stats::mean(r), ss = 0;
    for (double x : r)
      ss += (x - m) * (x - m);
    out.push_back({model, static_cast<int>(r.size()), stats::scaledMad(r), std::sqrt(ss / (r.size() - 1))});
  }
  return out;
}

void recordNoise(store::Store& store, int64_t runId, const std::vector<NoiseEstimate>& noise,
                 const std::string& metric) {
  auto& db = store.db();
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement q(db, "INSERT INTO noise_calibrations SELECT ?, machine_id, ?, ?, ?, ?, ? FROM runs "
                          "WHERE id = ?");
  for (const auto& n : noise) {
    q.bind(1, static_cast<int64_t>(runId));
    q.bind(2, n.model);
    q.bind(3, metric);
    q.bind(4, n.rounds);
    q.bind(5, n.scaledMad);
    q.bind(6, n.sd);
    q.bind(7, static_cast<int64_t>(runId));
    q.exec();
    q.reset();
  }
  tx.commit();
}

std::vector<NoiseEstimate> noiseHistory(store::Store& store, const std::string& machineFingerprint,
                                        const std::string& model, const std::string& metric) {
  SQLite::Statement q(store.db(),
                      "SELECT n.rounds, n.scaled_mad_log_ratio, n.sd_log_ratio FROM noise_calibrations n "
                      "JOIN machines m ON m.id = n.machine_id JOIN runs r ON r.id = n.run_id "
                      "WHERE m.fingerprint = ? AND n.model = ? AND n.metric = ? ORDER BY r.started_at, r.id");
  q.bind(1, machineFingerprint);
  q.bind(2, model);
  q.bind(3, metric);
  std::vector<NoiseEstimate> out;
  while (q.executeStep())
    out.push_back({model, q.getColumn(0).getInt(), q.getColumn(1).getDouble(), q.getColumn(2).getDouble()});
  return out;
}

} // namespace dynqual::diff
