//===- dynqual-opt.cpp - mlir-opt-style driver for the dq pipeline --------===//
// Runs any dq pass or named pipeline alone, so lit tests and users reproduce exactly what the
// compiler runs.
#include "dq/Pipeline/Registration.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::dq::registerAllDQDialects(registry);
  mlir::dq::registerAllDQPassesAndPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dynqual-opt: dq dialect and pass driver\n", registry));
}
