#pragma once
// How the oracle compiles and runs dq variants when it does not use child processes: the
// persistent worker's in-process engine (docs/fuzz/campaigns.md). An interface, so that the
// fuzz library itself links no compiler code.
#include "dynqual/exec/Executor.h"
#include "dynqual/exec/Variant.h"
#include "dynqual/tensor/Tensor.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace dynqual::fuzz {

/// A dq variant compiled by a CaseEngine; what it holds is the engine's business.
class EngineProgram {
public:
  virtual ~EngineProgram() = default;
};

/// Compiles and runs dq variants inside the calling process. Every error is worded as the
/// child-process path words it (exec::Executor with `dynqual compile` and `dynqual-exec`), so a
/// case gets the same findings on either path. A crash, hang or memory exhaustion ends the
/// process: its caller must be isolated (the persistent worker is a process of its own).
class CaseEngine {
public:
  virtual ~CaseEngine() = default;

  /// Compiles `model` with the pipeline of `variant` (a dq variant). `modelFile` and
  /// `artifactFile` are where the child path would have written the model and the .dqp (named in
  /// messages, and the model path is what the test fault injector matches; neither is written).
  /// Throws exec::ExecError (Stage::Compile) with
  /// "<label> <model folder>: compile: dynqual compile: <compiler's one-line error>".
  virtual std::shared_ptr<const EngineProgram> compile(const onnx::ModelProto& model, const exec::Variant& variant,
                                                       const std::string& label, const std::filesystem::path& modelFile,
                                                       const std::filesystem::path& artifactFile) = 0;

  /// Runs `program` once on `inputs` (graph input order) on the variant's device, fresh for this
  /// run. `programFile` is where the child path's artifact would be (named in runtime errors).
  /// Throws exec::ExecError (Stage::Run) "<label> <model folder>: run: <runtime's error>".
  virtual exec::ExecResult execute(const EngineProgram& program, const std::vector<Tensor>& inputs,
                                   const std::filesystem::path& programFile) = 0;

  /// The pass-pipeline spec `pipeline` stands for, as `dynqual compile --print-pipeline` prints
  /// it; "" when the compiler cannot say (an unknown option).
  virtual std::string pipelineSpec(const std::string& pipeline) = 0;
};

} // namespace dynqual::fuzz
