//===- CompileModule.h - run the pipeline on a parsed module ---*- C++ -*-===//
#ifndef DQ_PIPELINE_COMPILEMODULE_H
#define DQ_PIPELINE_COMPILEMODULE_H

#include "dq/Pipeline/Compiler.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::dq {

/// The MLIRContext every compilation uses: all dq dialects and bufferization models, passes
/// registered, multithreading off (deterministic output and module-scope IR printing).
void prepareContext(MLIRContext &context);

/// Runs `options.pipeline` on `module` (already imported or parsed in a context set up by
/// prepareContext) up to `options.stopAfter` and fills the result. Never throws.
::dq::CompileResult compileModule(ModuleOp module, const ::dq::CompileOptions &options);

} // namespace mlir::dq

#endif // DQ_PIPELINE_COMPILEMODULE_H
