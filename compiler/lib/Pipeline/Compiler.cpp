//===- Compiler.cpp - run the pipeline as data -----------------------------===//
//
// The spec is parsed once, printed back (the recorded, normalized spec) and split into its
// top-level elements: elements before the first bufferization element form the `dq` stage, the
// rest the `memref` stage. Each stage runs in its own PassManager so compilation can stop
// between them; both verify after every pass.
//
//===----------------------------------------------------------------------===//
#include "dq/Emit/ProgramEmitter.h"
#include "dq/Pipeline/CompileModule.h"
#include "dq/Pipeline/ProductionPipeline.h"
#include "dq/Pipeline/Registration.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <mutex>

using namespace mlir;

namespace dq {
std::optional<Stage> parseStage(std::string_view name) {
  using ::dq::Stage;
  if (name == "onnx") return Stage::Onnx;
  if (name == "dq") return Stage::Dq;
  if (name == "memref") return Stage::Memref;
  if (name == "dqp") return Stage::Dqp;
  return std::nullopt;
}

const char *stageName(Stage stage) {
  using ::dq::Stage;
  switch (stage) {
  case Stage::Onnx:
    return "onnx";
  case Stage::Dq:
    return "dq";
  case Stage::Memref:
    return "memref";
  case Stage::Dqp:
    return "dqp";
  }
  return "?";
}

std::string resolvePipelineSpec(const std::string &pipeline, std::string *error) {
  std::string spec, message;
  if (!resolveProductionName(pipeline, spec, message)) return pipeline;
  if (error) *error = message;
  return spec;
}
} // namespace dq

namespace {

/// Sums wall-clock time per pass; adaptor passes (nesting) are not counted.
struct PassTimer : public PassInstrumentation {
  std::vector<::dq::PassTime> &times;
  llvm::DenseMap<Pass *, std::chrono::steady_clock::time_point> started;
  explicit PassTimer(std::vector<::dq::PassTime> &times) : times(times) {}

  static bool isAdaptor(Pass *pass) { return pass->getArgument().empty() && pass->getName().contains("Adaptor"); }
  void runBeforePass(Pass *pass, Operation *) override {
    if (!isAdaptor(pass)) started[pass] = std::chrono::steady_clock::now();
  }
  void record(Pass *pass) {
    auto it = started.find(pass);
    if (it == started.end()) return;
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - it->second).count();
    started.erase(it);
    std::string name = pass->getArgument().empty() ? pass->getName().str() : pass->getArgument().str();
    for (::dq::PassTime &t : times)
      if (t.pass == name) {
        t.ms += ms;
        return;
      }
    times.push_back({name, ms});
  }
  void runAfterPass(Pass *pass, Operation *) override { record(pass); }
  void runAfterPassFailed(Pass *pass, Operation *) override { record(pass); }
};

std::string printModule(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

std::string firstLine(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  for (char &c : s)
    if (c == '\n') c = ' ';
  return s;
}

/// Captures the first error diagnostic as "location: message".
struct ErrorCapture {
  std::string error;
  ScopedDiagnosticHandler handler;
  explicit ErrorCapture(MLIRContext *ctx)
      : handler(ctx, [this](Diagnostic &diag) {
          if (diag.getSeverity() != DiagnosticSeverity::Error) return success();
          if (error.empty()) {
            std::string loc;
            llvm::raw_string_ostream os(loc);
            diag.getLocation().print(os);
            error = loc + ": " + diag.str();
          }
          return success();
        }) {}
};

} // namespace

void mlir::dq::prepareContext(MLIRContext &context) {
  static std::once_flag once;
  std::call_once(once, [] { registerAllDQPassesAndPipelines(); });
  DialectRegistry registry;
  registerAllDQDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  context.disableMultithreading();
}

::dq::CompileResult mlir::dq::compileModule(ModuleOp module, const ::dq::CompileOptions &options) {
  using ::dq::Stage;
  ::dq::CompileResult result;
  MLIRContext *ctx = module.getContext();
  ErrorCapture capture(ctx);

  std::string nameError;
  std::string spec = ::dq::resolvePipelineSpec(options.pipeline, &nameError);
  if (!nameError.empty()) {
    result.error = "pipeline spec: " + nameError;
    return result;
  }
  std::string parseError;
  llvm::raw_string_ostream parseErrors(parseError);
  FailureOr<OpPassManager> parsed = parsePassPipeline(spec, parseErrors);
  if (failed(parsed)) {
    result.error = "pipeline spec: " + firstLine(parseError);
    return result;
  }
  if (parsed->getOpAnchorName() != ModuleOp::getOperationName()) {
    result.error = "pipeline spec: must be anchored on builtin.module, got '" + parsed->getOpAnchorName().str() + "'";
    return result;
  }
  {
    llvm::raw_string_ostream os(result.pipelineSpec);
    parsed->printAsTextualPipeline(os);
  }
  SmallVector<std::string> elements;
  size_t dqEnd = std::string::npos;
  for (Pass &pass : parsed->getPasses()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    pass.printAsTextualPipeline(os);
    if (dqEnd == std::string::npos && pass.getArgument().contains("bufferize")) dqEnd = elements.size();
    elements.push_back(text);
  }
  if (dqEnd == std::string::npos) dqEnd = elements.size();

  if (options.stopAfter == Stage::Onnx) {
    result.ir = printModule(module);
    result.ok = true;
    return result;
  }

  llvm::raw_string_ostream printed(result.printedIr);
  auto runStage = [&](size_t begin, size_t end) -> LogicalResult {
    if (begin == end) return success();
    std::string body;
    for (size_t i = begin; i < end; ++i)
      body += (i == begin ? "" : ",") + elements[i];
    PassManager pm(ctx, ModuleOp::getOperationName());
    pm.enableVerifier(true);
    if (failed(parsePassPipeline(body, pm, parseErrors))) {
      result.error = "pipeline spec: " + firstLine(parseError);
      return failure();
    }
    if (!options.printIrAfter.empty()) {
      std::string which = options.printIrAfter;
      pm.enableIRPrinting([](Pass *, Operation *) { return false; },
                          [which](Pass *pass, Operation *) { return which == "all" || pass->getArgument() == which; },
                          /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
                          /*printAfterOnlyOnFailure=*/false, printed);
    }
    if (options.timing) pm.addInstrumentation(std::make_unique<PassTimer>(result.passTimes));
    if (failed(pm.run(module))) {
      result.error = capture.error.empty() ? "a pass failed without a diagnostic" : capture.error;
      return failure();
    }
    return success();
  };

  if (failed(runStage(0, dqEnd))) return result;
  if (options.stopAfter == Stage::Dq) {
    result.ir = printModule(module);
    result.ok = true;
    return result;
  }
  if (failed(runStage(dqEnd, elements.size()))) return result;
  if (options.stopAfter == Stage::Memref) {
    result.ir = printModule(module);
    result.ok = true;
    return result;
  }
  auto start = std::chrono::steady_clock::now();
  FailureOr<::dq::rt::Program> program = emitProgram(module, result.pipelineSpec);
  if (options.timing)
    result.passTimes.push_back(
        {"dq-emit-program",
         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count()});
  if (failed(program)) {
    result.error = capture.error;
    return result;
  }
  result.program = std::move(*program);
  if (!options.sourceName.empty()) result.program.sourceName = options.sourceName;
  result.ok = true;
  return result;
}

namespace dq {
CompileResult compileMlirFile(const std::string &path, const CompileOptions &options) {
  MLIRContext context(MLIRContext::Threading::DISABLED);
  mlir::dq::prepareContext(context);
  ::dq::CompileResult result;
  ErrorCapture capture(&context);
  llvm::SourceMgr sourceMgr;
  std::string error;
  auto file = openInputFile(path, &error);
  if (!file) {
    result.error = path + ": " + error;
    return result;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module) {
    result.error = capture.error.empty() ? path + ": cannot parse" : capture.error;
    return result;
  }
  return mlir::dq::compileModule(*module, options);
}
} // namespace dq
