#pragma once
// The persistent worker's CaseEngine: compiles in a reused MLIR context (dq::CompileSession) and
// runs the program on a fresh device, all in this process, each stage under a StageWatchdog.
#include "dynqual/fuzz/CaseEngine.h"
#include "dynqual/fuzz/StageWatchdog.h"

#include <memory>

namespace dq {
class CompileSession;
}

namespace dynqual::fuzz {

struct InProcessEngineOptions {
  double compileTimeoutSeconds = 60; ///< per compile; past it the process ends (StageWatchdog)
  double runTimeoutSeconds = 20;     ///< per run of one binding, likewise
  int compilesPerContext = 64;       ///< a fresh MLIRContext after this many compiles
};

/// CaseEngine in this process. Compiles with dq::CompileSession, serializes the program exactly
/// as `dynqual compile` writes the .dqp, and each execute() deserializes it as `dynqual-exec`
/// reads it, so validation errors land in the same stage as on the child path.
class InProcessEngine : public CaseEngine {
public:
  explicit InProcessEngine(InProcessEngineOptions options = {});
  ~InProcessEngine() override;

  std::shared_ptr<const EngineProgram> compile(const onnx::ModelProto& model, const exec::Variant& variant,
                                               const std::string& label, const std::filesystem::path& modelFile,
                                               const std::filesystem::path& artifactFile) override;
  exec::ExecResult execute(const EngineProgram& program, const std::vector<Tensor>& inputs,
                           const std::filesystem::path& programFile) override;
  std::string pipelineSpec(const std::string& pipeline) override;

  /// MLIR contexts created so far.
  int contextsCreated() const;

private:
  InProcessEngineOptions options_;
  std::unique_ptr<dq::CompileSession> session_;
  StageWatchdog watchdog_;
};

} // namespace dynqual::fuzz
