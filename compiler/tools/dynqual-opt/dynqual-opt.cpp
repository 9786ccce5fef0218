//===- dynqual-opt.cpp - mlir-opt-style driver for the dq pipeline --------===//
// Runs any dq pass or named pipeline alone, so lit tests and users reproduce exactly what the
// compiler runs. `--emit-dqp FILE` appends dq-emit-program after the given pipeline and records
// that pipeline, printed the way the compiler records it, in the artifact.
#include "dq/Pipeline/Registration.h"
#include "dq/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

static llvm::cl::opt<std::string> emitDqp("emit-dqp",
                                          llvm::cl::desc("after the pipeline, write the program artifact to FILE"),
                                          llvm::cl::value_desc("FILE"), llvm::cl::init(""));
static llvm::cl::opt<std::string>
    emitFormat("emit-format", llvm::cl::desc("artifact format for --emit-dqp: dqp or text"), llvm::cl::init("dqp"));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::DialectRegistry registry;
  mlir::dq::registerAllDQDialects(registry);
  mlir::dq::registerAllDQPassesAndPipelines();
  std::string header = mlir::registerCLIOptions("dynqual-opt: dq dialect and pass driver", registry);
  auto [inputFile, outputFile] = mlir::parseCLIOptions(argc, argv, header);

  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (!emitDqp.empty()) {
    mlir::MlirOptMainConfig base = config;
    config.setPassPipelineSetupFn([base](mlir::PassManager &pm) -> llvm::LogicalResult {
      if (failed(base.setupPassPipeline(pm))) return llvm::failure();
      std::string spec;
      llvm::raw_string_ostream os(spec);
      pm.printAsTextualPipeline(os);
      mlir::dq::EmitProgramOptions options;
      options.output = emitDqp;
      options.format = emitFormat;
      options.pipelineSpec = spec;
      pm.addPass(mlir::dq::createEmitProgram(options));
      return llvm::success();
    });
  }

  std::string error;
  auto input = mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << "dynqual-opt: " << error << "\n";
    return 1;
  }
  auto output = mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "dynqual-opt: " << error << "\n";
    return 1;
  }
  if (failed(mlir::MlirOptMain(output->os(), std::move(input), registry, config))) return 1;
  output->keep();
  return 0;
}
