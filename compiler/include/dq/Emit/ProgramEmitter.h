//===- ProgramEmitter.h - final memref + dq IR -> dq::rt::Program -*- C++ -*-===//
#ifndef DQ_EMIT_PROGRAMEMITTER_H
#define DQ_EMIT_PROGRAMEMITTER_H

#include "dq/runtime/Program.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::dq {

/// Emits function @main of `module` (or its only public function) as a register program (see
/// Program.h for the instruction semantics). `pipelineSpec` is recorded in the program, together
/// with DYNQUAL_VERSION. Expects fully bufferized IR after dq-lower-copies: the function has one
/// block of func/arith (index and integer scalars)/memref/dq ops. Any other op, a float scalar
/// value, or an unsupported element type fails with an error diagnostic on that op that starts
/// with "unsupported in program emission: ".
FailureOr<::dq::rt::Program> emitProgram(ModuleOp module, llvm::StringRef pipelineSpec);

} // namespace mlir::dq

#endif // DQ_EMIT_PROGRAMEMITTER_H
