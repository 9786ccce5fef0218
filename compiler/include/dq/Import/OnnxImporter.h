//===- OnnxImporter.h - ONNX ModelProto -> onnx.* generic ops ---*- C++ -*-===//
#ifndef DQ_IMPORT_ONNXIMPORTER_H
#define DQ_IMPORT_ONNXIMPORTER_H

#include <string>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace mlir {
class MLIRContext;
class ModuleOp;
template <typename OpTy> class OwningOpRef;
} // namespace mlir

namespace mlir::dq {

/// Imports `model` (external data already resolved into raw_data) as a module holding one
/// `func.func @main` whose body is generic `onnx.<OpType>` ops on ranked tensors; every
/// dim_param or unknown dim becomes `?`. On failure returns null and sets `error` to one line
/// naming the node/input and the problem (unsupported op, unsupported dtype, bad attribute).
OwningOpRef<ModuleOp> importOnnxModel(MLIRContext &context, const onnx::ModelProto &model, std::string &error);

} // namespace mlir::dq

#endif // DQ_IMPORT_ONNXIMPORTER_H
