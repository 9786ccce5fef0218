//===- Passes.td - dq transform passes (tensor fusion, memref stage) -*- tablegen -*-===//
#ifndef DQ_TRANSFORMS_PASSES_TD
#define DQ_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

// Passes are listed alphabetically. Pages: docs/passes/<command-line name>.md.

def EmitProgram : Pass<"dq-emit-program", "mlir::ModuleOp"> {
  let summary = "Emit the final memref + dq IR of @main as a dq::rt::Program and write it";
  let description = [{
    Not part of any recorded pipeline spec: it is the last step the compiler (and dynqual-opt's
    --emit-dqp) appends. `output` receives the artifact; `pipeline-spec` is recorded in it.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "file receiving the program ('-' = stdout)">,
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "artifact format: text (readable listing) or dqp (binary artifact + sidecar)">,
    Option<"pipelineSpec", "pipeline-spec", "std::string", /*default=*/"\"\"",
           "pipeline spec recorded in the artifact">,
  ];
}

def FuseElementwise : Pass<"dq-fuse-elementwise"> {
  let summary = "Fuse chains of float dq.elementwise ops into dq.kernel \"fused_elementwise\"";
  let description = [{
    Tensor-level, on any op (every block nested in it; the production pipeline runs it on the
    module, beside canonicalize and cse): after canonicalize/cse and before bufferization. A producer (a supported
    float dq.elementwise or a fused kernel) merges into its consumer when the consumer is its
    only use, both are in one block, every leaf, intermediate and result has the same float
    element type, the producer's type broadcasts to the consumer's init type, and the merged
    kernel keeps at most 8 leaves and 16 steps. docs/passes/fuse-elementwise.md.
  }];
  let dependentDialects = ["mlir::dq::DQDialect"];
}

def LowerCopies : Pass<"dq-lower-copies", "mlir::func::FuncOp"> {
  let summary = "Lower memref.copy to dq.copy (memcpy / copy2d / strided) from effective strides";
  let dependentDialects = ["mlir::dq::DQDialect"];
  let options = [
    Option<"inject", "inject", "std::string", /*default=*/"\"\"",
           "known-unsound behaviour to restore (docs/fuzz/knobs.md): singleton-copy-host-path">,
  ];
}

def MaterializeHostScalars : Pass<"dq-materialize-host-scalars", "mlir::func::FuncOp"> {
  let summary = "Move host-written scalar staging buffers to host scratch, copied to device before use";
  let dependentDialects = ["mlir::dq::DQDialect", "mlir::memref::MemRefDialect"];
}

def OptimizeMemrefs : Pass<"dq-optimize-memrefs", "mlir::func::FuncOp"> {
  let summary = "Lifetime-based reuse of same-type device allocations";
  let dependentDialects = ["mlir::memref::MemRefDialect"];
  let options = [
    Option<"inject", "inject", "std::string", /*default=*/"\"\"",
           "known-unsound behaviour to restore (docs/fuzz/knobs.md): host-scalars-after-reuse">,
  ];
}

def PoolAllocs : Pass<"dq-pool-allocs", "mlir::func::FuncOp"> {
  let summary = "Pack transient device allocations into the grow-on-demand pool";
  let dependentDialects = ["mlir::dq::DQDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def PromoteStridedOperands : Pass<"dq-promote-strided-operands", "mlir::func::FuncOp"> {
  let summary = "Copy non-contiguous operands of contiguous-only dq ops into contiguous temporaries";
  let dependentDialects = ["mlir::memref::MemRefDialect"];
  let options = [
    Option<"inject", "inject", "std::string", /*default=*/"\"\"",
           "known-unsound behaviour to restore (docs/fuzz/knobs.md): strided-view-base-pointer">,
  ];
}

def UseOutputAllocator : Pass<"dq-use-output-allocator", "mlir::func::FuncOp"> {
  let summary = "Allocate graph outputs through dq.alloc_output with their precise external dims";
  let dependentDialects = ["mlir::dq::DQDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
  let options = [
    Option<"inject", "inject", "std::string", /*default=*/"\"\"",
           "known-unsound behaviour to restore (docs/fuzz/knobs.md): output-rank-collapse, erase-alloc-before-view-analysis">,
  ];
}

#endif // DQ_TRANSFORMS_PASSES_TD
