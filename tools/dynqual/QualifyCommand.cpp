// `dynqual qualify`: the main job. Each model runs in its own `dynqual qualify-one` process with a
// time limit; the parent collects each child's report and store records, prints the accuracy and
// performance tables and records the run into the results store.
#include "Commands.h"

#include "dq/runtime/Device.h"
#include "QualifyDevice.h"

#include "dynqual/compare/Compare.h"
#include "dynqual/qualify/DevicePlan.h"
#include "dynqual/qualify/QualifyModel.h"
#include "dynqual/qualify/Suite.h"
#include "dynqual/run/ModelRun.h"
#include "dynqual/store/Fingerprint.h"
#include "dynqual/store/RunRecording.h"
#include "dynqual/store/Store.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace dynqual::cli {

namespace {

fs::path selfExe() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path("dynqual") : self;
}

/// Options shared by qualify and qualify-one.
struct CommonOpts {
  std::string device = "sim", pipeline = "production", exec;
  int reps = 10, warmup = 1, bindings = 4;
  uint64_t seed = 1;
  double execTimeout = 120;
};

void addCommon(CLI::App* cmd, CommonOpts& o) {
  cmd->add_option("--device", o.device,
                  "device to run on (" + dq::rt::deviceNames() + "; hip in a build with DYNQUAL_WITH_HIP)")
      ->capture_default_str();
  cmd->add_option("--pipeline", o.pipeline,
                  "'production', 'production{inject=KNOB}' (docs/fuzz/knobs.md) or an MLIR pass-pipeline spec")
      ->capture_default_str();
  cmd->add_option("--reps", o.reps, "timed repetitions per model (at least 1)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "untimed runs after the first inference")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--bindings", o.bindings, "extra shape bindings per dynamic model")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed for generated inputs and random bindings")->capture_default_str();
  cmd->add_option("--exec-timeout", o.execTimeout, "seconds allowed for each runtime process")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--exec", o.exec, "dynqual-exec binary (default: beside dynqual)");
}

/// Every device of this runtime is accepted; "hip" without the HIP build says how to get it.
void checkDevice(const std::string& device) {
  dq::rt::createDevice(device);
}

fs::path execPath(const CommonOpts& o) {
  fs::path p = o.exec.empty() ? selfExe().parent_path() / "dynqual-exec" : fs::path(o.exec);
  if (!fs::exists(p))
    throw std::runtime_error(p.string() + ": runtime executable not found (use --exec)");
  return p;
}

/// The device machine's own description (gpu.txt, written by scripts/gpu-qualify.sh: name,
/// driver, clocks), one line; "" when absent.
std::string deviceMachine(const fs::path& resultsDir) {
  std::ifstream in(resultsDir / "gpu.txt");
  std::string line, all;
  while (std::getline(in, line))
    if (!line.empty())
      all += (all.empty() ? "" : "; ") + line;
  return all;
}

void addQualifyOne(CLI::App& app) {
  auto* cmd = app.add_subcommand("qualify-one", "one model of `dynqual qualify` (internal; prints JSON)");
  cmd->group(""); // hidden from --help
  struct Opts : CommonOpts {
    std::string model, workDir, prepare, replay;
    int planIndex = -1;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("model", o->model, "model folder")->required();
  cmd->add_option("--work-dir", o->workDir, "artifacts and inputs go here")->required();
  cmd->add_option("--prepare", o->prepare, "write this model's cases into the device plan folder; print its entry");
  cmd->add_option("--replay", o->replay, "take outputs and timings from this device-results folder");
  cmd->add_option("--plan-index", o->planIndex, "the model's index in the device plan");
  addCommon(cmd, *o);
  cmd->callback([o] {
    try {
      QualifySettings s{o->device, o->pipeline, o->reps, o->warmup, o->bindings, o->seed, o->execTimeout};
      if (!o->prepare.empty() || !o->replay.empty()) {
        if (o->planIndex < 0 || (!o->prepare.empty() && !o->replay.empty()))
          throw std::runtime_error("--prepare or --replay, with --plan-index");
        json j = o->prepare.empty() ? replayOne(o->model, s, o->planIndex, o->workDir, o->replay)
                                    : prepareOne(o->model, s, o->planIndex, o->prepare);
        std::cout << j.dump() << "\n";
        setExitCode(0);
        return;
      }
      checkDevice(o->device);
      qualify::QualifyConfig config;
      config.run.device = o->device;
      config.run.compare = compare::gatesForDevice(o->device);
      config.run.pipeline = o->pipeline;
      config.run.extraBindings = o->bindings;
      config.run.seed = o->seed;
      config.run.execTimeoutSeconds = o->execTimeout;
      config.run.execPath = execPath(*o);
      config.run.workDir = o->workDir;
      config.reps = o->reps;
      config.warmup = o->warmup;
      auto q = qualify::qualifyModel(o->model, config, timedCompile());
      std::cout << qualify::toJson(q, config).dump() << "\n";
      setExitCode(0);
    } catch (const std::exception& e) {
      std::cerr << "dynqual qualify-one: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace

void addQualifyCommand(CLI::App& app) {
  addQualifyOne(app);
  auto* cmd = app.add_subcommand(
      "qualify", "The main job: for each model of the suites, in its own process with a time limit, compile\n"
                 "once, run every data set and extra shape binding against the CPU reference, then time\n"
                 "repetitions. Prints the L2 accuracy and performance tables and records the run.\n"
                 "SUITE is a model folder or a folder of them (default: the embedded suite).\n"
                 "Exit: 0 every tried model passed, 1 a model failed or crashed, 2 usage or input error (also\n"
                 "when the only failed models are input errors: model.onnx or a data set that cannot be used).");
  struct Opts : CommonOpts {
    std::vector<std::string> suites;
    std::string format = "text", workDir, prepare, importDir;
    std::string db = store::defaultDbPath().string();
    double timeout = 600;
    bool noDb = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("suites", o->suites, "suite folders (default: corpus, ONNX node tests, ../shared/models)")
      ->check(CLI::ExistingDirectory);
  addCommon(cmd, *o);
  cmd->add_option("--timeout", o->timeout, "seconds allowed for each model's process")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--format", o->format, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--work-dir", o->workDir, "keep artifacts and inputs here (default: a temp folder, removed)");
  cmd->add_option("--db", o->db, "record the run into this results database (default: $DYNQUAL_DB, else ./dynqual.db)")
      ->default_str(o->db);
  cmd->add_flag("--no-db", o->noDb, "do not record the run");
  auto* prep = cmd->add_option("--prepare", o->prepare,
                               "compile the suite for --device and write its inputs and a manifest into this new "
                               "folder, for a device on another machine (docs/commands/qualify.md)");
  cmd->add_option("--import-device-results", o->importDir,
                  "qualify from the results the device machine wrote (manifest.json, results.jsonl, outputs); "
                  "suite and settings come from the manifest")
      ->check(CLI::ExistingDirectory)
      ->excludes(prep);
  cmd->callback([o] {
    try {
      fs::path self = selfExe();
      fs::path exec = execPath(*o);
      QualifySettings settings{o->device,   o->pipeline, o->reps,        o->warmup,
                               o->bindings, o->seed,     o->execTimeout, o->timeout};
      std::vector<fs::path> suites(o->suites.begin(), o->suites.end());
      std::vector<fs::path> models;
      std::optional<qualify::DeviceResults> device;
      if (!o->importDir.empty()) {
        if (!o->suites.empty())
          throw UsageError("--import-device-results takes the suite from its manifest; give no SUITE");
        device = qualify::DeviceResults::load(o->importDir);
        settings = settingsOfPlan(device->manifest());
        for (const auto& seen : device->devicesSeen())
          if (seen != settings.device)
            throw std::runtime_error(o->importDir + ": the results come from device '" + seen +
                                     "' but the plan was prepared for '" + settings.device + "'");
        suites.clear();
        for (const auto& p : device->manifest().at("suites"))
          suites.emplace_back(p.get<std::string>());
        for (const auto& m : device->manifest().at("models"))
          models.emplace_back(m.at("dir").get<std::string>());
      } else {
        // A plan is run elsewhere: the device need not exist here.
        if (o->prepare.empty())
          checkDevice(o->device);
        if (suites.empty())
          suites = qualify::embeddedSuite(self);
        if (suites.empty())
          throw std::runtime_error("no suite given and the embedded suite was not found (pass SUITE folders)");
        models = run::expandModelDirs(suites);
      }
      if (!o->prepare.empty()) {
        int failed = prepareSuite(self, suites, models, settings, o->prepare);
        setExitCode(failed > 0 ? 1 : 0);
        return;
      }
      std::unique_ptr<store::Store> db;
      if (!o->noDb)
        db = std::make_unique<store::Store>(o->db);
      bool tempWork = o->workDir.empty();
      fs::path work = tempWork ? makeTempWorkDir("qualify") : fs::path(o->workDir);
      fs::create_directories(work);

      std::string pipelineSpec = settings.pipeline;
      const compare::CompareOptions gates = compare::gatesForDevice(settings.device);
      std::map<std::string, std::string> params = {
          {"reps", std::to_string(settings.reps)},
          {"warmup", std::to_string(settings.warmup)},
          {"bindings", std::to_string(settings.bindings)},
          {"seed", std::to_string(settings.seed)},
          {"rel_l2_gate", fmt::format("{}", gates.relL2Gate)},
          {"rel_l2_gate_f16", fmt::format("{}", gates.relL2GateFor(DType::Float16))},
          {"rel_l2_gate_bf16", fmt::format("{}", gates.relL2GateFor(DType::BFloat16))},
          {"model_timeout_s", fmt::format("{}", settings.modelTimeout)}};
      std::string deviceDescription;
      if (device) {
        deviceDescription = device->deviceDescription();
        params["device_results"] = fs::absolute(o->importDir).lexically_normal().string();
        params["device_description"] = deviceDescription;
        params["device_machine"] = deviceMachine(o->importDir);
        params["prepared"] = device->manifest().value("created", "");
      }
      store::RunRecord header = store::newRunHeader("qualify", settings.device, pipelineSpec, {self, exec}, params);
      int64_t runId = db ? db->beginRun(header) : 0;

      RecordGuard record(db);
      bool progress = isatty(STDERR_FILENO);
      auto start = std::chrono::steady_clock::now();
      std::vector<json> entries;
      std::string compilerVersion;
      for (size_t i = 0; i < models.size(); ++i) {
        // Models of different suites may share a folder name: one work folder per index.
        std::vector<std::string> argv = {self.string(), "qualify-one", models[i].string(), "--work-dir",
                                         (work / std::to_string(i)).string()};
        if (device)
          for (const std::string& a :
               {std::string("--replay"), o->importDir, std::string("--plan-index"), std::to_string(i)})
            argv.push_back(a);
        for (auto& a : qualifyOneArgs(settings, exec))
          argv.push_back(a);
        qualify::ModelEntry entry = qualify::qualifyInChild(argv, models[i], settings.modelTimeout);
        if (compilerVersion.empty())
          compilerVersion = entry.report.value("compiler_version", "");
        if (entry.report.value("pipeline_spec", "") != "")
          pipelineSpec = entry.report["pipeline_spec"].get<std::string>();
        record([&] { // one transaction per model
          db->recordCases(runId, entry.cases);
        });
        entries.push_back(std::move(entry.report));
        if (progress) {
          double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          std::cerr << fmt::format("[{}/{}] {:.1f}s {} {}\n", i + 1, models.size(), s, models[i].filename().string(),
                                   entries.back()["model"].value("status", "FAIL"));
        }
      }
      double wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (tempWork)
        fs::remove_all(work);
      record([&] { db->finishRun(runId); });
      bool failed = std::any_of(entries.begin(), entries.end(), qualify::entryFailed);
      if (o->format == "json") {
        json m = header.machine.fingerprint.empty() ? json::object()
                                                    : json{{"fingerprint", header.machine.fingerprint},
                                                           {"cpu_model", header.machine.cpuModel},
                                                           {"cores", header.machine.cores},
                                                           {"memory_bytes", header.machine.memoryBytes},
                                                           {"os", header.machine.os}};
        std::vector<std::string> suiteNames;
        for (const auto& s : suites)
          suiteNames.push_back(s.string());
        json doc = {{"format", "dynqual-qualify"},
                    {"version", 1},
                    {"machine", m},
                    {"compiler_version", compilerVersion},
                    {"pipeline", settings.pipeline},
                    {"pipeline_spec", pipelineSpec},
                    {"device", settings.device},
                    {"suites", suiteNames},
                    {"settings",
                     {{"reps", settings.reps},
                      {"warmup", settings.warmup},
                      {"bindings", settings.bindings},
                      {"seed", settings.seed},
                      {"timeout_s", settings.modelTimeout}}},
                    {"gates",
                     {{"f32", gates.relL2Gate},
                      {"f16", gates.relL2GateFor(DType::Float16)},
                      {"bf16", gates.relL2GateFor(DType::BFloat16)}}},
                    {"wall_s", wallS},
                    {"failed", failed},
                    {"models", entries}};
        if (device)
          doc["device_run"] = {{"results", params["device_results"]},
                               {"description", deviceDescription},
                               {"machine", params["device_machine"]}};
        std::cout << doc.dump(2) << "\n";
      } else {
        if (device)
          std::cout << fmt::format("device {}{}{} (results from {}, prepared {})\n\n", settings.device,
                                   deviceDescription.empty() ? "" : ": " + deviceDescription,
                                   params["device_machine"].empty() ? "" : "; " + params["device_machine"],
                                   o->importDir, params["prepared"]);
        qualify::renderTables(std::cout, entries);
        std::cout << fmt::format("wall time {:.1f} s\n", wallS);
      }
      int tried = static_cast<int>(std::count_if(
          entries.begin(), entries.end(), [](const json& e) { return e["model"].value("status", "FAIL") != "skip"; }));
      bool inputErrors = std::any_of(entries.begin(), entries.end(), qualify::entryInputError);
      if (db && record.error().empty())
        std::cerr << "dynqual qualify: recorded run " << runId << " into "
                  << fs::absolute(o->db).lexically_normal().string() << "\n";
      finishSuiteCommand("qualify", tried, failed || inputErrors ? 1 : 0, record.error(), runId);
      // Bad input (a model or data file that cannot be used) is exit 2, as a usage error is; a
      // compiler failure elsewhere in the suite keeps 1.
      if (!failed && inputErrors && record.error().empty()) {
        std::cerr << "dynqual qualify: input errors only (bad model or data files, listed above): exit 2\n";
        setExitCode(2);
      }
    } catch (const std::exception& e) {
      std::cerr << "dynqual qualify: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
