//===- CompileSession.h - many compiles in one MLIRContext -----*- C++ -*-===//
//
// Plain C++ (no MLIR header). compileOnnxModel sets up a fresh MLIRContext for every model;
// a long-lived caller that compiles thousands of small models (the fuzzer's worker) keeps one
// context, with its dialects loaded, across compiles instead.
//
//===----------------------------------------------------------------------===//
#ifndef DQ_PIPELINE_COMPILESESSION_H
#define DQ_PIPELINE_COMPILESESSION_H

#include "dq/Pipeline/Compiler.h"

#include <memory>

namespace dq {

/// Compiles ONNX models one after another in a reused MLIRContext (prepareContext: every dq
/// dialect loaded, multithreading off). Each compile imports into a fresh ModuleOp that is
/// destroyed before compile() returns; only what the context interns (types, attributes,
/// constants) outlives it, so the context is replaced after `compilesPerContext` compiles to
/// bound that growth. Not thread-safe: one session per thread.
class CompileSession {
public:
  /// `compilesPerContext` >= 1; 1 gives a fresh context per compile, as compileOnnxModel does.
  explicit CompileSession(int compilesPerContext = 64);
  ~CompileSession();
  CompileSession(const CompileSession &) = delete;
  CompileSession &operator=(const CompileSession &) = delete;

  /// Same contract as compileOnnxModel: never throws (except std::bad_alloc), errors in the
  /// result.
  CompileResult compile(const onnx::ModelProto &model, const CompileOptions &options);

  /// Contexts created so far (1 after the first compile).
  int contextsCreated() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace dq

#endif // DQ_PIPELINE_COMPILESESSION_H
