// Rebuilds the AbResult of a stored A/B run for the gate renderers (`gate --reanalyze`, `report`).
#include "AbStoredRun.h"

#include "dynqual/diff/Slowdown.h"

#include "dynqual/diff/Analysis.h"
#include "dynqual/diff/Engine.h"
#include "dynqual/diff/Identical.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dynqual::cli {

namespace {

bool sameNumber(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b || (std::isinf(a) && std::isinf(b) && (a > 0) == (b > 0));
}

std::vector<std::string> compareComparisons(const std::vector<diff::MetricComparison>& stored,
                                            const std::vector<diff::MetricComparison>& again) {
  std::vector<std::string> differences;
  for (size_t i = 0; i < stored.size(); ++i) {
    const auto& s = stored[i];
    if (i >= again.size()) {
      differences.push_back(s.model + ": no recomputed comparison");
      continue;
    }
    const auto& a = again[i];
    if (s.verdict != a.verdict || !sameNumber(s.p, a.p) || !sameNumber(s.ratio, a.ratio) ||
        !sameNumber(s.ciLow, a.ciLow) || !sameNumber(s.ciHigh, a.ciHigh) || s.rounds != a.rounds)
      differences.push_back(fmt::format("{}: stored {} ratio {} p {}, recomputed {} ratio {} p {}", s.model,
                                        stats::verdictName(s.verdict), s.ratio, s.p, stats::verdictName(a.verdict),
                                        a.ratio, a.p));
  }
  for (size_t i = stored.size(); i < again.size(); ++i)
    differences.push_back(again[i].model + ": recomputed a comparison the run did not store");
  return differences;
}

} // namespace

diff::Measurement measurementFromParams(const std::map<std::string, std::string>& params) {
  diff::Measurement m;
  auto get = [&](const char* key, auto parse, auto& into) {
    auto it = params.find(key);
    if (it == params.end())
      return;
    try {
      into = parse(it->second);
    } catch (const std::exception&) {
      throw std::runtime_error(fmt::format("malformed A/B run parameter {} = '{}'", key, it->second));
    }
  };
  auto toInt = [](const std::string& s) { return std::stoi(s); };
  auto toDouble = [](const std::string& s) { return std::stod(s); };
  get("samples_per_position", toInt, m.samplesPerPosition);
  get("warmup", toInt, m.warmup);
  get("min_sample_ms", toDouble, m.minSampleMs);
  get("budget_s", toDouble, m.budgetSeconds);
  get("pin_cpu", toInt, m.cpu);
  get("clock", [](const std::string& s) { return exec::parseTimingClock(s); }, m.clock); // absent: wall
  get(
      "interleave",
      [](const std::string& s) {
        if (s != "sample" && s != "process")
          throw std::invalid_argument(s);
        return s == "sample" ? diff::Interleave::Sample : diff::Interleave::Process;
      },
      m.interleave);
  get("compile_time", [](const std::string& s) { return s == "1"; }, m.compileTime);
  m.metric = diff::decisionMetricFromParams(params);
  for (const auto& [key, value] : params)
    if (key.rfind("inject_slowdown.", 0) == 0)
      get(
          key.c_str(), [](const std::string& v) { return diff::parseSlowdownSpec(v); },
          m.injectSlowdown[key.substr(16)]);
  return m;
}

RebuiltAbRun rebuildAbRun(store::Store& db, int64_t runId, StoredComparisons which) {
  RebuiltAbRun out;
  out.stored = diff::loadAbRun(db, runId);
  const diff::StoredAbRun& stored = out.stored;
  diff::Policy policy = diff::policyFromParams(stored.params);
  diff::Measurement m = measurementFromParams(stored.params);

  std::string timed = diff::decidingMetricFromParams(stored.params);
  std::vector<std::string> timedModels;          // the compile rows, if any, follow for the same models
  std::vector<diff::MetricComparison> identical; // decided by hashes, not samples: kept, last
  for (const auto& c : stored.comparisons)
    if (c.verdict == diff::Verdict::Identical)
      identical.push_back(c);
    else if (c.metric == timed)
      timedModels.push_back(c.model);
  diff::AnalysisOutcome again = diff::analyze(stored.samples, timedModels, policy, timed, stored.compileSamples,
                                              diff::compileMetricFromParams(stored.params));
  int rounds = 0;
  for (const auto& s : stored.samples)
    rounds = std::max(rounds, s.round + 1);
  if (again.looksDone == 0 && rounds > 0) // as the engine does when no look was reached
    again.comparisons = diff::undecidedComparisons(stored.samples, timedModels, policy.roundValue, timed);
  // The side metric's comparisons are recomputed from its samples; runs recorded before they were
  // stored (schema version 8) keep them as recorded. The engine's order: deciding, side, identical.
  size_t kept = 0;
  if (!stored.sideSamples.empty()) {
    for (auto& c : diff::sideComparisons(stored.sideSamples, timedModels, policy, diff::sideMetric(m)))
      again.comparisons.push_back(std::move(c));
  } else {
    for (const auto& c : stored.comparisons)
      if (!c.deciding) {
        again.comparisons.push_back(c);
        ++kept;
      }
  }
  again.comparisons.insert(again.comparisons.end(), identical.begin(), identical.end());
  out.recomputed = again.comparisons.size() - kept;

  diff::AbResult& r = out.result;
  r.checks = stored.checks;
  r.samples = stored.samples;
  r.compileSamples = stored.compileSamples;
  r.sideSamples = stored.sideSamples;
  r.counterChanges = diff::counterChanges(r.checks);
  diff::hashesFromParams(stored.params, r);
  r.clock = m.clock;
  r.metric = m.metric;
  r.roundValue = policy.roundValue;
  r.rounds = rounds;
  if (which == StoredComparisons::Recomputed) {
    r.comparisons = again.comparisons;
    r.looksDone = again.looksDone;
    out.differences = compareComparisons(stored.comparisons, again.comparisons);
  } else {
    r.comparisons = stored.comparisons;
    r.looksDone = stored.outcome ? stored.outcome->looksDone : again.looksDone;
    out.differences = compareComparisons(stored.comparisons, again.comparisons);
  }
  if (const auto& o = stored.outcome) {
    r.rounds = o->rounds;
    r.budgetExhausted = o->budgetExhausted;
    r.wallSeconds = o->wallSeconds;
    r.infraErrors = o->infraErrors;
    r.warnings = o->warnings;
    r.envWarnings = o->envWarnings;
    r.envStart = o->envStart;
    r.envEnd = o->envEnd;
    r.binaryBytes = o->binaryBytes;
    r.slowdownUs = o->slowdownUs;
  }

  auto param = [&](const char* key) {
    auto it = stored.params.find(key);
    return it == stored.params.end() ? std::string() : it->second;
  };
  out.context = reports::GateContext{stored.kind, param("base"), param("head"), policy, m, runId};
  out.context.dbPath = std::filesystem::absolute(db.path()).lexically_normal().string();
  if (!param("base_rev").empty())
    out.context.baseLabel += " @ " + param("base_rev");
  if (!param("head_rev").empty())
    out.context.headLabel += " @ " + param("head_rev");
  for (const char* k : {"base_build", "head_build"})
    if (!param(k).empty())
      out.context.notes.push_back(param(k));
  return out;
}

} // namespace dynqual::cli
