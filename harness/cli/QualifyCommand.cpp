// `dynqual qualify`: the main job. Each model runs in its own `dynqual qualify-one` process with a
// time limit; the parent collects each child's report and store records, prints the accuracy and
// performance tables and records the run into the results store.
#include "Commands.h"

#include "dq/runtime/Device.h"
#include "CompileBridge.h"

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
#include <functional>
#include <iostream>
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
  cmd->add_option("--device", o.device, "device to run on (sim, or hip when built with DYNQUAL_WITH_HIP)")->capture_default_str();
  cmd->add_option("--pipeline", o.pipeline, "'production', 'production{inject=KNOB}' (docs/fuzz/knobs.md) or an MLIR pass-pipeline spec")->capture_default_str();
  cmd->add_option("--reps", o.reps, "timed repetitions per model (at least 1)")->check(CLI::Range(1, 1000000))->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "untimed runs after the first inference")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--bindings", o.bindings, "extra shape bindings per dynamic model")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed for generated inputs and random bindings")->capture_default_str();
  cmd->add_option("--exec-timeout", o.execTimeout, "seconds allowed for each runtime process")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--exec", o.exec, "dynqual-exec binary (default: beside dynqual)");
}

/// Every device of this runtime is accepted; "hip" without the HIP build says how to get it.
void checkDevice(const std::string& device) { dq::rt::createDevice(device); }

fs::path execPath(const CommonOpts& o) {
  fs::path p = o.exec.empty() ? selfExe().parent_path() / "dynqual-exec" : fs::path(o.exec);
  if (!fs::exists(p))
    throw std::runtime_error(p.string() + ": runtime executable not found (use --exec)");
  return p;
}

std::vector<std::string> commonArgs(const CommonOpts& o, const fs::path& exec) {
  return {"--device", o.device, "--pipeline", o.pipeline, "--reps", std::to_string(o.reps),
          "--warmup", std::to_string(o.warmup), "--bindings", std::to_string(o.bindings),
          "--seed", std::to_string(o.seed), "--exec-timeout", fmt::format("{}", o.execTimeout),
          "--exec", exec.string()};
}

void addQualifyOne(CLI::App& app) {
  auto* cmd = app.add_subcommand("qualify-one", "one model of `dynqual qualify` (internal; prints JSON)");
  cmd->group("");  // hidden from --help
  struct Opts : CommonOpts {
    std::string model, workDir;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("model", o->model, "model folder")->required();
  cmd->add_option("--work-dir", o->workDir, "artifacts and inputs go here")->required();
  addCommon(cmd, *o);
  cmd->callback([o] {
    try {
      checkDevice(o->device);
      qualify::QualifyConfig config;
      config.run.device = o->device;
      config.run.pipeline = o->pipeline;
      config.run.extraBindings = o->bindings;
      config.run.seed = o->seed;
      config.run.execTimeoutSeconds = o->execTimeout;
      config.run.execPath = execPath(*o);
      config.run.workDir = o->workDir;
      config.reps = o->reps;
      config.warmup = o->warmup;
      qualify::TimedCompileFn compile = [](const onnx::ModelProto& m, const std::string& pipeline,
                                           const fs::path& artifact) {
        CompileRequest req;
        req.pipeline = pipeline;
        req.timing = true;
        return compileModel(m, req, artifact).passMs;
      };
      auto q = qualify::qualifyModel(o->model, config, compile);
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
                 "Exit: 0 every tried model passed, 1 a model failed or crashed, 2 usage or input error.");
  struct Opts : CommonOpts {
    std::vector<std::string> suites;
    std::string format = "text", workDir;
    std::string db = store::defaultDbPath().string();
    double timeout = 600;
    bool noDb = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("suites", o->suites, "suite folders (default: corpus, ONNX node tests, ../shared/models)")
      ->check(CLI::ExistingDirectory);
  addCommon(cmd, *o);
  cmd->add_option("--timeout", o->timeout, "seconds allowed for each model's process")
      ->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--format", o->format, "output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  cmd->add_option("--work-dir", o->workDir, "keep artifacts and inputs here (default: a temp folder, removed)");
  cmd->add_option("--db", o->db, "record the run into this results database (default: $DYNQUAL_DB, else ./dynqual.db)")
      ->default_str(o->db);
  cmd->add_flag("--no-db", o->noDb, "do not record the run");
  cmd->callback([o] {
    try {
      checkDevice(o->device);
      fs::path self = selfExe();
      fs::path exec = execPath(*o);
      std::vector<fs::path> suites(o->suites.begin(), o->suites.end());
      if (suites.empty())
        suites = qualify::embeddedSuite(self);
      if (suites.empty())
        throw std::runtime_error("no suite given and the embedded suite was not found (pass SUITE folders)");
      auto models = run::expandModelDirs(suites);
      std::unique_ptr<store::Store> db;
      if (!o->noDb)
        db = std::make_unique<store::Store>(o->db);
      bool tempWork = o->workDir.empty();
      fs::path work = tempWork ? makeTempWorkDir("qualify") : fs::path(o->workDir);
      fs::create_directories(work);

      std::string pipelineSpec = o->pipeline;
      store::RunRecord header = store::newRunHeader(
          "qualify", o->device, pipelineSpec, {self, exec},
          {{"reps", std::to_string(o->reps)}, {"warmup", std::to_string(o->warmup)},
           {"bindings", std::to_string(o->bindings)}, {"seed", std::to_string(o->seed)},
           {"rel_l2_gate", fmt::format("{}", compare::CompareOptions{}.relL2Gate)},
           {"model_timeout_s", fmt::format("{}", o->timeout)}});
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
        for (auto& a : commonArgs(*o, exec))
          argv.push_back(a);
        qualify::ModelEntry entry = qualify::qualifyInChild(argv, models[i], o->timeout);
        if (compilerVersion.empty())
          compilerVersion = entry.report.value("compiler_version", "");
        if (entry.report.value("pipeline_spec", "") != "")
          pipelineSpec = entry.report["pipeline_spec"].get<std::string>();
        record([&] {  // one transaction per model
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
        json m = header.machine.fingerprint.empty() ? json::object() : json{
            {"fingerprint", header.machine.fingerprint}, {"cpu_model", header.machine.cpuModel},
            {"cores", header.machine.cores}, {"memory_bytes", header.machine.memoryBytes}, {"os", header.machine.os}};
        std::vector<std::string> suiteNames;
        for (const auto& s : suites)
          suiteNames.push_back(s.string());
        json doc = {{"format", "dynqual-qualify"}, {"version", 1}, {"machine", m},
                    {"compiler_version", compilerVersion}, {"pipeline", o->pipeline},
                    {"pipeline_spec", pipelineSpec}, {"device", o->device}, {"suites", suiteNames},
                    {"settings", {{"reps", o->reps}, {"warmup", o->warmup}, {"bindings", o->bindings},
                                  {"seed", o->seed}, {"timeout_s", o->timeout}}},
                    {"wall_s", wallS}, {"failed", failed}, {"models", entries}};
        std::cout << doc.dump(2) << "\n";
      } else {
        qualify::renderTables(std::cout, entries);
        std::cout << fmt::format("wall time {:.1f} s\n", wallS);
      }
      int tried = static_cast<int>(std::count_if(
          entries.begin(), entries.end(), [](const json& e) { return e["model"].value("status", "FAIL") != "skip"; }));
      finishSuiteCommand("qualify", tried, failed ? 1 : 0, record.error(), runId);
    } catch (const std::exception& e) {
      std::cerr << "dynqual qualify: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
