#include "dynqual/qualify/QualifyModel.h"

#include "dq/runtime/ProgramIO.h"
#include "dq/runtime/Runtime.h"
#include "dq/runtime/SimDevice.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/stats/Accuracy.h"
#include "dynqual/run/RunReport.h"
#include "dynqual/run/TensorBridge.h"
#include "dynqual/stats/Latency.h"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <limits>

namespace fs = std::filesystem;

namespace dynqual::qualify {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// User + system CPU seconds of this process so far.
double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec * 1e-6; };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

/// The case whose inputs are timed: the first passed stored data set, else the first passed binding.
const run::CaseResult* timedCase(const run::ModelResult& r) {
  for (const char* kind : {"stored", "binding"})
    for (const auto& c : r.cases)
      if (c.kind == kind && c.passed && !c.inputFiles.empty())
        return &c;
  return nullptr;
}

PerfResult measure(const run::ModelResult& r, const QualifyConfig& config) {
  PerfResult p;
  const run::CaseResult* c = timedCase(r);
  if (!c) {
    p.error = "no passed case to time";
    return p;
  }
  p.timedCase = c->name;
  try {
    auto t0 = Clock::now();
    dq::rt::Program program = dq::rt::readProgram(r.artifact.string());
    dq::rt::SimDevice sim;
    p.sessionMs = msSince(t0);

    std::vector<dq::rt::HostTensor> inputs;
    for (const auto& f : c->inputFiles)
      inputs.push_back(run::toHostTensor(onnxio::readTensorFile(f)));
    dq::rt::RunOptions options;
    options.programName = r.artifact.string();

    auto t1 = Clock::now();
    dq::rt::runProgram(program, sim, inputs, options);
    p.firstInferMs = msSince(t1);
    for (int i = 0; i < config.warmup; ++i)
      dq::rt::runProgram(program, sim, inputs, options);

    double cpu0 = cpuSeconds();
    auto wall0 = Clock::now();
    for (int i = 0; i < config.reps; ++i) {
      auto t = Clock::now();
      dq::rt::RunResult res = dq::rt::runProgram(program, sim, inputs, options);
      p.latencyMs.push_back(msSince(t));
      if (i + 1 == config.reps)
        p.counters = res.counters.items();
    }
    double wallS = msSince(wall0) / 1000.0;
    double cpuS = cpuSeconds() - cpu0;
    // A run shorter than the rusage resolution reads as 0 s wall; report 0 % rather than fail.
    p.cpuPercent = wallS > 0 ? stats::cpuPercent(std::max(cpuS, 0.0), wallS) : 0;
    p.measured = true;
  } catch (const std::exception& e) {
    p.error = std::string("timed run of ") + c->name + ": " + e.what();
    p.latencyMs.clear();
  }
  return p;
}

} // namespace

ModelQualification qualifyModel(const fs::path& modelDir, const QualifyConfig& config, const TimedCompileFn& compile) {
  ModelQualification q;
  run::CompileFn plain = [&](const onnx::ModelProto& m, const std::string& pipeline, const fs::path& artifact) {
    q.passMs = compile(m, pipeline, artifact);
  };
  q.result = run::runModel(modelDir, config.run, plain);
  if (!q.result.artifact.empty()) {
    try {
      dq::rt::Program program = dq::rt::readProgram(q.result.artifact.string());
      q.compilerVersion = program.compilerVersion;
      q.pipelineSpec = program.pipelineSpec;
    } catch (const std::exception&) {
      // A failed run already names the unreadable artifact.
    }
  }
  if (q.result.status == run::ModelStatus::Passed) {
    if (config.reps < 1)
      q.perf.error = "--reps must be at least 1";
    else
      q.perf = measure(q.result, config);
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  q.peakHostBytes = static_cast<int64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
  return q;
}

nlohmann::json accuracySummary(const run::ModelResult& r, double relL2Gate) {
  double diff = 0, expected = 0;
  int64_t elements = 0, skipped = 0, compared = 0;
  for (const auto& c : r.cases) {
    const auto& cmp = c.vsReference ? c.vsReference : c.vsExpected;
    if (!cmp)
      continue;
    ++compared;
    for (const auto& o : cmp->outputs) {
      diff += o.sumSquaredDiff;
      expected += o.sumSquaredExpected;
      elements += o.elements;
      skipped += o.nonFiniteSkipped;
    }
  }
  nlohmann::json summary = {{"threshold", relL2Gate}, {"verdict", run::modelStatusName(r.status)}};
  // Nothing was compared (load or compile failure): no numbers, so no row can read as clean.
  if (compared == 0)
    return summary;
  double l2 = std::sqrt(diff);
  double rel = stats::relativeL2(diff, expected);
  return {{"combined_l2", l2}, {"relative_l2", rel}, {"elements", elements}, {"nan_inf_skipped", skipped},
          {"threshold", relL2Gate}, {"verdict", run::modelStatusName(r.status)}};
}

nlohmann::json toJson(const ModelQualification& q, const QualifyConfig& config) {
  nlohmann::json passes = nlohmann::json::array();
  for (const auto& [pass, ms] : q.passMs)
    passes.push_back({{"pass", pass}, {"ms", ms}});
  nlohmann::json perf = {{"measured", q.perf.measured}, {"error", q.perf.error}, {"timed_case", q.perf.timedCase},
                         {"warmup", config.warmup}, {"reps", config.reps}};
  if (q.perf.measured) {
    stats::LatencySummary s = stats::summarizeLatencies(q.perf.latencyMs);
    nlohmann::json counters = nlohmann::json::object();
    for (const auto& [k, v] : q.perf.counters)
      counters[k] = v;
    perf.update({{"session_ms", q.perf.sessionMs}, {"first_infer_ms", q.perf.firstInferMs},
                 {"latency_ms", q.perf.latencyMs}, {"mean_ms", s.meanMs}, {"median_ms", s.medianMs},
                 {"p90_ms", s.p90Ms}, {"qps", s.qps}, {"cpu_percent", q.perf.cpuPercent}, {"counters", counters}});
  }
  return {{"model", run::renderJson({q.result})["models"][0]},
          {"accuracy", accuracySummary(q.result, config.run.compare.relL2Gate)},
          {"compile", {{"total_ms", q.result.compileMs}, {"passes", passes}}},
          {"compiler_version", q.compilerVersion},
          {"pipeline_spec", q.pipelineSpec},
          {"perf", perf},
          {"peak_host_bytes", q.peakHostBytes}};
}

} // namespace dynqual::qualify
