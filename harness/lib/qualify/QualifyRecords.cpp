#include "dynqual/qualify/QualifyRecords.h"

#include "dynqual/run/RunRecords.h"
#include "dynqual/stats/Latency.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace dynqual::qualify {

std::vector<store::CaseRecord> caseRecords(const ModelQualification& q, const QualifyConfig& config) {
  std::vector<store::CaseRecord> cases = run::caseRecords(q.result, config.run.seed);
  store::CaseRecord& whole = cases.front();
  if (q.inputError)
    whole.status = "input-error";
  for (auto& c : cases)
    if (!c.dataset.name.empty() && q.inputErrors.count(c.dataset.name))
      c.status = "input-error";
  for (const auto& [pass, ms] : q.passMs)
    whole.params["pass_ms." + pass] = fmt::format("{:.3f}", ms);
  if (q.peakHostBytes)
    whole.samples.push_back({"peak_host_bytes", "bytes", {static_cast<double>(*q.peakHostBytes)}});
  const PerfResult& p = q.perf;
  if (!p.measured) {
    if (!p.error.empty())
      whole.params["perf_error"] = p.error;
    return cases;
  }
  whole.params["warmup"] = std::to_string(config.warmup);
  whole.params["reps"] = std::to_string(config.reps);
  whole.params["timed_case"] = p.timedCase;
  auto one = [&](const char* metric, const char* unit, double v) { whole.samples.push_back({metric, unit, {v}}); };
  // A mean latency of 0 gives qps = +inf, which says nothing about the model: not recorded.
  if (double qps = stats::summarizeLatencies(p.latencyMs).qps; std::isfinite(qps))
    one("qps", "1/s", qps);
  one("session_s", "s", p.sessionMs / 1000);
  one("first_infer_ms", "ms", p.firstInferMs);
  whole.samples.push_back({"latency_ms", "ms", p.latencyMs});
  one("cpu_percent", "%", p.cpuPercent);
  for (const auto& [k, v] : p.counters)
    whole.counters[k] = static_cast<int64_t>(v);
  return cases;
}

} // namespace dynqual::qualify
