//===- CompileOnnx.cpp - compile an ONNX ModelProto ------------------------===//
// Separate from Compiler.cpp so tools that only compile MLIR do not pull in the importer.
#include "dq/Import/OnnxImporter.h"
#include "dq/Pipeline/CompileModule.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

::dq::CompileResult dq::compileOnnxModel(const onnx::ModelProto &model, const CompileOptions &options) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  mlir::dq::prepareContext(context);
  ::dq::CompileResult result;
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::dq::importOnnxModel(context, model, error);
  if (!module) {
    result.error = error.empty() ? "ONNX import failed" : error;
    return result;
  }
  return mlir::dq::compileModule(*module, options);
}
