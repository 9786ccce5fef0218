#include "AbDriver.h"
#include "AbDevice.h"
#include "AbMeasurementChoice.h"
#include "AbNoiseNotes.h"
#include "Commands.h"

#include "dynqual/diff/AbStore.h"
#include "dynqual/diff/Analysis.h"
#include "dynqual/diff/Engine.h"
#include "dynqual/exec/Executor.h"
#include "dynqual/qualify/Suite.h"
#include "dynqual/run/ModelRun.h"
#include "dynqual/stats/Sequential.h"
#include "dynqual/store/RunRecording.h"
#include "dynqual/store/Store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>

namespace fs = std::filesystem;

namespace dynqual::cli {

namespace {

/// The models of the request: the device plan's on an import, else the SUITE folders (default:
/// the perf suite). Reads the plan into `devicePlan`. Throws UsageError for a bad combination, an
/// unreadable plan, a plan of another command, or an empty suite.
std::vector<fs::path> requestedModels(const std::string& kind, const AbFlags& f,
                                      std::optional<DeviceAbPlan>& devicePlan) {
  std::vector<fs::path> suites(f.suites.begin(), f.suites.end());
  std::vector<fs::path> models;
  if (!f.prepareDevice.empty() && !f.importDevice.empty())
    throw UsageError("--prepare-device and --import-device are two steps: give one");
  if (!f.importDevice.empty()) {
    if (!suites.empty())
      throw UsageError("--import-device takes the suite from its plan; give no SUITE");
    try {
      devicePlan = readDeviceAbPlan(f.importDevice);
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
    if (devicePlan->kind != kind)
      throw UsageError(f.importDevice + ": the plan was prepared by dynqual " + devicePlan->kind +
                       "; import it with dynqual " + devicePlan->kind);
    models = devicePlan->models;
  } else {
    try {
      models = suites.empty() ? qualify::perfSuite(exec::selfBinDir() / "dynqual") : run::expandModelDirs(suites);
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
  }
  if (models.empty())
    throw UsageError("the suite holds no model (pass SUITE folders holding model.onnx)");
  return models;
}

/// Puts the flags' policy and measurement settings into `o` and checks them against the arms and
/// the device split. Throws UsageError for anything that would be wrong, before any work.
void applyFlags(const AbFlags& f, const std::optional<DeviceAbPlan>& devicePlan, diff::AbOptions& o) {
  o.policy.alpha = f.alpha;
  o.policy.margin = f.margin;
  o.policy.looks = f.looks.empty() ? (devicePlan ? devicePlan->looks : stats::kDefaultLookRounds) : f.looks;
  o.policy.bootstrapResamples = f.bootstrap;
  o.policy.seed = f.seed;
  try {
    stats::LookSchedule s;
    s.rounds = o.policy.looks;
    s.validate();
  } catch (const std::exception& e) {
    throw UsageError(std::string("--looks: ") + e.what());
  }
  o.measure.samplesPerPosition = f.samples;
  o.measure.warmup = f.warmup;
  o.measure.minSampleMs = f.minSampleMs;
  o.measure.budgetSeconds = f.budget;
  o.measure.injectSlowdown = parseInjectSlowdown(f.inject);
  o.measure.compileTime = f.compileTime;
  applyDecisionMetric(f, o);
  if (f.compileTime &&
      (o.base.variant.kind != exec::Variant::Kind::Dq || o.head.variant.kind != exec::Variant::Kind::Dq))
    throw UsageError("--compile-time needs two dq arms: a runner's compile is not a separate step");
  for (const auto& [model, spec] : o.measure.injectSlowdown) {
    if (std::none_of(o.models.begin(), o.models.end(), [&](const fs::path& m) { return m.filename() == model; }))
      throw UsageError("--inject-slowdown: no model named '" + model + "' in the suite");
    if (o.head.variant.kind != exec::Variant::Kind::Dq)
      throw UsageError("--inject-slowdown needs a dq head arm");
  }
  if (!f.prepareDevice.empty() || devicePlan) {
    if (devicePlan && f.interleave != "auto")
      throw UsageError("--import-device takes the interleaving from its plan; give no --interleave");
    // What the plan fixed, or the device run decides, cannot be changed afterwards or here.
    if (devicePlan && (f.samples != 0 || f.warmup != 2 || f.budget != 600 || !f.inject.empty()))
      throw UsageError("--import-device takes --samples, --warmup, --budget and --inject-slowdown from its plan; "
                       "give them at --prepare-device (the budget to device_ab.py --budget)");
    if (!f.prepareDevice.empty() && (f.pinCpu != "auto" || f.minSampleMs != 0))
      throw UsageError("--prepare-device: --pin-cpu belongs to device_ab.py, and a device sample is one run "
                       "(no --min-sample-ms)");
    if (f.clock != "auto" && f.clock != "wall")
      throw UsageError("a device run reads wall time: --clock " + f.clock + " is not available there");
    if (f.compileTime)
      throw UsageError("--compile-time is not available with a device run");
  }
}

/// --tail-value: "none" for no second comparison; "auto" for the mean under process interleaving
/// (measured: docs/metrics/gate-decision.md, "What a regression is") and none under sample
/// interleaving (not measured there); else that round value.
std::optional<diff::RoundValue> resolveTailValue(const std::string& text, bool sampleInterleave) {
  if (text == "none" || (text == "auto" && sampleInterleave))
    return std::nullopt;
  return text == "auto" ? diff::RoundValue::Mean : diff::parseRoundValue(text);
}

/// --prepare-device: compiles both arms' plans for the device machine and runs nothing. One dq-run
/// process holds both programs and alternates them, unless asked for a process per ABBA position
/// (docs/commands/ab.md, "On a GPU machine"). `extraParams` "base_src" / "head_src" name the
/// source trees whose runtimes the plan carries (a gate's revisions). Returns the exit code.
int prepareDevice(const std::string& kind, const AbFlags& f, diff::AbOptions& o,
                  const std::map<std::string, std::string>& extraParams) {
  const bool sample = f.interleave != "process";
  o.measure.interleave = sample ? diff::Interleave::Sample : diff::Interleave::Process;
  o.measure.samplesPerPosition = f.samples == 0 ? (sample ? 20 : 5) : f.samples;
  if (f.looks.empty() && sample)
    o.policy.looks = stats::kSampleInterleaveLookRounds;
  // The whole analysis is fixed here, before any data (docs/commands/ab.md, "On a GPU machine").
  o.policy.roundValue = f.roundValue == "auto" ? (sample ? diff::RoundValue::LowerHalfMean : diff::RoundValue::Min)
                                               : diff::parseRoundValue(f.roundValue);
  o.policy.tailValue = resolveTailValue(f.tailValue, sample);
  try {
    std::map<std::string, fs::path> runtimeSources;
    for (const char* arm : {"base", "head"})
      if (auto it = extraParams.find(std::string(arm) + "_src"); it != extraParams.end())
        runtimeSources[arm] = it->second;
    return prepareAbDevice(kind, o, f.suites, f.prepareDevice, runtimeSources) > 0 ? diff::kRegression : diff::kPass;
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

/// Fails at once (UsageError) when --out cannot be written or --runner-config does not exist.
void checkOutputs(const AbFlags& f) {
  if (!f.outDir.empty()) {
    std::error_code ec;
    fs::create_directories(f.outDir, ec);
    std::ofstream probe(fs::path(f.outDir) / "report.md");
    if (!probe)
      throw UsageError("--out " + f.outDir + ": cannot write there");
  }
  if (!f.runnerConfig.empty() && !fs::exists(f.runnerConfig))
    throw UsageError("--runner-config " + f.runnerConfig + ": no such file");
}

/// The clock, interleaving, pinned CPU, sample counts, looks and round value of this run: the
/// device plan's on an import, else resolved from the flags and what the arms can do.
void resolveMeasurement(const AbFlags& f, const std::optional<DeviceAbPlan>& devicePlan, exec::Executor& executor,
                        diff::AbOptions& o) {
  if (devicePlan) {
    o.measure.samplesPerPosition = devicePlan->samples;
    o.measure.warmup = devicePlan->warmup;
    o.measure.budgetSeconds = devicePlan->budgetSeconds;
    o.measure.injectSlowdown = devicePlan->injectSlowdown;
  }
  o.measure.clock = devicePlan ? exec::TimingClock::Wall : resolveClock(f.clock, o.base, o.head, executor);
  o.measure.interleave =
      devicePlan ? devicePlan->interleave : resolveInterleave(f.interleave, o.base, o.head, executor);
  bool sampleInterleave = o.measure.interleave == diff::Interleave::Sample;
  o.measure.cpu = devicePlan ? devicePlan->cpu : sampleInterleave ? resolvePinCpu(f.pinCpu) : -1;
  // Serving processes start once per round, so more and longer samples cost little there.
  if (f.samples == 0 && !devicePlan)
    o.measure.samplesPerPosition = sampleInterleave ? 20 : 5;
  if (f.minSampleMs == 0)
    o.measure.minSampleMs = devicePlan ? 0.0 : sampleInterleave ? 4.0 : 1.0; // device samples: one run each
  if (f.looks.empty() && sampleInterleave && !devicePlan)
    o.policy.looks = stats::kSampleInterleaveLookRounds;
  // Sample interleaving takes 40 short samples per arm and round: their fastest half is a steadier
  // round value than their single fastest (docs/metrics/round-value.md).
  o.policy.roundValue = f.roundValue == "auto"
                            ? (sampleInterleave ? diff::RoundValue::LowerHalfMean : diff::RoundValue::Min)
                            : diff::parseRoundValue(f.roundValue);
  o.policy.tailValue = resolveTailValue(f.tailValue, sampleInterleave);
  resolveDecisionMetric(f, executor, o);
}

/// --import-device: the analysis the plan fixed (looks, alpha, margin, round value), unless a flag
/// departs from it (a value other than both the flag's default and the plan's); then the flag's
/// value is used and the returned list says what changed, which makes the result exploratory. A
/// plan from before the analysis was fixed there is exploratory as a whole.
std::vector<std::string> applyDevicePlanAnalysis(const AbFlags& f, const DeviceAbPlan& plan, diff::Policy& p) {
  std::vector<std::string> changed;
  const AbFlags defaults;
  if (!plan.analysisFixed) {
    changed.push_back("the plan predates a fixed analysis, so alpha, margin and round value were chosen at import");
    return changed;
  }
  p.alpha = f.alpha != defaults.alpha && f.alpha != plan.alpha ? f.alpha : plan.alpha;
  if (p.alpha != plan.alpha)
    changed.push_back(fmt::format("alpha {} (planned {})", p.alpha, plan.alpha));
  p.margin = f.margin != defaults.margin && f.margin != plan.margin ? f.margin : plan.margin;
  if (p.margin != plan.margin)
    changed.push_back(fmt::format("margin {} (planned {})", p.margin, plan.margin));
  if (!f.looks.empty() && f.looks != plan.looks)
    changed.push_back(fmt::format("looks {} (planned {})", fmt::join(f.looks, ","), fmt::join(plan.looks, ",")));
  else
    p.looks = plan.looks;
  std::optional<diff::RoundValue> tail =
      f.tailValue == "auto" ? plan.tailValue
                            : resolveTailValue(f.tailValue, plan.interleave == diff::Interleave::Sample);
  auto tailName = [](const std::optional<diff::RoundValue>& v) {
    return std::string(v ? diff::roundValueName(*v) : "none");
  };
  if (tail != plan.tailValue)
    changed.push_back(fmt::format("tail value {} (planned {})", tailName(tail), tailName(plan.tailValue)));
  p.tailValue = tail;
  diff::RoundValue asked = f.roundValue == "auto" ? plan.roundValue : diff::parseRoundValue(f.roundValue);
  if (asked != plan.roundValue)
    changed.push_back(
        fmt::format("round value {} (planned {})", diff::roundValueName(asked), diff::roundValueName(plan.roundValue)));
  p.roundValue = asked;
  return changed;
}

/// The parameters stored with the run: the policy and measurement, both arms (variant, binaries,
/// environment), the caller's extras, the injected slowdowns and the device results folder.
std::map<std::string, std::string> runParams(const AbFlags& f, const diff::AbOptions& o, bool deviceImport,
                                             const std::map<std::string, std::string>& extraParams) {
  auto params = diff::policyParams(o.policy, o.measure);
  params["base"] = o.base.variant.text();
  params["head"] = o.head.variant.text();
  params["base_bin"] = o.base.binDir.string();
  params["head_bin"] = o.head.binDir.string();
  auto joined = [](const std::vector<std::string>& env) {
    std::string all;
    for (const auto& e : env)
      all += (all.empty() ? "" : " ") + e;
    return all;
  };
  if (!o.base.env.empty())
    params["base_env"] = joined(o.base.env);
  if (!o.head.env.empty())
    params["head_env"] = joined(o.head.env);
  for (const auto& [k, v] : extraParams)
    params[k] = v;
  // A shift keeps the bare percent that runs stored before the other kinds existed.
  for (const auto& [m, spec] : o.measure.injectSlowdown)
    params["inject_slowdown." + m] =
        spec.kind == diff::SlowdownSpec::Kind::Shift ? fmt::format("{}", spec.percent) : diff::slowdownSpecText(spec);
  if (deviceImport)
    params["device_results"] = fs::absolute(f.importDevice).lexically_normal().string();
  return params;
}

/// Prints the calibration's sizing notes for this suite on stderr and returns them (as warnings
/// of the result); an unreadable history is a note, not an error.
std::vector<std::string> announceSizing(const std::string& kind, store::Store& db, const std::string& machine,
                                        const diff::AbOptions& o) {
  std::vector<std::string> sizing;
  try {
    sizing = sizingFromCalibration(db, machine, o.models, o.policy, diff::timingMetric(o.measure.clock),
                                   diff::comparisonCount(static_cast<int>(o.models.size()), o.policy, o.measure));
  } catch (const std::exception& e) {
    sizing.push_back(std::string("calibration history unreadable: ") + e.what());
  }
  for (const auto& n : sizing)
    std::cerr << "dynqual " << kind << ": " << n << "\n";
  return sizing;
}

/// The measured result: the device results replayed on an import, else the interleaved rounds run
/// here with progress on stderr when it is a terminal.
diff::AbResult measure(const AbFlags& f, const std::optional<DeviceAbPlan>& devicePlan, const diff::AbOptions& o,
                       exec::Executor& executor, const fs::path& work) {
  diff::AbResult r;
  if (devicePlan) {
    try {
      r = importAbDevice(f.importDevice, *devicePlan, o, work);
    } catch (const std::exception& e) {
      throw UsageError(e.what()); // the run stays "unfinished" in the store
    }
  } else {
    r = diff::runAb(o, executor, [&](const std::string& line) {
      if (o.progress)
        std::cerr << "\r\033[K" << line << std::flush;
    });
  }
  if (o.progress)
    std::cerr << "\r\033[K";
  return r;
}

/// Records the result and finishes the run; returns the store's error ("" when it worked), so the
/// report is still printed whole.
std::string record(store::Store& db, int64_t runId, const diff::AbResult& r, const std::string& machine,
                   const std::function<void(int64_t, const diff::AbResult&, const std::string&)>& afterRecord) {
  try {
    diff::recordAbResult(db, runId, r);
    if (afterRecord)
      afterRecord(runId, r, machine);
    db.finishRun(runId);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

} // namespace

int runAbCommand(const std::string& kind, const AbFlags& f, diff::AbOptions o,
                 const std::map<std::string, std::string>& extraParams,
                 const std::function<void(int64_t, const diff::AbResult&, const std::string&)>& afterRecord) {
  // Everything that can be wrong with the request fails here, before any work.
  std::optional<DeviceAbPlan> devicePlan;
  o.models = requestedModels(kind, f, devicePlan);
  applyFlags(f, devicePlan, o);
  if (!f.prepareDevice.empty())
    return prepareDevice(kind, f, o, extraParams);
  checkOutputs(f);
  o.progress = isatty(STDERR_FILENO);

  std::unique_ptr<store::Store> db;
  if (!f.noDb)
    db = std::make_unique<store::Store>(f.db.empty() ? store::defaultDbPath() : fs::path(f.db));
  bool tempWork = f.workDir.empty();
  fs::path work = tempWork ? makeTempWorkDir(kind) : fs::path(f.workDir);
  fs::create_directories(work);

  exec::ExecConfig ec;
  ec.workDir = work;
  ec.compileTimeoutSeconds = f.compileTimeout;
  ec.runTimeoutSeconds = f.runTimeout;
  ec.runnerConfig = f.runnerConfig;
  exec::Executor executor(ec);
  resolveMeasurement(f, devicePlan, executor, o);
  std::vector<std::string> exploratory;
  if (devicePlan)
    exploratory = applyDevicePlanAnalysis(f, *devicePlan, o.policy);
  std::map<std::string, std::string> params = runParams(f, o, devicePlan.has_value(), extraParams);
  if (!exploratory.empty())
    params["exploratory"] = fmt::format("{}", fmt::join(exploratory, "; "));

  store::RunRecord header =
      store::newRunHeader(kind, o.head.variant.device, o.head.variant.text(), {exec::selfBinDir() / "dynqual"}, params);
  if (devicePlan) {
    try {
      header.machine = deviceAbMachine(f.importDevice);
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
  }
  const std::string& machine = header.machine.fingerprint;
  int64_t runId = 0;
  try {
    if (db)
      runId = db->beginRun(header);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }

  std::vector<std::string> sizing;
  if (db && o.measure.metric == diff::DecisionMetric::Measured) // calibrations size measured noise
    sizing = announceSizing(kind, *db, machine, o);
  diff::AbResult r = measure(f, devicePlan, o, executor, work);
  r.exploratory = exploratory;
  r.warnings.insert(r.warnings.end(), sizing.begin(), sizing.end());
  std::string recordError;
  if (db) {
    try {
      for (const auto& n : noisierThanHistory(*db, machine, r))
        r.warnings.push_back(n);
    } catch (const std::exception& e) {
      r.warnings.push_back(std::string("calibration history unreadable: ") + e.what());
    }
    recordError = record(*db, runId, r, machine, afterRecord);
  }

  reports::GateContext ctx{kind, o.base.variant.text(), o.head.variant.text(), o.policy, o.measure, runId};
  if (db && recordError.empty())
    ctx.dbPath = fs::absolute(db->path()).lexically_normal().string();
  if (extraParams.count("base_rev"))
    ctx.baseLabel += " @ " + extraParams.at("base_rev");
  if (extraParams.count("head_rev"))
    ctx.headLabel += " @ " + extraParams.at("head_rev");
  for (const char* k : {"base_build", "head_build"})
    if (extraParams.count(k))
      ctx.notes.push_back(extraParams.at(k));
  emitAbReport(f, r, ctx);
  if (tempWork)
    fs::remove_all(work);
  std::cerr << "dynqual " << kind << ": " << diff::verdictLine(r) << "\n";
  if (!ctx.dbPath.empty())
    std::cerr << "dynqual " << kind << ": recorded run " << runId << " into " << ctx.dbPath << "\n";
  if (!recordError.empty()) {
    std::cerr << "dynqual " << kind << ": recording into the store failed (results above are complete): " << recordError
              << "\n";
    return 2;
  }
  return diff::exitCodeFor(r);
}

void armsFromDevicePlan(const std::string& dir, const std::string& a, const std::string& b, diff::AbOptions& o,
                        const char* flagA, const char* flagB) {
  DeviceAbPlan plan;
  try {
    plan = readDeviceAbPlan(dir);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  auto pick = [&](const std::string& given, const std::string& planned, const char* label, const char* flag) {
    exec::Arm arm = makeArm(label, planned, flag);
    if (!given.empty() && makeArm(label, given, flag).variant.text() != arm.variant.text())
      throw UsageError(std::string(flag) + " " + given + " differs from the plan's " + label + " arm '" + planned +
                       "' (" + dir + "/ab.json); give it as planned or leave it out");
    return arm;
  };
  o.base = pick(a, plan.base, "base", flagA);
  o.head = pick(b, plan.head, "head", flagB);
  o.base.env = plan.baseEnv;
  o.head.env = plan.headEnv;
}

} // namespace dynqual::cli
