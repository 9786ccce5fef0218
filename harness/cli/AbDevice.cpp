#include "AbDevice.h"

#include "QualifyDevice.h"

#include "dynqual/diff/Analysis.h"
#include "dynqual/diff/Engine.h"
#include "dynqual/qualify/Suite.h"
#include "dynqual/stats/Descriptive.h"
#include "dynqual/store/Fingerprint.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace dynqual::cli {

namespace {

constexpr const char* kFormat = "dynqual-device-ab";
constexpr const char* kArms[2] = {"base", "head"};

json readJson(const fs::path& file) {
  std::ifstream in(file);
  if (!in)
    throw std::runtime_error(file.string() + ": cannot be read");
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw std::runtime_error(file.string() + ": not a JSON object");
  return j;
}

/// The qualify-one replay of model `index` of one arm: its report (QualifyModel.h toJson).
json replayArm(const fs::path& model, int index, const fs::path& results, const QualifySettings& s,
               const fs::path& work) {
  const fs::path self = fs::read_symlink("/proc/self/exe");
  std::vector<std::string> argv = {self.string(), "qualify-one", model.string(), "--work-dir", work.string(),
                                   "--replay", results.string(), "--plan-index", std::to_string(index),
                                   "--device", s.device, "--pipeline", s.pipeline, "--reps", std::to_string(s.reps),
                                   "--warmup", std::to_string(s.warmup), "--bindings", std::to_string(s.bindings),
                                   "--seed", std::to_string(s.seed), "--exec-timeout", fmt::format("{}", s.execTimeout),
                                   "--exec", (self.parent_path() / "dynqual-exec").string()};
  return qualify::qualifyInChild(argv, model, s.modelTimeout).report;
}

/// A case's "vs_reference" of the replay report (run::renderJson) as a Comparison.
compare::Comparison comparisonOf(const json& j) {
  compare::Comparison c;
  c.verdict = j.value("verdict", "") == compare::verdictName(compare::Verdict::Pass) ? compare::Verdict::Pass
                                                                                      : compare::Verdict::Fail;
  c.reason = j.value("reason", "");
  c.combinedL2 = j.value("combined_l2", 0.0);
  c.combinedRelL2 = j.value("combined_rel_l2", 0.0);
  const json outs = j.value("outputs", json::array());
  for (const auto& o : outs) {
    compare::OutputComparison oc;
    oc.name = o.value("name", "");
    oc.verdict = o.value("verdict", "") == compare::verdictName(compare::Verdict::Pass) ? compare::Verdict::Pass
                                                                                         : compare::Verdict::Fail;
    oc.reason = o.value("reason", "");
    oc.elements = o.value("elements", int64_t{0});
    oc.l2 = o.value("l2", 0.0);
    oc.relL2 = o.value("rel_l2", 0.0);
    oc.maxAbs = o.value("max_abs", 0.0);
    c.outputs.push_back(std::move(oc));
  }
  return c;
}

diff::Environment environmentOf(const json& e, const std::string& machine) {
  diff::Environment env;
  env.machine = machine;
  env.loadAverage1 = e.value("load_average_1", -1.0);
  env.gpuClocks = e.value("gpu_clocks", "");
  return env;
}

} // namespace

DeviceAbPlan readDeviceAbPlan(const fs::path& dir) {
  const fs::path file = dir / "ab.json";
  json j = readJson(file);
  try {
    if (j.at("format") != kFormat || j.at("version") != 1)
      throw std::runtime_error("not a dynqual-device-ab version 1 plan");
    DeviceAbPlan p;
    p.kind = j.at("kind").get<std::string>();
    p.base = j.at("base").at("variant").get<std::string>();
    p.head = j.at("head").at("variant").get<std::string>();
    p.device = j.at("device").get<std::string>();
    for (const auto& m : j.at("model_dirs"))
      p.models.emplace_back(m.get<std::string>());
    p.looks = j.at("looks").get<std::vector<int>>();
    p.samples = j.at("samples").get<int>();
    p.warmup = j.at("warmup").get<int>();
    p.budgetSeconds = j.at("budget_s").get<double>();
    p.injectSlowdownPercent = j.value("inject_slowdown", std::map<std::string, double>{});
    p.planDir = j.at("plan_dir").get<std::string>();
    p.interleave = j.value("interleave", "sample") == "process" ? diff::Interleave::Process : diff::Interleave::Sample;
    if (fs::exists(dir / "device-ab.json")) {
      // What the device run used: its CPU, and the budget it was given (device_ab.py --budget).
      json d = readJson(dir / "device-ab.json");
      p.cpu = d.value("cpu", -1);
      p.budgetSeconds = d.value("budget_s", p.budgetSeconds);
    }
    return p;
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": malformed: " + e.what());
  }
}

int prepareAbDevice(const std::string& kind, const diff::AbOptions& o, const std::vector<std::string>& suites,
                    const fs::path& dir) {
  for (const exec::Arm* a : {&o.base, &o.head})
    if (a->variant.kind != exec::Variant::Kind::Dq)
      throw std::runtime_error("--prepare-device: the " + a->label + " arm '" + a->variant.text() +
                               "' is not a dq variant; only dq arms run on a device machine");
  if (o.base.variant.device != o.head.variant.device)
    throw std::runtime_error("--prepare-device: the arms run on two devices (" + o.base.variant.device + ", " +
                             o.head.variant.device + "); a device run compares arms on one");
  std::error_code ec;
  if (fs::exists(dir) && !fs::is_empty(dir, ec))
    throw std::runtime_error(dir.string() + ": exists and is not empty (prepare into a new folder)");
  std::vector<fs::path> suitePaths(suites.begin(), suites.end());
  int failed = 0;
  for (const exec::Arm* a : {&o.base, &o.head}) {
    QualifySettings s;
    s.device = a->variant.device;
    s.pipeline = a->variant.pipeline;
    s.reps = 1;  // the timed rounds take the samples: the plan's own timed case runs once
    s.warmup = 0;
    s.seed = o.policy.seed;
    std::cout << a->label << " (" << a->variant.text() << ", " << (a->binDir / "dynqual").string() << "):\n";
    failed += prepareSuite(a->binDir / "dynqual", suitePaths, o.models, s, dir / a->label, false);
  }
  json models = json::array(), names = json::array();
  for (const auto& m : o.models) {
    models.push_back(fs::absolute(m).lexically_normal().string());
    names.push_back(m.filename().string());
  }
  json ab = {{"format", kFormat},
             {"version", 1},
             {"kind", kind},
             {"device", o.base.variant.device},
             {"base", {{"variant", o.base.variant.text()}, {"bin", o.base.binDir.string()}}},
             {"head", {{"variant", o.head.variant.text()}, {"bin", o.head.binDir.string()}}},
             {"models", names},
             {"model_dirs", models},
             {"looks", o.policy.looks},
             {"interleave", diff::interleaveName(o.measure.interleave)},
             {"samples", o.measure.samplesPerPosition},
             {"warmup", o.measure.warmup},
             {"budget_s", o.measure.budgetSeconds},
             {"inject_slowdown", o.measure.injectSlowdownPercent},
             {"plan_dir", fs::absolute(dir).lexically_normal().string()},
             {"created", store::utcNow()}};
  std::ofstream(dir / "ab.json") << ab.dump(1) << "\n";
  if (!fs::exists(dir / "ab.json"))
    throw std::runtime_error((dir / "ab.json").string() + ": cannot be written");
  std::cout << fmt::format("next: carry {} to the device machine and run there\n"
                           "  python3 compiler/runtime/tools/dq-run/device_ab.py --plan {} --dq-run DQ_RUN --out OUT\n"
                           "then here: dynqual {} --import-device OUT (docs/commands/ab.md, \"On a GPU machine\")\n",
                           dir.string(), dir.string(), kind);
  return failed;
}

store::Machine deviceAbMachine(const fs::path& out) {
  json d = readJson(out / "device-ab.json");
  json e = d.value("env_start", json::object());
  store::Machine m;
  std::string cpu = e.value("cpu", "");
  // device_ab.py writes "MODEL xN".
  if (auto x = cpu.rfind(" x"); x != std::string::npos) {
    m.cpuModel = cpu.substr(0, x);
    m.cores = std::atoll(cpu.c_str() + x + 2);
  } else {
    m.cpuModel = cpu.empty() ? "unknown" : cpu;
  }
  m.os = "unknown";
  std::string gpu = e.value("gpu", "");
  if (auto p = gpu.find(" (driver "); p != std::string::npos) {
    m.gpuName = gpu.substr(0, p);
    m.gpuDriver = gpu.substr(p + 9, gpu.find(')', p) - p - 9);
  } else {
    m.gpuName = gpu;
  }
  m.fingerprint = store::machineFingerprint(m);
  return m;
}

diff::AbResult importAbDevice(const fs::path& out, const DeviceAbPlan& plan, const diff::AbOptions& o,
                              const fs::path& workDir) {
  json d = readJson(out / "device-ab.json");
  if (d.value("format", "") != "dynqual-device-ab-results" || d.value("version", 0) != 1)
    throw std::runtime_error((out / "device-ab.json").string() + ": not dynqual-device-ab-results version 1");
  if (d.value("device", "") != plan.device)
    throw std::runtime_error((out / "device-ab.json").string() + ": the rounds ran on device '" +
                             d.value("device", "") + "' but the plan was prepared for '" + plan.device + "'");
  diff::AbResult r;
  r.clock = exec::TimingClock::Wall;
  r.roundValue = o.policy.roundValue;
  const store::Machine machine = deviceAbMachine(out);
  std::string machineText = fmt::format("{} x{}", machine.cpuModel, machine.cores);
  if (!machine.gpuName.empty())
    machineText += fmt::format(", {} (driver {})", machine.gpuName, machine.gpuDriver);
  r.envStart = environmentOf(d.value("env_start", json::object()), machineText);
  r.envEnd = environmentOf(d.value("env_end", json::object()), machineText);
  if (r.envStart.gpuClocks != r.envEnd.gpuClocks)
    r.envWarnings.push_back("GPU clocks changed during the run: " + r.envStart.gpuClocks + " -> " +
                            r.envEnd.gpuClocks);
  r.wallSeconds = d.value("wall_s", 0.0);
  r.budgetExhausted = d.value("budget_exhausted", false);
  for (const auto& [model, us] : d.value("slowdown_us", std::map<std::string, double>{}))
    r.slowdownUs[model] = us;

  // Correctness: each arm's device outputs against the CPU reference, replayed here.
  std::map<std::string, QualifySettings> settings;
  for (const char* arm : kArms) {
    const fs::path results = out / arm;
    if (!fs::exists(results / "results.jsonl"))
      throw std::runtime_error(results.string() + ": no results.jsonl (device_ab.py ran without its correctness step?)");
    settings[arm] = settingsOfPlan(readJson(results / "manifest.json"));
  }
  std::set<std::string> correct;
  for (size_t i = 0; i < plan.models.size(); ++i) {
    diff::ModelCheck c;
    c.model = plan.models[i].filename().string();
    c.passed = true;
    std::map<std::string, json> reports;
    for (const char* arm : kArms) {
      std::cerr << fmt::format("\r\033[Kcorrectness {}/{} {} {}", i + 1, plan.models.size(), arm, c.model);
      json rep = replayArm(plan.models[i], static_cast<int>(i), out / arm, settings[arm],
                           workDir / arm / std::to_string(i));
      const json& m = rep.value("model", json::object());
      bool ok = !qualify::entryFailed(rep) && m.value("status", "") == "pass";
      if (!ok && c.passed) {
        c.passed = false;
        std::string why = m.value("detail", "");
        if (why.empty())
          why = m.value("status", "") == "skip" ? "skipped on the device" : "failed";
        c.detail = std::string(arm) + ": " + why;
      }
      auto& counters = std::string(arm) == "base" ? c.baseCounters : c.headCounters;
      // The counters of the first case that ran (the engine's rule for dq arms).
      const json cases = m.value("cases", json::array());
      for (const auto& cs : cases)
        if (cs.value("passed", false)) {
          const json caseCounters = cs.value("counters", json::object());
          for (const auto& [k, v] : caseCounters.items())
            if (v.is_number_integer())
              counters[k] = v.get<uint64_t>();
          break;
        }
      c.bitExact = m.value("bit_exact", false);
      (std::string(arm) == "base" ? c.baseVersion : c.headVersion) = rep.value("compiler_version", "");
      (std::string(arm) == "base" ? c.baseCompileMs : c.headCompileMs) = m.value("compile_ms", 0.0);
      reports[arm] = rep;
    }
    // Cases pair up by name: both arms' plans were prepared from the same suite and seed.
    const json baseCases = reports["base"].value("model", json::object()).value("cases", json::array());
    const json headCases = reports["head"].value("model", json::object()).value("cases", json::array());
    for (const auto& cs : baseCases) {
      diff::CaseCheck k;
      k.name = cs.value("name", "");
      k.baseError = cs.value("error", "");
      k.passed = cs.value("passed", false);
      if (cs.contains("vs_reference"))
        k.baseVsReference = comparisonOf(cs["vs_reference"]);
      auto h = std::find_if(headCases.begin(), headCases.end(),
                            [&](const json& x) { return x.value("name", "") == k.name; });
      if (h == headCases.end()) {
        k.passed = false;
        k.headError = "no such case on the head arm";
      } else {
        k.headError = h->value("error", "");
        k.passed = k.passed && h->value("passed", false);
        if (h->contains("vs_reference"))
          k.headVsReference = comparisonOf((*h)["vs_reference"]);
      }
      c.cases.push_back(k);
    }
    if (c.passed)
      correct.insert(c.model);
    r.checks.push_back(std::move(c));
  }
  std::cerr << "\r\033[K";
  r.counterChanges = diff::counterChanges(r.checks);

  // Timing: the samples of the models that passed, through the engine's own analysis.
  std::ifstream in(out / "samples.jsonl");
  if (!in)
    throw std::runtime_error((out / "samples.jsonl").string() + ": cannot be read");
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.empty())
      continue;
    json s = json::parse(line, nullptr, false);
    try {
      diff::Sample x{s.at("model").get<std::string>(), s.at("arm").get<std::string>(), s.at("round").get<int>(),
                     s.at("position").get<int>(), s.at("rep").get<int>(), s.at("value_ms").get<double>(),
                     s.value("iterations", 1)};
      r.rounds = std::max(r.rounds, x.round + 1);
      if (correct.count(x.model))
        r.samples.push_back(std::move(x));
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("{}:{}: malformed sample: {}", (out / "samples.jsonl").string(), lineNo,
                                           e.what()));
    }
  }
  for (const auto& [model, why] : d.value("errors", std::map<std::string, std::string>{}))
    r.infraErrors.push_back(model + ": " + why);
  std::vector<std::string> timed;
  for (const auto& c : r.checks)
    if (correct.count(c.model) && std::any_of(r.samples.begin(), r.samples.end(),
                                              [&](const diff::Sample& s) { return s.model == c.model; }))
      timed.push_back(c.model);
  diff::AnalysisOutcome a = diff::analyze(r.samples, timed, o.policy, diff::timingMetric(r.clock));
  r.comparisons = std::move(a.comparisons);
  r.looksDone = a.looksDone;
  if (r.looksDone == 0) {
    r.comparisons = diff::undecidedComparisons(r.samples, timed, o.policy.roundValue, diff::timingMetric(r.clock));
    r.warnings.push_back(fmt::format("the device run ended after {} rounds, before the first look at {}: nothing "
                                     "was decided; raise --budget",
                                     r.rounds, o.policy.looks.front()));
  }
  return r;
}

} // namespace dynqual::cli
