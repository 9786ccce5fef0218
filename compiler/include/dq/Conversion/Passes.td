//===- Passes.td - onnx -> dq conversion passes ------------*- tablegen -*-===//
#ifndef DQ_CONVERSION_PASSES_TD
#define DQ_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertONNXToDQ : Pass<"dq-convert-onnx", "mlir::ModuleOp"> {
  let summary = "Lower generic onnx.* ops to dq/tensor/arith with reified dynamic shapes";
  let dependentDialects = ["mlir::dq::DQDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect", "mlir::func::FuncDialect"];
  let options = [
    Option<"inject", "inject", "std::string", /*default=*/"\"\"",
           "known-unsound behaviour to restore (docs/fuzz/knobs.md): reshape-by-type-equality, slice-upper-bound, split-dim-size-alias, readback-without-sync">,
    Option<"views", "views", "bool", /*default=*/"true",
           "lower Slice with positive constant steps to tensor.extract_slice and Transpose whose consumers walk strides to dq.transpose_view (docs/passes/convert-onnx.md); false: every Slice and Transpose is a kernel writing a contiguous buffer">,
  ];
}

#endif // DQ_CONVERSION_PASSES_TD
