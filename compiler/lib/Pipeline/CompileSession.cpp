//===- CompileSession.cpp - many compiles in one MLIRContext ---------------===//
#include "dq/Pipeline/CompileSession.h"

#include "dq/Import/OnnxImporter.h"
#include "dq/Pipeline/CompileModule.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <algorithm>

namespace dq {

struct CompileSession::Impl {
  int perContext = 64;
  int used = 0;
  int created = 0;
  std::unique_ptr<mlir::MLIRContext> context;

  mlir::MLIRContext &fresh() {
    if (!context || used >= perContext) {
      context.reset(); // the old context's interned storage goes before the new one is built
      context = std::make_unique<mlir::MLIRContext>(mlir::MLIRContext::Threading::DISABLED);
      mlir::dq::prepareContext(*context);
      used = 0;
      ++created;
    }
    ++used;
    return *context;
  }
};

CompileSession::CompileSession(int compilesPerContext) : impl_(std::make_unique<Impl>()) {
  impl_->perContext = std::max(1, compilesPerContext);
}

CompileSession::~CompileSession() = default;

CompileResult CompileSession::compile(const onnx::ModelProto &model, const CompileOptions &options) {
  mlir::MLIRContext &context = impl_->fresh();
  CompileResult result;
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::dq::importOnnxModel(context, model, error);
  if (!module) {
    result.error = error.empty() ? "ONNX import failed" : error;
    return result;
  }
  return mlir::dq::compileModule(*module, options);
}

int CompileSession::contextsCreated() const { return impl_->created; }

} // namespace dq
