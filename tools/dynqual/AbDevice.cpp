#include "AbDevice.h"

#include "QualifyDevice.h"

#include "dynqual/diff/Analysis.h"
#include "dynqual/diff/Engine.h"
#include "dynqual/exec/Executor.h"
#include "dynqual/qualify/DevicePlan.h"
#include "dynqual/qualify/Suite.h"
#include "dynqual/stats/Descriptive.h"
#include "dynqual/store/Fingerprint.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <unistd.h>
#include <fstream>
#include <iostream>
#include <set>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace dynqual::cli {

namespace {

constexpr const char* kFormat = "dynqual-device-ab";
constexpr const char* kArms[2] = {"base", "head"};

/// The qualify-one replay of model `index` of one arm: its report (QualifyModel.h toJson).
json replayArm(const fs::path& model, int index, const fs::path& results, const QualifySettings& s,
               const fs::path& work) {
  const fs::path bin = exec::selfBinDir();
  std::vector<std::string> argv = {
      (bin / "dynqual").string(), "qualify-one",  model.string(),       "--work-dir", work.string(), "--replay",
      results.string(),           "--plan-index", std::to_string(index)};
  for (auto& a : qualifyOneArgs(s, bin / "dynqual-exec"))
    argv.push_back(a);
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

/// An error in device-ab.json, already naming that file.
struct DeviceRunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// `p` with what the device run in `dir` used, when `dir` holds one: its CPU and the budget it was
/// given (device_ab.py --budget).
DeviceAbPlan withDeviceRun(DeviceAbPlan p, const fs::path& dir) {
  const fs::path file = dir / "device-ab.json";
  if (!fs::exists(file))
    return p;
  try {
    json d = qualify::readJsonObject(file);
    p.cpu = d.value("cpu", -1);
    p.budgetSeconds = d.value("budget_s", p.budgetSeconds);
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw DeviceRunError(what.rfind(file.string(), 0) == 0 ? what : file.string() + ": malformed: " + what);
  }
  return p;
}

} // namespace

DeviceAbPlan readDeviceAbPlan(const fs::path& dir) {
  const fs::path file = dir / "ab.json";
  json j = qualify::readJsonObject(file);
  try {
    if (j.at("format") != kFormat || j.at("version") != 1)
      throw std::runtime_error("not a dynqual-device-ab version 1 plan");
    DeviceAbPlan p;
    p.kind = j.at("kind").get<std::string>();
    if (p.kind != "ab" && p.kind != "calibrate" && p.kind != "gate")
      throw std::runtime_error("kind '" + p.kind + "' is none of ab, calibrate and gate");
    p.base = j.at("base").at("variant").get<std::string>();
    p.head = j.at("head").at("variant").get<std::string>();
    p.device = j.at("device").get<std::string>();
    for (const auto& m : j.at("model_dirs"))
      p.models.emplace_back(m.get<std::string>());
    p.looks = j.at("looks").get<std::vector<int>>();
    p.samples = j.at("samples").get<int>();
    p.warmup = j.at("warmup").get<int>();
    p.budgetSeconds = j.at("budget_s").get<double>();
    for (const auto& [m, pct] : j.value("inject_slowdown", std::map<std::string, double>{}))
      p.injectSlowdown[m].percent = pct;
    for (const auto& [m, text] : j.value("inject_slowdown_spec", std::map<std::string, std::string>{})) {
      try {
        p.injectSlowdown[m] = diff::parseSlowdownSpec(text);
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error((dir / "ab.json").string() + ": inject_slowdown_spec." + m + ": " + e.what());
      }
    }
    p.planDir = j.at("plan_dir").get<std::string>();
    p.interleave = j.value("interleave", "sample") == "process" ? diff::Interleave::Process : diff::Interleave::Sample;
    if (j.contains("analysis")) {
      const json& a = j.at("analysis");
      p.analysisFixed = true;
      p.alpha = a.at("alpha").get<double>();
      p.margin = a.at("margin").get<double>();
      p.roundValue = diff::parseRoundValue(a.at("round_value").get<std::string>());
      if (std::string t = a.value("tail_value", "none"); t != "none")
        p.tailValue = diff::parseRoundValue(t);
    }
    p.baseEnv = j.at("base").value("env", std::vector<std::string>{});
    p.headEnv = j.at("head").value("env", std::vector<std::string>{});
    return withDeviceRun(p, dir);
  } catch (const DeviceRunError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": malformed: " + e.what());
  }
}

namespace {

/// Copies the MLIR-free runtime of source tree `src` (compiler/runtime, sources only) into
/// `armDir`/runtime-src, so the device machine builds this arm's own dq-run. Returns the plan's
/// record: {"dir": "ARM/runtime-src", "sha256": over the relative paths and bytes, in path order}.
/// Throws std::runtime_error naming the folder when it is missing or cannot be copied.
json copyRuntimeSource(const fs::path& src, const fs::path& armDir) {
  const fs::path from = src / "compiler" / "runtime";
  if (!fs::is_directory(from))
    throw std::runtime_error(from.string() + ": no runtime sources there (is it a dynqual source tree?)");
  const fs::path to = armDir / "runtime-src";
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(from); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.rfind("build", 0) == 0 || name == "__pycache__" || name[0] == '.')) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file())
      files.push_back(fs::relative(it->path(), from));
  }
  std::sort(files.begin(), files.end());
  std::string digestInput;
  for (const auto& rel : files) {
    std::error_code ec;
    fs::create_directories((to / rel).parent_path(), ec);
    fs::copy_file(from / rel, to / rel, fs::copy_options::overwrite_existing, ec);
    if (ec)
      throw std::runtime_error("copying " + (from / rel).string() + " into the plan: " + ec.message());
    std::ifstream in(from / rel, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    digestInput += rel.generic_string() + '\0' + std::to_string(bytes.size()) + '\0' + bytes;
  }
  return {{"dir", (armDir.filename() / "runtime-src").generic_string()}, {"sha256", store::sha256Hex(digestInput)}};
}

} // namespace

int prepareAbDevice(const std::string& kind, const diff::AbOptions& o, const std::vector<std::string>& suites,
                    const fs::path& dir, const std::map<std::string, fs::path>& runtimeSources) {
  for (const exec::Arm* a : {&o.base, &o.head})
    if (a->variant.kind != exec::Variant::Kind::Dq)
      throw std::runtime_error("--prepare-device: the " + a->label + " arm '" + a->variant.text() +
                               "' is not a dq variant; only dq arms run on a device machine");
  if (o.base.env != o.head.env && o.measure.interleave == diff::Interleave::Sample)
    throw std::runtime_error("--prepare-device: the arms have different environments (--a-env, --b-env), but under "
                             "sample interleaving one dq-run process runs both; add --interleave process");
  if (o.base.variant.device != o.head.variant.device)
    throw std::runtime_error("--prepare-device: the arms run on two devices (" + o.base.variant.device + ", " +
                             o.head.variant.device + "); a device run compares arms on one");
  std::error_code ec;
  if (fs::exists(dir) && !fs::is_directory(dir))
    throw std::runtime_error(dir.string() + ": exists and is not a folder");
  if (fs::exists(dir) && !fs::is_empty(dir, ec))
    throw std::runtime_error(dir.string() + ": exists and is not empty (prepare into a new folder)");
  std::vector<fs::path> suitePaths(suites.begin(), suites.end());
  int failed = 0;
  for (const exec::Arm* a : {&o.base, &o.head}) {
    QualifySettings s;
    s.device = a->variant.device;
    s.pipeline = a->variant.pipeline;
    s.reps = 1; // the timed rounds take the samples: the plan's own timed case runs once
    s.warmup = 0;
    s.seed = o.policy.seed;
    std::cout << a->label << " (" << a->variant.text() << ", " << (a->binDir / "dynqual").string() << "):\n";
    failed += prepareSuite(a->binDir / "dynqual", suitePaths, o.models, s, dir / a->label, false, a->env);
  }
  json runtimes = json::object();
  for (const auto& [label, src] : runtimeSources)
    runtimes[label] = copyRuntimeSource(src, dir / label);
  json models = json::array(), names = json::array();
  for (const auto& m : o.models) {
    models.push_back(fs::absolute(m).lexically_normal().string());
    names.push_back(m.filename().string());
  }
  // Shifts stay in "inject_slowdown" (a percent, as device_ab.py has always read it); tail and
  // spread go to "inject_slowdown_spec" as text.
  std::map<std::string, double> shiftPercents;
  std::map<std::string, std::string> specTexts;
  for (const auto& [m, spec] : o.measure.injectSlowdown)
    if (spec.kind == diff::SlowdownSpec::Kind::Shift)
      shiftPercents[m] = spec.percent;
    else
      specTexts[m] = diff::slowdownSpecText(spec);
  json ab = {{"format", kFormat},
             {"version", 1},
             {"kind", kind},
             {"device", o.base.variant.device},
             {"base", {{"variant", o.base.variant.text()}, {"bin", o.base.binDir.string()}, {"env", o.base.env}}},
             {"head", {{"variant", o.head.variant.text()}, {"bin", o.head.binDir.string()}, {"env", o.head.env}}},
             {"models", names},
             {"model_dirs", models},
             {"looks", o.policy.looks},
             // Fixed before any data: an import that changes them is exploratory.
             {"analysis",
              {{"alpha", o.policy.alpha},
               {"margin", o.policy.margin},
               {"round_value", diff::roundValueName(o.policy.roundValue)},
               {"tail_value", o.policy.tailValue ? diff::roundValueName(*o.policy.tailValue) : "none"}}},
             {"interleave", diff::interleaveName(o.measure.interleave)},
             {"samples", o.measure.samplesPerPosition},
             {"warmup", o.measure.warmup},
             {"budget_s", o.measure.budgetSeconds},
             {"inject_slowdown", shiftPercents},
             {"inject_slowdown_spec", specTexts},
             {"plan_dir", fs::absolute(dir).lexically_normal().string()},
             {"runtime_src", runtimes},
             {"created", store::utcNow()}};
  std::ofstream(dir / "ab.json") << ab.dump(1) << "\n";
  if (!fs::exists(dir / "ab.json"))
    throw std::runtime_error((dir / "ab.json").string() + ": cannot be written");
  if (failed > 0) {
    std::cout << failed << " model preparation(s) failed (above); fix them before running the plan\n";
    return failed;
  }
  if (!runtimes.empty())
    std::cout << fmt::format("each arm's runtime sources are in {}/ARM/runtime-src: scripts/gpu-ab.sh builds each "
                             "arm's dq-run from them\n",
                             dir.string());
  std::cout << fmt::format("next: carry {} to the device machine and run there\n"
                           "  python3 compiler/runtime/tools/dq-run/device_ab.py --plan {} --dq-run DQ_RUN --out OUT\n"
                           "then here: dynqual {} --import-device OUT (docs/commands/ab.md, \"On a GPU machine\")\n",
                           dir.string(), dir.string(), kind);
  return failed;
}

store::Machine deviceAbMachine(const fs::path& out) {
  json d = qualify::readJsonObject(out / "device-ab.json");
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

namespace {

/// device-ab.json, checked.
struct DeviceRun {
  int rounds = 0;
  std::string interleave;
  std::map<std::string, std::string> errors; ///< model -> why it was not timed, or stopped
  json raw;
};

DeviceRun readDeviceRun(const fs::path& out, const DeviceAbPlan& plan) {
  const fs::path file = out / "device-ab.json";
  json d = qualify::readJsonObject(file);
  if (d.value("format", "") != "dynqual-device-ab-results" || d.value("version", 0) != 1)
    throw std::runtime_error(file.string() + ": not dynqual-device-ab-results version 1");
  DeviceRun run;
  try {
    if (d.at("device").get<std::string>() != plan.device)
      throw std::runtime_error("the rounds ran on device '" + d.at("device").get<std::string>() +
                               "' but the plan was prepared for '" + plan.device + "'");
    run.rounds = d.at("rounds").get<int>();
    if (run.rounds < 0)
      throw std::runtime_error("rounds is negative");
    run.interleave = d.value("interleave", std::string(diff::interleaveName(plan.interleave)));
    if (run.interleave != diff::interleaveName(plan.interleave))
      throw std::runtime_error("the rounds were interleaved by " + run.interleave + ", the plan asked for " +
                               diff::interleaveName(plan.interleave));
    run.errors = d.value("errors", std::map<std::string, std::string>{});
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": malformed: " + e.what());
  }
  run.raw = std::move(d);
  return run;
}

/// samples.jsonl, every line checked against the plan and the run: a known model and arm, a round
/// the run had, an ABBA position 0..3, a finite positive time, no sample twice.
std::vector<diff::Sample> readSamples(const fs::path& out, const DeviceAbPlan& plan, int rounds) {
  const fs::path file = out / "samples.jsonl";
  std::ifstream in(file);
  if (!in)
    throw std::runtime_error(file.string() + ": cannot be read");
  std::set<std::string> models;
  for (const auto& m : plan.models)
    models.insert(m.filename().string());
  std::set<std::tuple<std::string, std::string, int, int, int>> seen;
  std::vector<diff::Sample> samples;
  std::string line;
  for (int lineNo = 1; std::getline(in, line); ++lineNo) {
    if (line.empty())
      continue;
    auto bad = [&](const std::string& why) {
      return std::runtime_error(fmt::format("{}:{}: {}", file.string(), lineNo, why));
    };
    json j = json::parse(line, nullptr, false);
    if (!j.is_object())
      throw bad("not a JSON object");
    diff::Sample x;
    try {
      x = {j.at("model").get<std::string>(), j.at("arm").get<std::string>(), j.at("round").get<int>(),
           j.at("position").get<int>(),      j.at("rep").get<int>(),         j.at("value_ms").get<double>(),
           j.value("iterations", 1)};
    } catch (const std::exception&) {
      throw bad("a sample needs model, arm, round, position and rep (integers) and value_ms (a number)");
    }
    if (!models.count(x.model))
      throw bad("model '" + x.model + "' is not in the plan");
    if (x.arm != "base" && x.arm != "head")
      throw bad("arm '" + x.arm + "' is neither base nor head");
    if (x.round < 0 || x.round >= rounds)
      throw bad(fmt::format("round {} is outside the {} rounds device-ab.json reports", x.round, rounds));
    if (x.position < 0 || x.position > 3 || x.rep < 0)
      throw bad("position must be 0..3 and rep at least 0");
    if (!std::isfinite(x.valueMs) || x.valueMs <= 0)
      throw bad(fmt::format("value_ms {} is not a positive time", x.valueMs));
    if (!seen.insert({x.model, x.arm, x.round, x.position, x.rep}).second)
      throw bad("the same sample (model, arm, round, position, rep) appears twice");
    samples.push_back(std::move(x));
  }
  return samples;
}

/// Bytes of a prepared artifact and its constants sidecar.
uint64_t artifactBytes(const fs::path& planArm, const json& manifest, size_t index) {
  std::error_code ec;
  const auto& models = manifest.at("models");
  if (index >= models.size() || models[index].value("artifact", "").empty())
    return 0;
  fs::path dqp = planArm / models[index]["artifact"].get<std::string>();
  uint64_t n = 0;
  for (const fs::path& f : {dqp, fs::path(dqp.string() + ".bin")}) {
    auto b = fs::file_size(f, ec);
    if (!ec)
      n += b;
  }
  return n;
}

} // namespace

diff::AbResult importAbDevice(const fs::path& out, const DeviceAbPlan& plan, const diff::AbOptions& o,
                              const fs::path& workDir) {
  const DeviceRun run = readDeviceRun(out, plan);
  // Bad input is refused before any replay work.
  std::vector<diff::Sample> samples = readSamples(out, plan, run.rounds);
  std::map<std::string, QualifySettings> settings;
  std::map<std::string, json> manifests;
  for (const char* arm : kArms) {
    const fs::path results = out / arm;
    if (!fs::exists(results / "results.jsonl"))
      throw std::runtime_error(results.string() + ": no results.jsonl (was device_ab.py run with --skip-correctness?)");
    manifests[arm] = qualify::readJsonObject(results / "manifest.json");
    settings[arm] = settingsOfPlan(manifests[arm]);
  }

  diff::AbResult r;
  r.clock = exec::TimingClock::Wall;
  r.roundValue = o.policy.roundValue;
  const json& d = run.raw;
  const store::Machine machine = deviceAbMachine(out);
  std::string machineText = fmt::format("{} x{}", machine.cpuModel, machine.cores);
  if (!machine.gpuName.empty())
    machineText += fmt::format(", {} (driver {})", machine.gpuName, machine.gpuDriver);
  r.envStart = environmentOf(d.value("env_start", json::object()), machineText);
  r.envEnd = environmentOf(d.value("env_end", json::object()), machineText);
  r.envStart.affinity = r.envEnd.affinity =
      plan.cpu >= 0 ? "dq-run bound to CPU " + std::to_string(plan.cpu) : "dq-run not bound";
  if (r.envStart.gpuClocks != r.envEnd.gpuClocks)
    r.envWarnings.push_back("GPU clocks changed during the run: " + r.envStart.gpuClocks + " -> " + r.envEnd.gpuClocks);
  r.wallSeconds = d.value("wall_s", 0.0);
  r.budgetExhausted = d.value("budget_exhausted", false);
  r.rounds = run.rounds;
  for (const auto& [model, us] : d.value("slowdown_us", std::map<std::string, double>{}))
    r.slowdownUs[model] = us;
  const bool progress = isatty(STDERR_FILENO);

  // Correctness: each arm's device outputs against the CPU reference, replayed here.
  std::set<std::string> correct;
  for (size_t i = 0; i < plan.models.size(); ++i) {
    diff::ModelCheck c;
    c.model = plan.models[i].filename().string();
    c.passed = true;
    std::map<std::string, json> reports;
    for (const char* arm : kArms) {
      if (progress)
        std::cerr << fmt::format("\r\033[Kcorrectness {}/{} {} {}", i + 1, plan.models.size(), arm, c.model);
      json rep =
          replayArm(plan.models[i], static_cast<int>(i), out / arm, settings[arm], workDir / arm / std::to_string(i));
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
      (std::string(arm) == "base" ? c.baseArtifactBytes : c.headArtifactBytes) =
          artifactBytes(plan.planDir / arm, manifests[arm], i);
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
  if (progress)
    std::cerr << "\r\033[K";
  r.counterChanges = diff::counterChanges(r.checks);

  // Timing: as the engine does, a model whose rounds stopped on the device is an infrastructure
  // error and leaves the analysis, so it cannot hold back the looks of the others.
  std::vector<std::string> timed;
  for (const auto& c : r.checks) {
    auto err = run.errors.find(c.model);
    if (err != run.errors.end()) {
      r.infraErrors.push_back(c.model + ": " + err->second);
      continue;
    }
    if (!correct.count(c.model))
      continue;
    bool any = std::any_of(samples.begin(), samples.end(), [&](const diff::Sample& x) { return x.model == c.model; });
    if (!any && run.rounds > 0)
      throw std::runtime_error((out / "samples.jsonl").string() + ": no sample of model '" + c.model +
                               "', which passed and which device-ab.json names no error for");
    if (any)
      timed.push_back(c.model);
  }
  for (const auto& x : samples)
    if (std::find(timed.begin(), timed.end(), x.model) != timed.end())
      r.samples.push_back(x);
  if (timed.empty()) {
    if (run.rounds == 0 && !correct.empty())
      r.warnings.push_back("the device run took no timed round");
    return r;
  }
  diff::AnalysisOutcome a = diff::analyze(r.samples, timed, o.policy, diff::timingMetric(r.clock));
  r.comparisons = std::move(a.comparisons);
  r.looksDone = a.looksDone;
  if (r.looksDone == 0) {
    r.comparisons = diff::undecidedComparisons(r.samples, timed, o.policy.roundValue, diff::timingMetric(r.clock));
    r.warnings.push_back(fmt::format("the device run ended after {} rounds, before the first look at {}: nothing "
                                     "was decided; raise the budget (device_ab.py --budget)",
                                     r.rounds, o.policy.looks.front()));
  }
  return r;
}

} // namespace dynqual::cli
