//===- Passes.h - dq transform passes (tensor fusion, memref stage) -*- C++ -*-===//
#ifndef DQ_TRANSFORMS_PASSES_H
#define DQ_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace mlir::dq {

#define GEN_PASS_DECL
#include "dq/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dq/Transforms/Passes.h.inc"

/// Attaches BufferizableOpInterface models to every dq op that takes tensors (the DPS compute
/// ops and dq.readback_scalar), so upstream one-shot bufferization handles them.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace mlir::dq

#endif // DQ_TRANSFORMS_PASSES_H
