//===- EmitProgramPass.cpp - dq-emit-program ------------------------------===//
#include "dq/Emit/ProgramEmitter.h"
#include "dq/Emit/ProgramText.h"
#include "dq/Transforms/Passes.h"
#include "dq/runtime/ProgramIO.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

#include <exception>

namespace mlir::dq {
#define GEN_PASS_DEF_EMITPROGRAM
#include "dq/Transforms/Passes.h.inc"
} // namespace mlir::dq

using namespace mlir;

namespace {

struct EmitProgramPass : public mlir::dq::impl::EmitProgramBase<EmitProgramPass> {
  using Base::Base;

  void runOnOperation() override {
    if (format != "text" && format != "dqp") {
      getOperation().emitError("dq-emit-program: unknown format '") << format << "'; use text or dqp";
      return signalPassFailure();
    }
    FailureOr<::dq::rt::Program> program = mlir::dq::emitProgram(getOperation(), pipelineSpec);
    if (failed(program)) return signalPassFailure();
    if (format == "dqp") {
      if (output == "-") {
        getOperation().emitError("dq-emit-program: format=dqp needs an output file, not '-'");
        return signalPassFailure();
      }
      try {
        ::dq::rt::writeProgram(*program, output);
      } catch (const std::exception &e) {
        getOperation().emitError("dq-emit-program: ") << e.what();
        return signalPassFailure();
      }
      return;
    }
    std::string error;
    auto file = openOutputFile(output, &error);
    if (!file) {
      getOperation().emitError("dq-emit-program: ") << error;
      return signalPassFailure();
    }
    file->os() << ::dq::formatProgram(*program);
    file->keep();
  }
};

} // namespace
