// The interleaved comparison of generation engines (GenerationVersus.h).
#include "dynqual/store/GenerationVersus.h"

#include "dynqual/stats/Bootstrap.h"
#include "dynqual/stats/Descriptive.h"
#include "dynqual/stats/HodgesLehmann.h"
#include "dynqual/stats/SignedRank.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

using nlohmann::json;

namespace dynqual::store {

namespace {

std::vector<double> positiveSamples(const json& doc, const char* key, const std::string& where) {
  const std::string what = std::string(key) + ".samples";
  if (!doc.contains(key) || !doc[key].is_object() || !doc[key].contains("samples") || !doc[key]["samples"].is_array())
    throw std::runtime_error(where + ": not a versus line: missing '" + what + "'");
  std::vector<double> out;
  for (const json& v : doc[key]["samples"]) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
      throw std::runtime_error(
          fmt::format("{}: not a versus line: {} must hold positive finite numbers, got {}", where, what, v.dump()));
    out.push_back(v.get<double>());
  }
  if (out.empty())
    throw std::runtime_error(where + ": not a versus line: '" + what + "' is empty");
  return out;
}

// JSON has no infinity: an unbounded end of a ratio interval (0 or +inf) is null.
json ratioBound(double v) {
  return std::isfinite(v) && v > 0 ? json(v) : json();
}

} // namespace

std::optional<VersusRun> versusRun(const json& doc, const std::string& where) {
  const bool hasCycle = doc.contains("versus_cycle"), hasEngine = doc.contains("versus_engine");
  if (!hasCycle && !hasEngine)
    return std::nullopt;
  if (!hasCycle || !hasEngine)
    throw std::runtime_error(where + ": not a versus line: it has '" +
                             std::string(hasCycle ? "versus_cycle" : "versus_engine") + "' but not '" +
                             (hasCycle ? "versus_engine" : "versus_cycle") + "'");
  const json& c = doc["versus_cycle"];
  if (!c.is_number_integer() || c.get<int64_t>() < 0 || c.get<int64_t>() > 1000000)
    throw std::runtime_error(where + ": not a versus line: versus_cycle must be an integer >= 0, got " + c.dump());
  const json& e = doc["versus_engine"];
  if (!e.is_string() || e.get<std::string>().empty())
    throw std::runtime_error(where + ": not a versus line: versus_engine must be a name, got " + e.dump());
  VersusRun r;
  r.cycle = static_cast<int>(c.get<int64_t>());
  r.engine = e.get<std::string>();
  r.tps = positiveSamples(doc, "tps", where);
  r.ttftMs = positiveSamples(doc, "ttft_ms", where);
  r.where = where;
  return r;
}

std::string defaultVersusBase(const std::vector<VersusRun>& runs) {
  for (const VersusRun& r : runs)
    if (r.engine == "torch")
      return "torch";
  return runs.empty() ? std::string() : runs.front().engine;
}

namespace {

std::optional<VersusComparison> compareOne(const std::map<int, std::map<std::string, const VersusRun*>>& cycles,
                                           const std::string& engine, const std::string& base) {
  VersusComparison v;
  v.engine = engine;
  v.base = base;
  std::vector<double> ratios, logs, engineTps, baseTps, engineTtft, baseTtft;
  for (const auto& [cycle, runs] : cycles) {
    auto e = runs.find(engine), b = runs.find(base);
    if (e == runs.end() || b == runs.end())
      continue;
    VersusComparison::Cycle c;
    c.cycle = cycle;
    c.engineTps = stats::median(e->second->tps);
    c.baseTps = stats::median(b->second->tps);
    c.ratio = c.engineTps / c.baseTps;
    v.perCycle.push_back(c);
    ratios.push_back(c.ratio);
    logs.push_back(std::log(c.ratio));
    engineTps.push_back(c.engineTps);
    baseTps.push_back(c.baseTps);
    engineTtft.push_back(stats::median(e->second->ttftMs));
    baseTtft.push_back(stats::median(b->second->ttftMs));
    v.ahead += c.ratio > 1 ? 1 : 0;
  }
  if (ratios.empty())
    return std::nullopt;
  v.medianRatio = stats::median(ratios);
  const stats::BootstrapInterval boot =
      stats::bootstrapMedianInterval(ratios, kVersusConfidence, kVersusResamples, kVersusSeed);
  v.bootLow = boot.low;
  v.bootHigh = boot.high;
  const stats::HodgesLehmannResult hl = stats::hodgesLehmannInterval(logs, kVersusConfidence);
  v.hlRatio = std::exp(hl.estimate);
  v.hlLow = std::exp(hl.low); // exp(-inf) = 0
  v.hlHigh = std::exp(hl.high);
  v.hlCoverage = hl.achievedCoverage;
  const stats::SignedRankResult sr = stats::signedRankTest(logs);
  v.pOneSided = sr.pGreater;
  v.pExact = sr.method == stats::PValueMethod::Exact;
  v.engineTpsMedian = stats::median(engineTps);
  v.baseTpsMedian = stats::median(baseTps);
  v.engineTtftMsMedian = stats::median(engineTtft);
  v.baseTtftMsMedian = stats::median(baseTtft);
  return v;
}

} // namespace

std::vector<VersusComparison> compareVersus(const std::vector<VersusRun>& runs, const std::string& base) {
  std::map<int, std::map<std::string, const VersusRun*>> cycles;
  std::vector<std::string> engines;
  for (const VersusRun& r : runs) {
    auto [it, fresh] = cycles[r.cycle].emplace(r.engine, &r);
    if (!fresh)
      throw std::runtime_error(fmt::format("{}: cycle {} has two runs of engine '{}' (the first at {})", r.where,
                                           r.cycle, r.engine, it->second->where));
    if (std::find(engines.begin(), engines.end(), r.engine) == engines.end())
      engines.push_back(r.engine);
  }
  if (std::find(engines.begin(), engines.end(), base) == engines.end())
    throw std::runtime_error(fmt::format("no engine named '{}' (engines: {})", base,
                                         engines.empty() ? "none" : fmt::format("{}", fmt::join(engines, ", "))));
  std::vector<std::string> others;
  for (const std::string& e : engines)
    if (e != base)
      others.push_back(e);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& e : others)
    pairs.emplace_back(e, base);
  for (size_t i = 1; i < others.size(); ++i)
    pairs.emplace_back(others[i], others[0]);
  std::vector<VersusComparison> out;
  for (const auto& [engine, against] : pairs)
    if (auto v = compareOne(cycles, engine, against))
      out.push_back(std::move(*v));
  if (out.empty())
    throw std::runtime_error(
        "no cycle with both engines of any pair (engines: " + fmt::format("{}", fmt::join(engines, ", ")) + ")");
  return out;
}

json versusJson(const std::vector<VersusComparison>& comparisons) {
  json list = json::array();
  for (const VersusComparison& v : comparisons) {
    json cycles = json::array();
    for (const auto& c : v.perCycle)
      cycles.push_back({{"cycle", c.cycle}, {"engine_tps", c.engineTps}, {"base_tps", c.baseTps}, {"ratio", c.ratio}});
    list.push_back({{"engine", v.engine},
                    {"base", v.base},
                    {"cycles", v.perCycle.size()},
                    {"ahead", v.ahead},
                    {"median_ratio", v.medianRatio},
                    {"ci95", {v.bootLow, v.bootHigh}},
                    {"hl_ratio", v.hlRatio},
                    {"hl_ci95", {ratioBound(v.hlLow), ratioBound(v.hlHigh)}},
                    {"hl_coverage", v.hlCoverage},
                    {"p_one_sided", v.pOneSided},
                    {"p_method", v.pExact ? "exact" : "normal"},
                    {"engine_tps_median", v.engineTpsMedian},
                    {"base_tps_median", v.baseTpsMedian},
                    {"engine_ttft_ms_median", v.engineTtftMsMedian},
                    {"base_ttft_ms_median", v.baseTtftMsMedian},
                    {"per_cycle", cycles}});
  }
  return {{"format", "dynqual-generation-versus"}, {"version", 1}, {"comparisons", list}};
}

std::string versusMarkdown(const std::vector<VersusComparison>& comparisons) {
  std::string s;
  for (const VersusComparison& v : comparisons) {
    s += fmt::format("| cycle | {} TPS | {} TPS | ratio |\n|---:|---:|---:|---:|\n", v.engine, v.base);
    for (const auto& c : v.perCycle)
      s += fmt::format("| {} | {:.1f} | {:.1f} | {:.3f} |\n", c.cycle, c.engineTps, c.baseTps, c.ratio);
    const size_t n = v.perCycle.size();
    const std::string hl = v.hlLow > 0 && std::isfinite(v.hlHigh) ? fmt::format("[{:.3f}, {:.3f}] ({:.1f} % coverage)",
                                                                                v.hlLow, v.hlHigh, 100 * v.hlCoverage)
                                                                  : std::string("(0, inf): fewer than 6 cycles");
    s += fmt::format("\n{} against {}, {} cycles: median TPS {:.1f} against {:.1f}; median ratio {:.3f} [{:.3f}, "
                     "{:.3f}] (95 % bootstrap); Hodges-Lehmann ratio {:.3f} {}; {} ahead in {} of {}; one-sided "
                     "{} Wilcoxon signed-rank p = {:.4g}. Median TTFT {:.2f} ms against {:.2f} ms.\n\n",
                     v.engine, v.base, n, v.engineTpsMedian, v.baseTpsMedian, v.medianRatio, v.bootLow, v.bootHigh,
                     v.hlRatio, hl, v.engine, v.ahead, n, v.pExact ? "exact" : "normal-approximation", v.pOneSided,
                     v.engineTtftMsMedian, v.baseTtftMsMedian);
  }
  return s;
}

} // namespace dynqual::store
