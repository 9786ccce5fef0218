#include "AbDriver.h"
#include "AbDevice.h"
#include "Commands.h"

#include "dynqual/diff/AbStore.h"
#include "dynqual/diff/Engine.h"
#include "dynqual/exec/Executor.h"
#include "dynqual/qualify/Suite.h"
#include "dynqual/reports/Report.h"
#include "dynqual/stats/Descriptive.h"
#include "dynqual/stats/Sequential.h"
#include "dynqual/run/ModelRun.h"
#include "dynqual/process/Process.h"
#include "dynqual/store/RunRecording.h"
#include "dynqual/store/Store.h"

#include <algorithm>
#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <boost/math/distributions/normal.hpp>

#include <charconv>
#include <cmath>
#include <fstream>
#include <iostream>

namespace fs = std::filesystem;

namespace dynqual::cli {

void addAbFlags(CLI::App* cmd, AbFlags& f) {
  cmd->add_option("suite", f.suites, "model folders or folders of them (default: the perf suite: ../shared/models and "
                                     "corpus/decoder_tiny)");
  cmd->add_option("--alpha", f.alpha, "suite-level false-positive rate, split over looks, Holm over models")
      ->check(CLI::Range(1e-6, 0.5))->capture_default_str();
  cmd->add_option("--margin", f.margin, "relative change treated as no change (policy, e.g. 0.02 = 2%)")
      ->check(CLI::Range(0.0, 0.5))->capture_default_str();
  cmd->add_option("--looks", f.looks,
                  "rounds at which the data is analysed, fixed in advance (default 12,16,24,32,48,64; "
                  "16,24,32,48,64,96,128,192,256 with --interleave sample)")
      ->delimiter(',');
  cmd->add_option("--budget", f.budget, "seconds of timed rounds; may only cut looks short")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--samples", f.samples, "samples per ABBA position (0 = 5, or 20 with --interleave sample)")
      ->check(CLI::Range(0, 1000))->capture_default_str();
  cmd->add_option("--warmup", f.warmup, "discarded runs at the start of each position")
      ->check(CLI::Range(0, 1000))->capture_default_str();
  cmd->add_option("--min-sample-ms", f.minSampleMs,
                  "one sample batches runs lasting at least this long, ms (0 = 1, or 4 with --interleave sample)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--seed", f.seed, "bootstrap and generated-input seed")->capture_default_str();
  cmd->add_option("--bootstrap", f.bootstrap, "bootstrap resamples")->check(CLI::Range(0, 1000000))->capture_default_str();
  cmd->add_option("--inject-slowdown", f.inject,
                  "MODEL=PERCENT: slow the head arm of MODEL by PERCENT % of its measured median latency (self-test)");
  cmd->add_option("--runner-config", f.runnerConfig, "JSON file declaring ext:NAME runners (docs/runners.md)");
  cmd->add_option("--work-dir", f.workDir, "keep artifacts, inputs and outputs here (default: a temp folder, removed)");
  cmd->add_option("--format", f.format, "stdout format")->check(CLI::IsMember({"md", "json", "junit", "html"}))->capture_default_str();
  cmd->add_option("--out", f.outDir, "also write report.md, report.json, junit.xml and report.html into this folder");
  cmd->add_option("--db", f.db, "results database (default: $DYNQUAL_DB, else ./dynqual.db)");
  cmd->add_flag("--no-db", f.noDb, "do not record the run");
  cmd->add_option("--clock", f.clock,
                  "clock of the timing samples: wall, thread-cpu (CPU time of the runtime thread; dq arms on "
                  "sim), process-cpu (CPU time of the runner process on one onnxruntime thread; runner arms of "
                  "runner protocol 2), or auto (thread-cpu when both arms are dq on sim, process-cpu when both "
                  "are runners of protocol 2, else wall); docs/metrics/gate-decision.md")
      ->check(CLI::IsMember({"auto", "wall", "thread-cpu", "process-cpu"}))->capture_default_str();
  cmd->add_option("--interleave", f.interleave,
                  "process (each ABBA position is its own process), sample (one serving process per arm and "
                  "round, both on one CPU, sampled in alternation; runner arms of runner protocol 3), or auto "
                  "(sample when both arms can serve, else process); docs/metrics/gate-decision.md")
      ->check(CLI::IsMember({"auto", "process", "sample"}))->capture_default_str();
  cmd->add_option("--round-value", f.roundValue,
                  "each arm's value in a round: min (the fastest sample), lower-half-mean (the mean of the "
                  "fastest half), or auto (lower-half-mean with --interleave sample, else min); "
                  "docs/metrics/round-value.md")
      ->check(CLI::IsMember({"auto", "min", "lower-half-mean"}))->capture_default_str();
  auto notEmpty = CLI::Validator(
      [](std::string& v) { return v.empty() ? std::string("needs a folder") : std::string(); }, "DIR");
  cmd->add_option("--prepare-device", f.prepareDevice,
                  "compile both arms' plans into this new folder for a device machine without the compiler, and "
                  "stop (dq arms on one device; docs/commands/ab.md, \"On a GPU machine\")")
      ->check(notEmpty);
  cmd->add_option("--import-device", f.importDevice,
                  "analyse and record the folder device_ab.py wrote on the device machine (the suite, arms and "
                  "schedule come from its plan)")
      ->check(notEmpty);
  cmd->add_option("--pin-cpu", f.pinCpu,
                  "CPU both arms run on when interleaving samples: auto (the last CPU this process may use), "
                  "none, or a CPU number")
      ->capture_default_str();
  cmd->add_flag("--compile-time", f.compileTime,
               "also time compiles: each round compiles every model once per arm in fresh processes, and "
               "compile time goes through the same statistics (dq arms only)");
  cmd->add_option("--compile-timeout", f.compileTimeout, "seconds allowed for each compile")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--run-timeout", f.runTimeout, "seconds allowed for each run process")
      ->check(CLI::PositiveNumber)->capture_default_str();
}

exec::Arm makeArm(const std::string& label, const std::string& text, const std::string& flag) {
  exec::Arm arm;
  arm.label = label;
  try {
    arm.variant = exec::parseVariant(text);
  } catch (const exec::VariantError& e) {
    throw UsageError(flag + ": " + e.what());
  }
  arm.binDir = exec::selfBinDir();
  return arm;
}

void emitAbReport(const AbFlags& f, const diff::AbResult& r, const reports::GateContext& ctx) {
  std::string md = reports::renderGateMarkdown(r, ctx);
  std::string js = reports::renderGateJson(r, ctx).dump(2) + "\n";
  std::string ju = reports::renderGateJunit(r, ctx);
  std::string html;
  if (f.format == "html" || !f.outDir.empty()) {
    try {
      html = reports::renderGateHtml(r, ctx, reports::defaultChartJsPath());
    } catch (const std::exception& e) {
      std::cerr << "dynqual: no HTML page: " << e.what() << "\n";
    }
  }
  std::cout << (f.format == "json" ? js : f.format == "junit" ? ju : f.format == "html" ? html : md);
  if (!f.outDir.empty()) {
    for (const auto& [name, text] :
         {std::pair{"report.md", &md}, {"report.json", &js}, {"junit.xml", &ju}, {"report.html", &html}}) {
      if (text->empty())
        continue;
      std::ofstream out(fs::path(f.outDir) / name);
      out << *text;
      if (!out)
        std::cerr << "dynqual: cannot write " << (fs::path(f.outDir) / name).string() << "\n";
    }
  }
}

namespace {

std::map<std::string, double> parseInject(const std::vector<std::string>& items) {
  std::map<std::string, double> out;
  for (const auto& s : items) {
    auto eq = s.find('=');
    double pct = -1;
    try {
      if (eq != std::string::npos)
        pct = std::stod(s.substr(eq + 1));
    } catch (const std::exception&) {
    }
    if (eq == std::string::npos || eq == 0 || pct < 0)
      throw UsageError("--inject-slowdown '" + s + "': expected MODEL=PERCENT with PERCENT >= 0");
    out[s.substr(0, eq)] = pct;
  }
  return out;
}

/// The clock `choice` (auto, wall, thread-cpu, process-cpu) names for these arms. A CPU clock
/// leaves out the time other processes take from a run, but each kind of arm reads its own scope:
/// dq on sim the runtime's thread (all of a sim run's work), a runner its whole process (run on
/// one onnxruntime thread). Those readings are not comparable with each other, so auto picks a
/// CPU clock only when both arms read the same one, and wall otherwise (dq against ort, hip,
/// protocol 1 binaries or runners). Throws UsageError when a forced CPU clock is asked of an arm
/// that cannot provide it.
exec::TimingClock resolveClock(const std::string& choice, const exec::Arm& base, const exec::Arm& head,
                               exec::Executor& executor) {
  using exec::TimingClock;
  if (choice == "wall")
    return TimingClock::Wall;
  auto cpuClockOf = [](const exec::Arm& a) {
    return a.variant.kind == exec::Variant::Kind::Dq ? TimingClock::ThreadCpu : TimingClock::ProcessCpu;
  };
  auto whyNot = [&](const exec::Arm& a, TimingClock c) -> std::string {
    // Other devices work outside the runtime's thread, so its CPU time would miss their work.
    if (c == TimingClock::ThreadCpu && (a.variant.kind != exec::Variant::Kind::Dq || a.variant.device != "sim"))
      return a.label + " arm '" + a.variant.text() + "' is not dq on sim";
    return executor.clockUnavailable(a, c);  // an unusable arm is reported by the engine itself
  };
  if (choice == "auto") {
    TimingClock c = cpuClockOf(base);
    if (cpuClockOf(head) != c || !whyNot(base, c).empty() || !whyNot(head, c).empty())
      return TimingClock::Wall;
    return c;
  }
  TimingClock c = exec::parseTimingClock(choice);
  for (const exec::Arm* a : {&base, &head})
    if (std::string why = whyNot(*a, c); !why.empty())
      throw UsageError("--clock " + choice + ": " + why);
  return c;
}

/// The interleaving `choice` (auto, process, sample) names for these arms: sample needs both arms
/// to serve samples (Executor::canServe). Throws UsageError when sample is forced on an arm that
/// cannot.
diff::Interleave resolveInterleave(const std::string& choice, const exec::Arm& base, const exec::Arm& head,
                                   exec::Executor& executor) {
  if (choice == "process")
    return diff::Interleave::Process;
  auto whyNot = [&](const exec::Arm& a) -> std::string {
    try {
      return executor.canServe(a) ? "" : a.label + " arm '" + a.variant.text() + "' cannot serve samples (it needs a runner "
                                                                                 "of runner protocol 3 passing {serve})";
    } catch (const exec::ExecError& e) {
      return e.what();
    }
  };
  std::string why = whyNot(base);
  if (why.empty())
    why = whyNot(head);
  if (choice == "auto")
    return why.empty() ? diff::Interleave::Sample : diff::Interleave::Process;
  if (!why.empty())
    throw UsageError("--interleave sample: " + why);
  return diff::Interleave::Sample;
}

/// The CPU of --pin-cpu: auto = the last CPU this process may run on, none = -1, or a number that
/// must be one this process may run on. Throws UsageError for anything else.
int resolvePinCpu(const std::string& choice) {
  if (choice == "none")
    return -1;
  int last = process::lastAllowedCpu();
  if (choice == "auto")
    return last;
  int cpu = -1;
  auto [end, ec] = std::from_chars(choice.data(), choice.data() + choice.size(), cpu);
  if (ec != std::errc() || end != choice.data() + choice.size() || cpu < 0)
    throw UsageError("--pin-cpu '" + choice + "': expected auto, none or a CPU number");
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof set, &set) != 0 || !CPU_ISSET(cpu, &set))
    throw UsageError("--pin-cpu " + choice + ": this process may not run on CPU " + choice);
  return cpu;
}

/// Rounds a calibrated noise asks for: the HL interval's half-width is about z * 1.05 * sigma /
/// sqrt(n) (docs/metrics/noise.md), and "no change" needs it below the margin, so
/// n = ceil((z * 1.05 * sigma / m)^2), z the normal quantile at the smallest per-comparison alpha.
std::vector<std::string> sizingFromCalibration(store::Store& db, const std::string& machine,
                                               const std::vector<fs::path>& models, const diff::Policy& p,
                                               const std::string& metric) {
  std::vector<std::string> notes;
  if (models.empty())
    return notes;
  stats::LookSchedule schedule;
  schedule.rounds = p.looks;
  double alpha = schedule.alphaAt(0, p.alpha) / static_cast<double>(models.size());
  double z = boost::math::quantile(boost::math::complement(boost::math::normal(), alpha / 2));
  for (const auto& m : models) {
    auto history = diff::noiseHistory(db, machine, m.filename().string(), metric);
    if (history.empty())
      continue;
    double sigma = history.back().scaledMad;
    int need = static_cast<int>(std::ceil(std::pow(z * 1.05 * sigma / std::max(p.margin, 1e-9), 2)));
    notes.push_back(fmt::format("{}: calibrated noise {:.2f}% per round asks for about {} rounds to settle within "
                                "+-{}%{}",
                                m.filename().string(), sigma * 100, need, p.margin * 100,
                                need > p.looks.back() ? fmt::format(" -- more than the last look ({}); expect "
                                                                    "inconclusive, or lengthen --looks",
                                                                    p.looks.back())
                                                      : ""));
  }
  return notes;
}

/// Models whose noise in this run (scaled MAD of the per-round log ratios, docs/metrics/noise.md)
/// is more than twice the median of their calibrations on this machine: the machine is noisier
/// than its history, so an inconclusive verdict says more about the machine than the change.
std::vector<std::string> noisierThanHistory(store::Store& db, const std::string& machine, const diff::AbResult& r) {
  std::vector<std::string> notes;
  for (const auto& n : diff::estimateNoise(r.samples, r.roundValue)) {
    auto history = diff::noiseHistory(db, machine, n.model, diff::timingMetric(r.clock));
    if (history.empty())
      continue;
    std::vector<double> past;
    for (const auto& h : history)
      past.push_back(h.scaledMad);
    double typical = stats::median(past);
    if (n.scaledMad > 2 * typical)
      notes.push_back(fmt::format("{}: this run's noise {:.2f}% per round is more than twice its calibrated {:.2f}% "
                                  "on this machine: the machine is noisier than its history",
                                  n.model, n.scaledMad * 100, typical * 100));
  }
  return notes;
}

} // namespace

int runAbCommand(const std::string& kind, const AbFlags& f, diff::AbOptions o,
                 const std::map<std::string, std::string>& extraParams,
                 const std::function<void(int64_t, const diff::AbResult&, const std::string&)>& afterRecord) {
  // Everything that can be wrong with the request fails here, before any work.
  std::vector<fs::path> suites(f.suites.begin(), f.suites.end());
  std::vector<fs::path> models;
  std::optional<DeviceAbPlan> devicePlan;
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
  o.models = models;
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
  o.measure.injectSlowdownPercent = parseInject(f.inject);
  o.measure.compileTime = f.compileTime;
  if (f.compileTime && (o.base.variant.kind != exec::Variant::Kind::Dq || o.head.variant.kind != exec::Variant::Kind::Dq))
    throw UsageError("--compile-time needs two dq arms: a runner's compile is not a separate step");
  for (const auto& [model, pct] : o.measure.injectSlowdownPercent) {
    if (std::none_of(models.begin(), models.end(), [&](const fs::path& m) { return m.filename() == model; }))
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
    if (!f.prepareDevice.empty() && (f.pinCpu != "auto" || f.minSampleMs != 0 || f.roundValue != "auto"))
      throw UsageError("--prepare-device: --pin-cpu belongs to device_ab.py, a device sample is one run "
                       "(no --min-sample-ms), and --round-value is given at --import-device");
    if (f.clock != "auto" && f.clock != "wall")
      throw UsageError("a device run reads wall time: --clock " + f.clock + " is not available there");
    if (f.compileTime)
      throw UsageError("--compile-time is not available with a device run");
  }
  if (!f.prepareDevice.empty()) {
    // One dq-run process holds both programs and alternates them, unless asked for a process per
    // ABBA position (docs/commands/ab.md, "On a GPU machine").
    const bool sample = f.interleave != "process";
    o.measure.interleave = sample ? diff::Interleave::Sample : diff::Interleave::Process;
    o.measure.samplesPerPosition = f.samples == 0 ? (sample ? 20 : 5) : f.samples;
    if (f.looks.empty() && sample)
      o.policy.looks = stats::kSampleInterleaveLookRounds;
    try {
      return prepareAbDevice(kind, o, f.suites, f.prepareDevice) > 0 ? diff::kRegression : diff::kPass;
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
  }
  if (devicePlan) {
    o.measure.samplesPerPosition = devicePlan->samples;
    o.measure.warmup = devicePlan->warmup;
    o.measure.budgetSeconds = devicePlan->budgetSeconds;
    o.measure.injectSlowdownPercent = devicePlan->injectSlowdownPercent;
  }
  if (!f.outDir.empty()) {
    std::error_code ec;
    fs::create_directories(f.outDir, ec);
    std::ofstream probe(fs::path(f.outDir) / "report.md");
    if (!probe)
      throw UsageError("--out " + f.outDir + ": cannot write there");
  }
  if (!f.runnerConfig.empty() && !fs::exists(f.runnerConfig))
    throw UsageError("--runner-config " + f.runnerConfig + ": no such file");
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
  o.measure.clock = devicePlan ? exec::TimingClock::Wall : resolveClock(f.clock, o.base, o.head, executor);
  o.measure.interleave = devicePlan ? devicePlan->interleave : resolveInterleave(f.interleave, o.base, o.head, executor);
  bool sampleInterleave = o.measure.interleave == diff::Interleave::Sample;
  o.measure.cpu = devicePlan ? devicePlan->cpu : sampleInterleave ? resolvePinCpu(f.pinCpu) : -1;
  // Serving processes start once per round, so more and longer samples cost little there.
  if (f.samples == 0 && !devicePlan)
    o.measure.samplesPerPosition = sampleInterleave ? 20 : 5;
  if (f.minSampleMs == 0)
    o.measure.minSampleMs = devicePlan ? 0.0 : sampleInterleave ? 4.0 : 1.0;  // device samples: one run each
  if (f.looks.empty() && sampleInterleave && !devicePlan)
    o.policy.looks = stats::kSampleInterleaveLookRounds;
  // Sample interleaving takes 40 short samples per arm and round: their fastest half is a steadier
  // round value than their single fastest (docs/metrics/round-value.md).
  o.policy.roundValue = f.roundValue == "auto"
                            ? (sampleInterleave ? diff::RoundValue::LowerHalfMean : diff::RoundValue::Min)
                            : diff::parseRoundValue(f.roundValue);

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
  for (const auto& [m, pct] : o.measure.injectSlowdownPercent)
    params["inject_slowdown." + m] = fmt::format("{}", pct);
  if (devicePlan)
    params["device_results"] = fs::absolute(f.importDevice).lexically_normal().string();
  store::RunRecord header =
      store::newRunHeader(kind, o.head.variant.device, o.head.variant.text(), {exec::selfBinDir() / "dynqual"}, params);
  if (devicePlan) {
    try {
      header.machine = deviceAbMachine(f.importDevice);
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
  }
  int64_t runId = 0;
  std::string recordError;
  try {
    if (db)
      runId = db->beginRun(header);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }

  std::vector<std::string> sizing;
  if (db) {
    try {
      sizing = sizingFromCalibration(*db, header.machine.fingerprint, models, o.policy,
                                     diff::timingMetric(o.measure.clock));
    } catch (const std::exception& e) {
      sizing.push_back(std::string("calibration history unreadable: ") + e.what());
    }
    for (const auto& n : sizing)
      std::cerr << "dynqual " << kind << ": " << n << "\n";
  }
  diff::AbResult r;
  if (devicePlan) {
    try {
      r = importAbDevice(f.importDevice, *devicePlan, o, work);
    } catch (const std::exception& e) {
      throw UsageError(e.what());  // the run stays "unfinished" in the store
    }
  } else {
    r = diff::runAb(o, executor, [&](const std::string& line) {
      if (o.progress)
        std::cerr << "\r\033[K" << line << std::flush;
    });
  }
  if (o.progress)
    std::cerr << "\r\033[K";
  r.warnings.insert(r.warnings.end(), sizing.begin(), sizing.end());
  if (db) {
    try {
      for (const auto& n : noisierThanHistory(*db, header.machine.fingerprint, r))
        r.warnings.push_back(n);
    } catch (const std::exception& e) {
      r.warnings.push_back(std::string("calibration history unreadable: ") + e.what());
    }
  }
  if (db) {
    try {
      diff::recordAbResult(*db, runId, r);
      if (afterRecord)
        afterRecord(runId, r, header.machine.fingerprint);
      db->finishRun(runId);
    } catch (const std::exception& e) {
      recordError = e.what();
    }
  }
  reports::GateContext ctx{kind, o.base.variant.text(), o.head.variant.text(), o.policy, o.measure, runId};
  if (extraParams.count("base_rev"))
    ctx.baseLabel += " @ " + extraParams.at("base_rev");
  if (extraParams.count("head_rev"))
    ctx.headLabel += " @ " + extraParams.at("head_rev");
  emitAbReport(f, r, ctx);
  if (tempWork)
    fs::remove_all(work);
  std::cerr << "dynqual " << kind << ": " << diff::verdictLine(r) << "\n";
  if (!recordError.empty()) {
    std::cerr << "dynqual " << kind << ": recording into the store failed (results above are complete): "
              << recordError << "\n";
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
