// `dynqual compile`: runs the pipeline up to a stage and writes the IR or the artifact.
#include "Commands.h"
#include "CompileBridge.h"

#include "dynqual/exec/FaultInjection.h"
#include "dynqual/onnx/ModelLoader.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>

namespace dynqual::cli {

void addCompileCommand(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("compile", "Compile an ONNX model and stop after the stage --emit names\n"
                                    "(default dqp). Stages: onnx (imported generic ops), dq (after conversion),\n"
                                    "memref (after the memref passes), dqp (program artifact).");
  struct Opts {
    std::string model, output = "-";
    CompileRequest req;
    bool printPipeline = false;
  };
  auto opts = std::make_shared<Opts>();
  cmd->add_option("model", opts->model, "model.onnx file or a model folder holding one");
  cmd->add_option("--emit", opts->req.stage, "stage to stop after (default: dqp)")
      ->check(CLI::IsMember({"onnx", "dq", "memref", "dqp"}));
  cmd->add_option("-o,--output", opts->output, "output file ('-' = stdout; required for dqp)");
  cmd->add_option("--pipeline", opts->req.pipeline,
                  "'production', 'production{inject=KNOB}' (docs/fuzz/knobs.md) or an MLIR pass-pipeline spec");
  cmd->add_option("--print-ir-after", opts->req.printIrAfter, "print IR to stderr after PASS, or 'all'");
  cmd->add_flag("--timing", opts->req.timing, "print per-pass compile time (ms) to stderr");
  cmd->add_flag("--print-pipeline", opts->printPipeline,
                "print the pass-pipeline spec --pipeline stands for and exit (no model needed)");
  cmd->callback([opts] {
    try {
      if (opts->printPipeline) {
        std::cout << pipelineSpecText(opts->req.pipeline) << "\n";
        return;
      }
      if (opts->model.empty())
        throw UsageError("a model is required (model.onnx or a folder holding one)");
      std::filesystem::path model = opts->model;
      if (std::filesystem::is_directory(model))
        model /= "model.onnx";
      exec::applyFault(exec::FaultStage::Compile, model.string());
      if (opts->req.stage == "dqp" && opts->output == "-")
        throw UsageError("--emit dqp needs -o FILE.dqp (the constants go to FILE.dqp.bin)");
      // Open the IR output before compiling so a bad path fails at once.
      std::ofstream file;
      if (opts->req.stage != "dqp" && opts->output != "-") {
        file.open(opts->output);
        if (!file)
          throw UsageError(opts->output + ": cannot open for writing");
      }
      onnx::ModelProto proto;
      try {
        proto = onnxio::loadModel(model);
      } catch (const std::exception& e) {
        throw UsageError(e.what());
      }
      CompileOutcome out = compileModel(proto, opts->req, opts->output);
      if (opts->req.stage != "dqp")
        (file.is_open() ? static_cast<std::ostream&>(file) : std::cout) << out.ir;
      if (opts->req.timing) {
        for (const auto& [pass, ms] : out.passMs)
          std::cerr << fmt::format("{:>10.3f} ms  {}\n", ms, pass);
        std::cerr << fmt::format("{:>10.3f} ms  total\n", out.totalMs);
      }
    } catch (const UsageError& e) {
      std::cerr << "dynqual compile: " << e.what() << "\n";
      setExitCode(2);
    } catch (const std::exception& e) {
      std::cerr << "dynqual compile: " << e.what() << "\n";
      setExitCode(1);
    }
  });
}

} // namespace dynqual::cli
