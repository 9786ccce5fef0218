//===- ProductionPipeline.cpp - the named production pipeline -------------===//
#include "dq/Pipeline/ProductionPipeline.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

// Function boundaries use identity layouts so every graph input and output is a contiguous
// row-major buffer (the runtime's ABI); inside a function, views keep fully dynamic layouts and a
// returned view that is not contiguous is copied into an identity buffer by bufferization.
static constexpr const char *kProductionBody =
    "dq-convert-onnx, canonicalize, cse, "
    "one-shot-bufferize{bufferize-function-boundaries=true "
    "function-boundary-type-conversion=identity-layout-map}, "
    "func.func(dq-use-output-allocator, dq-materialize-host-scalars, dq-optimize-memrefs, "
    "dq-promote-strided-operands, dq-pool-allocs, dq-lower-copies)";

const char *dq::productionPipelineSpec() {
  static const std::string spec = std::string("builtin.module(") + kProductionBody + ")";
  return spec.c_str();
}

void mlir::dq::registerProductionPipeline() {
  registerPassPipeline(
      "dq-production", "the dq production pipeline (docs/pipeline.md)",
      [](OpPassManager &pm, StringRef options,
         function_ref<LogicalResult(const Twine &)> errorHandler) -> LogicalResult {
        if (!options.empty())
          return errorHandler("dq-production takes no options");
        std::string message;
        llvm::raw_string_ostream os(message);
        if (failed(parsePassPipeline(kProductionBody, pm, os)))
          return errorHandler("dq-production: " + message);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)>) {});
}
