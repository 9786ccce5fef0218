//===- Passes.h - onnx -> dq conversion passes ------------------*- C++ -*-===//
#ifndef DQ_CONVERSION_PASSES_H
#define DQ_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::dq {

/// Declares createConvertONNXToDQ(): the `dq-convert-onnx` module pass that lowers the
/// importer's generic onnx.* ops to dq/tensor/arith ops (docs/passes/convert-onnx.md).
#define GEN_PASS_DECL
#include "dq/Conversion/Passes.h.inc"

/// Declares registerDQConversionPasses(), which registers `dq-convert-onnx`.
#define GEN_PASS_REGISTRATION
#include "dq/Conversion/Passes.h.inc"

} // namespace mlir::dq

#endif // DQ_CONVERSION_PASSES_H
