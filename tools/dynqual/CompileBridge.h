#pragma once
// The CLI's only door into the MLIR compiler (keeps MLIR headers out of the CLI's other files).
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace dynqual::cli {

/// What `dynqual compile` asks of the compiler.
struct CompileRequest {
  std::string pipeline = "production"; ///< "production" or an MLIR pass-pipeline spec
  std::string stage = "dqp";           ///< onnx | dq | memref | dqp
  std::string printIrAfter;            ///< a pass argument or "all"; IR goes to stderr
  bool timing = false;                 ///< collect per-pass wall-clock ms
};

/// What came back: the IR text of the stage (empty for dqp) and per-pass timings in ms.
struct CompileOutcome {
  std::string ir;
  std::vector<std::pair<std::string, double>> passMs;
  double totalMs = 0;
};

/// Compiles `model`; for stage "dqp" writes the artifact to `artifact` (.dqp + .dqp.bin).
/// Throws std::runtime_error with the compiler's one-line error (naming node or op).
CompileOutcome compileModel(const onnx::ModelProto& model, const CompileRequest& request,
                            const std::filesystem::path& artifact);

/// compileModel with `pipeline` to the dqp stage, writing `artifact`; the run::CompileFn shape that
/// `dynqual run`, `qualify` and the tests hand to run::runModel. Throws as compileModel does.
void compileArtifact(const onnx::ModelProto& model, const std::string& pipeline, const std::filesystem::path& artifact);

/// The MLIR pass-pipeline text `pipeline` stands for ("production" and its options resolved by
/// the compiler's pipeline registry; a spec is returned as given). Throws std::runtime_error for
/// an unknown production option.
std::string pipelineSpecText(const std::string& pipeline);

} // namespace dynqual::cli
