//===- Passes.td - dq memref-stage passes ------------------*- tablegen -*-===//
#ifndef DQ_TRANSFORMS_PASSES_TD
#define DQ_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

// Passes are listed alphabetically.

def UseOutputAllocator : Pass<"dq-use-output-allocator", "mlir::func::FuncOp"> {
  let summary = "Allocate graph outputs through dq.alloc_output with their precise external dims";
  let dependentDialects = ["mlir::dq::DQDialect", "mlir::memref::MemRefDialect"];
}

#endif // DQ_TRANSFORMS_PASSES_TD
