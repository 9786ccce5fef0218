//===- Registration.cpp - dialect, pass and pipeline registration ---------===//
#include "dq/Pipeline/Registration.h"

#include "dq/Conversion/Passes.h"
#include "dq/Dialect/DQDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::dq::registerAllDQDialects(DialectRegistry &registry) {
  registry.insert<DQDialect, arith::ArithDialect, bufferization::BufferizationDialect,
                  func::FuncDialect, memref::MemRefDialect, tensor::TensorDialect>();
}

void mlir::dq::registerAllDQPassesAndPipelines() {
  registerDQConversionPasses();
}
