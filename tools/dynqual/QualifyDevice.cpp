// `dynqual qualify --prepare` and the per-model halves of prepare and import (QualifyDevice.h).
#include "QualifyDevice.h"

#include "CompileBridge.h"

#include "dynqual/compare/Compare.h"
#include "dynqual/qualify/DevicePlan.h"
#include "dynqual/process/Process.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>

namespace fs = std::filesystem;
using nlohmann::json;

namespace dynqual::cli {

namespace {

qualify::QualifyConfig configFor(const QualifySettings& s, const fs::path& workDir) {
  qualify::QualifyConfig config;
  config.run.device = s.device;
  config.run.compare = compare::gatesForDevice(s.device);
  config.run.pipeline = s.pipeline;
  config.run.extraBindings = s.bindings;
  config.run.seed = s.seed;
  config.run.execTimeoutSeconds = s.execTimeout;
  config.run.workDir = workDir;
  config.reps = s.reps;
  config.warmup = s.warmup;
  return config;
}

uint64_t folderBytes(const fs::path& dir) {
  uint64_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file(ec))
      n += e.file_size(ec);
  return n;
}

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

} // namespace

qualify::TimedCompileFn timedCompile() {
  return [](const onnx::ModelProto& m, const std::string& pipeline, const fs::path& artifact) {
    CompileRequest req;
    req.pipeline = pipeline;
    req.timing = true;
    return compileModel(m, req, artifact).passMs;
  };
}

json prepareOne(const fs::path& model, const QualifySettings& s, int index, const fs::path& planDir) {
  qualify::ModelPlanner planner(planDir, index);
  qualify::QualifyConfig config = configFor(s, planner.workDir());
  config.run.replay = planner.executor();
  return planner.entry(qualify::qualifyModel(model, config, timedCompile()));
}

json replayOne(const fs::path& model, const QualifySettings& s, int index, const fs::path& workDir,
               const fs::path& resultsDir) {
  qualify::DeviceResults results = qualify::DeviceResults::load(resultsDir);
  const json& entry = results.model(index);
  qualify::QualifyConfig config = configFor(s, workDir);
  config.run.replay = results.executor(index);
  config.measure = [&](const run::ModelResult&, const run::CaseResult& c) { return results.timed(index, c); };
  // The artifact was compiled at --prepare: its compile result and pass times are replayed.
  qualify::TimedCompileFn compile = [&](const onnx::ModelProto&, const std::string&, const fs::path&) {
    if (entry.value("artifact", "").empty()) {
      std::string detail = entry.value("detail", std::string("no artifact was prepared"));
      if (detail.rfind("compile: ", 0) == 0)
        detail = detail.substr(9);
      throw std::runtime_error(detail);
    }
    std::vector<std::pair<std::string, double>> passes;
    for (const auto& p : entry.value("passes", json::array()))
      passes.emplace_back(p.at("pass").get<std::string>(), p.at("ms").get<double>());
    return passes;
  };
  qualify::ModelQualification q = qualify::qualifyModel(model, config, compile);
  q.result.compileMs = entry.value("compile_ms", 0.0);
  q.compilerVersion = entry.value("compiler_version", "");
  q.pipelineSpec = entry.value("pipeline_spec", "");
  // The memory of the process that timed the model on the device, not of this replay.
  q.peakHostBytes.reset();
  if (const json* line = results.timedLine(index); q.perf.measured && line && line->contains("peak_host_bytes"))
    q.peakHostBytes = (*line)["peak_host_bytes"].get<int64_t>();
  return qualify::toJson(q, config);
}

std::vector<std::string> qualifyOneArgs(const QualifySettings& s, const fs::path& exec) {
  return {"--device",       s.device,
          "--pipeline",     s.pipeline,
          "--reps",         std::to_string(s.reps),
          "--warmup",       std::to_string(s.warmup),
          "--bindings",     std::to_string(s.bindings),
          "--seed",         std::to_string(s.seed),
          "--exec-timeout", fmt::format("{}", s.execTimeout),
          "--exec",         exec.string()};
}

QualifySettings settingsOfPlan(const json& m) {
  try {
    QualifySettings s;
    s.device = m.at("device").get<std::string>();
    s.pipeline = m.at("pipeline").get<std::string>();
    const json& st = m.at("settings");
    s.reps = st.at("reps").get<int>();
    s.warmup = st.at("warmup").get<int>();
    s.bindings = st.at("bindings").get<int>();
    s.seed = st.at("seed").get<uint64_t>();
    s.execTimeout = st.at("exec_timeout_s").get<double>();
    s.modelTimeout = st.at("timeout_s").get<double>();
    return s;
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("device plan manifest: ") + e.what());
  }
}

int prepareSuite(const fs::path& self, const std::vector<fs::path>& suites, const std::vector<fs::path>& models,
                 const QualifySettings& s, const fs::path& planDir, bool printNext,
                 const std::vector<std::string>& env) {
  std::error_code ec;
  if (fs::exists(planDir) && !fs::is_empty(planDir, ec))
    throw std::runtime_error(planDir.string() + ": exists and is not empty (prepare into a new folder)");
  fs::create_directories(planDir);
  json entries = json::array();
  std::map<std::string, int> byStatus;
  int cases = 0, timed = 0, unsupported = 0, failed = 0;
  for (size_t i = 0; i < models.size(); ++i) {
    std::vector<std::string> argv = {self.string(),
                                     "qualify-one",
                                     models[i].string(),
                                     "--work-dir",
                                     (planDir / "models" / std::to_string(i)).string(),
                                     "--prepare",
                                     planDir.string(),
                                     "--plan-index",
                                     std::to_string(i),
                                     "--device",
                                     s.device,
                                     "--pipeline",
                                     s.pipeline,
                                     "--reps",
                                     std::to_string(s.reps),
                                     "--warmup",
                                     std::to_string(s.warmup),
                                     "--bindings",
                                     std::to_string(s.bindings),
                                     "--seed",
                                     std::to_string(s.seed)};
    if (!env.empty()) {
      argv.insert(argv.begin(), env.begin(), env.end());
      argv.insert(argv.begin(), "/usr/bin/env");
    }
    process::ProcessResult child = process::runChild(argv, s.modelTimeout);
    std::string abnormal = child.describeAbnormalEnd(s.modelTimeout);
    json e = abnormal.empty() ? json::parse(child.out, nullptr, false) : json();
    if (!e.is_object() || !e.contains("status")) {
      std::string why =
          abnormal.empty() ? fmt::format("exited {} without a plan entry: {}", child.exitCode, child.err.substr(0, 400))
                           : abnormal;
      e = {{"index", i},
           {"name", models[i].filename().string()},
           {"dir", fs::absolute(models[i]).string()},
           {"status", "FAIL"},
           {"detail", "model process " + why},
           {"artifact", ""},
           {"cases", json::array()},
           {"timed_case", ""}};
    }
    ++byStatus[e["status"].get<std::string>()];
    failed += e["status"] == "FAIL" ? 1 : 0;
    for (const auto& c : e["cases"]) {
      ++cases;
      timed += c.value("timed", false) ? 1 : 0;
      unsupported += c.value("unsupported", "").empty() ? 0 : 1;
    }
    entries.push_back(std::move(e));
  }
  std::vector<std::string> suiteNames;
  for (const auto& p : suites)
    suiteNames.push_back(fs::absolute(p).lexically_normal().string());
  json manifest = {{"format", qualify::kPlanFormat},
                   {"version", qualify::kPlanVersion},
                   {"created", utcNow()},
                   {"device", s.device},
                   {"pipeline", s.pipeline},
                   {"suites", suiteNames},
                   {"settings",
                    {{"reps", s.reps},
                     {"warmup", s.warmup},
                     {"bindings", s.bindings},
                     {"seed", s.seed},
                     {"exec_timeout_s", s.execTimeout},
                     {"timeout_s", s.modelTimeout}}},
                   {"models", entries}};
  std::ofstream(planDir / qualify::kPlanManifest) << manifest.dump(1) << "\n";
  if (!fs::exists(planDir / qualify::kPlanManifest))
    throw std::runtime_error((planDir / qualify::kPlanManifest).string() + ": cannot be written");
  std::cout << fmt::format("prepared {} models for device {} in {} ({:.1f} MiB): {} planned, {} skipped, {} failed\n",
                           models.size(), s.device, planDir.string(), folderBytes(planDir) / 1048576.0,
                           byStatus["planned"], byStatus["skip"], failed);
  std::cout << fmt::format("{} cases to run, {} of them also timed ({} reps after {} warm-up); {} cannot run "
                           "there (unsupported, reported as failures at import)\n",
                           cases - unsupported, timed, s.reps, s.warmup, unsupported);
  for (const auto& e : entries)
    if (e["status"] == "FAIL")
      std::cout << fmt::format("  {}: {}\n", e.value("name", "?"), e.value("detail", ""));
  if (printNext)
    std::cout << "next: carry " << planDir.string()
              << " to the device machine and run its cases there with dq-run (scripts/gpu-qualify.sh), then here: "
                 "dynqual qualify --import-device-results RESULTS (docs/commands/qualify.md)\n";
  return failed;
}

} // namespace dynqual::cli
