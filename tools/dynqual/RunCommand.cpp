// `dynqual run`: compile each model once, run stored data sets and extra shape bindings in a
// separate runtime process, compare with stored outputs and the CPU reference.
#include "Commands.h"

#include "dq/runtime/Device.h"

#include "dynqual/exec/Executor.h"

#include "dynqual/run/ModelRun.h"
#include "dynqual/run/RunRecords.h"
#include "dynqual/run/RunReport.h"
#include "dynqual/store/RunRecording.h"
#include "dynqual/store/Store.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace dynqual::cli {

namespace {

/// dynqual-exec lives beside the dynqual binary.
fs::path siblingExec() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return (ec ? fs::path(".") : self.parent_path()) / "dynqual-exec";
}

} // namespace

void addRunCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "run", "Compile each model once and run every test_data_set_* plus extra shape bindings on a\n"
             "device, each in a separate runtime process; compare with the stored outputs and the\n"
             "CPU reference. DIR is a model folder (ONNX test-data layout) or a folder of them.\n"
             "Exit: 0 every tried model passed, 1 a model failed, 2 usage or input error, or recording\n"
             "into --db failed after the run began (the results still print).");
  struct Opts {
    std::vector<std::string> dirs;
    std::string format = "text", workDir, exec;
    double compileTimeout = 600;
    std::string db = store::defaultDbPath().string();
    bool keep = false, listSkipped = false, noDb = false;
    run::RunConfig config;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("dirs", o->dirs, "model folders or folders of model folders")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--device", o->config.device,
                  "device to run on (" + dq::rt::deviceNames() + "; hip in a build with DYNQUAL_WITH_HIP)")
      ->check(CLI::IsMember(dq::rt::availableDevices()));
  cmd->add_option("--pipeline", o->config.pipeline,
                  "'production', 'production{inject=KNOB}' (docs/fuzz/knobs.md) or an MLIR pass-pipeline spec");
  cmd->add_option("--bindings", o->config.extraBindings, "extra shape bindings per dynamic model")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o->config.seed, "seed for generated inputs and random bindings");
  cmd->add_option("--timeout", o->config.execTimeoutSeconds, "seconds allowed for each runtime process")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--compile-timeout", o->compileTimeout, "seconds allowed for each compiler process")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--format", o->format, "output format")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--work-dir", o->workDir,
                  "keep artifacts, inputs and outputs here (default: a temp folder, removed)");
  cmd->add_option("--exec", o->exec, "dynqual-exec binary (default: beside dynqual)");
  cmd->add_option("--db", o->db, "record the run into this results database (default: $DYNQUAL_DB, else ./dynqual.db)")
      ->default_str(o->db);
  cmd->add_flag("--no-db", o->noDb, "do not record the run");
  cmd->add_flag("--list-skipped", o->listSkipped, "list skipped models and their reasons in the text table");
  cmd->callback([o] {
    try {
      // Opened first, so a bad --db fails before any work.
      std::unique_ptr<store::Store> db;
      if (!o->noDb)
        db = std::make_unique<store::Store>(o->db);
      auto models = run::expandModelDirs(std::vector<fs::path>(o->dirs.begin(), o->dirs.end()));
      o->config.compare = compare::gatesForDevice(o->config.device);
      o->config.execPath = o->exec.empty() ? siblingExec() : fs::path(o->exec);
      if (!fs::exists(o->config.execPath))
        throw std::runtime_error(o->config.execPath.string() + ": runtime executable not found (use --exec)");
      bool tempWork = o->workDir.empty();
      o->config.workDir = tempWork ? makeTempWorkDir("run") : fs::path(o->workDir);
      fs::create_directories(o->config.workDir);
      bool progress = isatty(STDERR_FILENO);
      auto start = std::chrono::steady_clock::now();
      int64_t runId = 0;
      if (db)
        runId = db->beginRun(store::newRunHeader("run", o->config.device, o->config.pipeline,
                                                 {fs::read_symlink("/proc/self/exe"), o->config.execPath},
                                                 {{"rel_l2_gate", fmt::format("{}", o->config.compare.relL2Gate)},
                                                  {"seed", std::to_string(o->config.seed)},
                                                  {"bindings", std::to_string(o->config.extraBindings)}}));
      RecordGuard record(db);
      std::vector<run::ModelResult> results;
      for (size_t i = 0; i < models.size(); ++i) {
        // The compiler runs in its own process, so a compiler crash is this model's failure only.
        run::CompileFn compile = [&, dir = models[i]](const onnx::ModelProto&, const std::string& pipeline,
                                                      const fs::path& artifact) {
          exec::compileInChild(exec::selfBinDir(), dir / "model.onnx", pipeline, artifact, o->compileTimeout, "", "");
        };
        results.push_back(run::runModel(models[i], o->config, compile));
        record([&] { // one transaction per model
          db->recordCases(runId, run::caseRecords(results.back(), o->config.seed));
        });
        if (progress) {
          double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          std::cerr << fmt::format("\r[{}/{}] {:.1f}s {:<50}", i + 1, models.size(), s,
                                   models[i].filename().string().substr(0, 50))
                    << std::flush;
        }
      }
      if (progress)
        std::cerr << "\n";
      if (tempWork)
        fs::remove_all(o->config.workDir);
      record([&] { db->finishRun(runId); });
      if (o->format == "json")
        std::cout << run::renderJson(results).dump(2) << "\n";
      else
        run::renderText(std::cout, results, o->listSkipped);
      run::RunTotals t = run::totals(results);
      finishSuiteCommand("run", t.tried(), t.failed, record.error(), runId);
    } catch (const std::exception& e) {
      std::cerr << "dynqual run: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
