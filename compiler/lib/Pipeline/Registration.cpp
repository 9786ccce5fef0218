//===- Registration.cpp - dialect, pass and pipeline registration ---------===//
#include "dq/Pipeline/Registration.h"

#include "dq/Conversion/Passes.h"
#include "dq/Dialect/DQDialect.h"
#include "dq/Pipeline/ProductionPipeline.h"
#include "dq/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::dq::registerAllDQDialects(DialectRegistry &registry) {
  registry.insert<DQDialect, arith::ArithDialect, bufferization::BufferizationDialect, func::FuncDialect,
                  memref::MemRefDialect, tensor::TensorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  registerBufferizableOpInterfaceExternalModels(registry);
}

void mlir::dq::registerAllDQPassesAndPipelines() {
  registerCanonicalizerPass();
  registerCSEPass();
  bufferization::registerOneShotBufferizePass();
  registerDQConversionPasses();
  registerDQTransformsPasses();
  registerProductionPipeline();
}
