#include "dynqual/qualify/QualifyModel.h"

#include "dq/runtime/ProgramIO.h"
#include "dynqual/exec/Executor.h"
#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TestDataSets.h"
#include "dynqual/scope/DataQuirks.h"
#include "dynqual/qualify/QualifyRecords.h"
#include "dynqual/stats/Accuracy.h"
#include "dynqual/run/RunReport.h"
#include "dynqual/stats/Latency.h"

#include <sys/resource.h>

#include <cmath>
#include <limits>

namespace fs = std::filesystem;

namespace dynqual::qualify {

namespace {

/// A minimum sample length far below one run, so that every sample is exactly one run (the
/// latency table reports single-run latencies; docs/metrics/latency.md).
constexpr double kOneRunPerSample = 1e-6;

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
  if (config.measure)
    return config.measure(r, *c);
  p.timedCase = c->name;
  // The same executor and dynqual-exec as every other timed run, on the requested device.
  exec::PreparedModel m;
  m.arm.label = "qualify";
  m.arm.variant.device = config.run.device;
  m.arm.binDir = config.run.execPath.parent_path();
  m.modelName = r.name;
  m.artifact = r.artifact;
  exec::ExecConfig ec;
  ec.workDir = config.run.workDir;
  ec.runTimeoutSeconds = config.run.execTimeoutSeconds;
  exec::Executor executor(ec);
  exec::TimingRequest t;
  t.reps = config.reps;
  t.warmup = config.warmup;
  t.minSampleMs = kOneRunPerSample;
  try {
    exec::ExecResult res = executor.execute(m, c->inputFiles, t, config.run.workDir / r.name / "timed");
    p.sessionMs = res.sessionMs;
    p.firstInferMs = res.firstInferMs;
    p.latencyMs = res.samplesMs;
    p.counters = res.counters;
    p.cpuPercent = res.cpuPercent;
    p.measured = true;
  } catch (const std::exception& e) {
    p.error = std::string("timed run of ") + c->name + ": " + e.what();
  }
  return p;
}

/// `what` with the model folder's path prefix removed, so a message names
/// "test_data_set_0/input_0.pb" rather than an absolute path.
std::string relativeTo(const fs::path& modelDir, std::string what) {
  std::string prefix = modelDir.string() + "/";
  for (size_t p = what.find(prefix); p != std::string::npos; p = what.find(prefix))
    what.erase(p, prefix.size());
  return what;
}

} // namespace

std::map<std::string, std::string> findInputErrors(const fs::path& modelDir) {
  std::map<std::string, std::string> errors;
  onnx::ModelProto model;
  try {
    model = onnxio::loadModel(modelDir / "model.onnx");
  } catch (const std::exception& e) {
    std::string msg = relativeTo(modelDir, e.what());
    errors[""] = msg.rfind("model.onnx", 0) == 0 ? msg : "model.onnx: " + msg;
    return errors;
  }
  std::vector<onnxio::ValueSpec> specs;
  try {
    specs = onnxio::describeInputs(model);
    for (const auto& set : onnxio::discoverTestDataSets(modelDir)) {
      std::string name = set.dir.filename().string();
      try {
        auto data = scope::readStoredDataSet(model, set);
        for (size_t i = 0; i < data.inputs.size() && i < specs.size(); ++i) {
          const Tensor& t = data.inputs[i];
          const onnxio::ValueSpec& s = specs[i];
          std::string file = name + "/" + set.inputs[i].filename().string() + ": input '" + s.name + "': ";
          std::string why;
          if (t.dtype() != s.dtype)
            why = std::string("dtype ") + dtypeName(t.dtype()) + " given, " + dtypeName(s.dtype) + " declared";
          else if (t.dims().size() != s.dims.size())
            why = "rank " + std::to_string(t.dims().size()) + " given, " + std::to_string(s.dims.size()) + " declared";
          else
            for (size_t d = 0; d < s.dims.size() && why.empty(); ++d)
              if (s.dims[d] != onnxio::kDynamicDim && s.dims[d] != t.dims()[d])
                why = "dim " + std::to_string(d) + " is " + std::to_string(t.dims()[d]) + ", declared " +
                      std::to_string(s.dims[d]);
          if (!why.empty()) {
            errors[name] = file + why;
            break;
          }
        }
      } catch (const std::exception& e) {
        errors[name] = relativeTo(modelDir, e.what());
      }
    }
  } catch (const std::exception& e) {
    errors[""] = relativeTo(modelDir, e.what()); // the data set folders cannot be listed
  }
  return errors;
}

ModelQualification qualifyModel(const fs::path& modelDir, const QualifyConfig& config, const TimedCompileFn& compile) {
  ModelQualification q;
  run::CompileFn plain = [&](const onnx::ModelProto& m, const std::string& pipeline, const fs::path& artifact) {
    q.passMs = compile(m, pipeline, artifact);
  };
  q.result = run::runModel(modelDir, config.run, plain);
  // Input errors are told apart from compiler failures only where the model failed.
  if (q.result.status == run::ModelStatus::Failed) {
    auto bad = findInputErrors(modelDir);
    bool otherFailure = false;
    for (auto& c : q.result.cases) {
      if (c.passed || c.skipped)
        continue;
      auto it = c.kind == "stored" ? bad.find(c.name) : bad.end();
      if (it == bad.end()) {
        otherFailure = true;
        continue;
      }
      c.error = it->second;
      q.inputErrors[c.name] = it->second;
    }
    if (bad.count("")) {
      q.inputErrors[""] = bad[""];
      q.result.detail = bad[""];
    }
    q.inputError = !q.inputErrors.empty() && (bad.count("") || (!otherFailure && !q.result.cases.empty()));
    if (q.inputError && !bad.count(""))
      q.result.detail = q.inputErrors.begin()->second;
  }
  if (!q.result.artifact.empty()) {
    try {
      dq::rt::Program program = dq::rt::readProgram(q.result.artifact.string());
      q.compilerVersion = program.compilerVersion;
      q.pipelineSpec = program.pipelineSpec;
    } catch (const std::exception&) {
      // A failed run already names the unreadable artifact.
    }
  }
  if (q.result.status == run::ModelStatus::Passed || q.inputError) {
    if (config.reps < 1)
      q.perf.error = "--reps must be at least 1";
    else
      q.perf = measure(q.result, config);
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  q.peakHostBytes = static_cast<int64_t>(u.ru_maxrss) * 1024; // Linux reports KiB
  return q;
}

nlohmann::json accuracySummary(const run::ModelResult& r, double relL2Gate) {
  double diff = 0, expected = 0;
  int64_t elements = 0, skipped = 0, compared = 0;
  // The smallest cosine of any compared output (hip-ep's L2 tables print it beside L2).
  double minCosine = 1;
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
      if (!std::isnan(o.cosine))
        minCosine = std::min(minCosine, o.cosine);
    }
  }
  nlohmann::json summary = {{"threshold", relL2Gate}, {"verdict", run::modelStatusName(r.status)}};
  // Nothing was compared (load or compile failure): no numbers, so no row can read as clean.
  if (compared == 0)
    return summary;
  double l2 = std::sqrt(diff);
  double rel = stats::relativeL2(diff, expected);
  return {{"combined_l2", l2},
          {"relative_l2", rel},
          {"cosine", minCosine},
          {"elements", elements},
          {"nan_inf_skipped", skipped},
          {"threshold", relL2Gate},
          {"verdict", run::modelStatusName(r.status)}};
}

nlohmann::json toJson(const ModelQualification& q, const QualifyConfig& config) {
  nlohmann::json passes = nlohmann::json::array();
  for (const auto& [pass, ms] : q.passMs)
    passes.push_back({{"pass", pass}, {"ms", ms}});
  nlohmann::json perf = {{"measured", q.perf.measured},
                         {"error", q.perf.error},
                         {"timed_case", q.perf.timedCase},
                         {"warmup", config.warmup},
                         {"reps", config.reps}};
  if (q.perf.measured) {
    stats::LatencySummary s = stats::summarizeLatencies(q.perf.latencyMs);
    nlohmann::json counters = nlohmann::json::object();
    for (const auto& [k, v] : q.perf.counters)
      counters[k] = v;
    perf.update({{"session_ms", q.perf.sessionMs},
                 {"first_infer_ms", q.perf.firstInferMs},
                 {"latency_ms", q.perf.latencyMs},
                 {"mean_ms", s.meanMs},
                 {"median_ms", s.medianMs},
                 {"p90_ms", s.p90Ms},
                 {"qps", s.qps},
                 {"cpu_percent", q.perf.cpuPercent},
                 {"counters", counters}});
  }
  // The typed store records cross the process boundary in the store's exchange format.
  nlohmann::json records = nlohmann::json::array();
  for (const auto& c : caseRecords(q, config))
    records.push_back(store::caseToJson(c));
  nlohmann::json model = run::renderJson({q.result})["models"][0];
  nlohmann::json accuracy = accuracySummary(q.result, config.run.compare.relL2Gate);
  if (q.inputError) {
    model["status"] = "input-error";
    accuracy["verdict"] = "input-error";
  }
  if (!q.inputErrors.empty()) {
    nlohmann::json errs = nlohmann::json::object();
    for (const auto& [k, v] : q.inputErrors)
      errs[k.empty() ? "model.onnx" : k] = v;
    model["input_errors"] = errs;
  }
  nlohmann::json out = {{"model", model},
                        {"accuracy", accuracy},
                        {"compile", {{"total_ms", q.result.compileMs}, {"passes", passes}}},
                        {"compiler_version", q.compilerVersion},
                        {"pipeline_spec", q.pipelineSpec},
                        {"perf", perf},
                        {"records", records}};
  if (q.peakHostBytes)
    out["peak_host_bytes"] = *q.peakHostBytes;
  return out;
}

} // namespace dynqual::qualify
