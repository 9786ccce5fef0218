#include "CompileBridge.h"
#include "Commands.h"

#include "dq/Pipeline/Compiler.h"
#include "dq/runtime/ProgramIO.h"

#include <chrono>
#include <iostream>
#include <stdexcept>

namespace dynqual::cli {

CompileOutcome compileModel(const onnx::ModelProto& model, const CompileRequest& request,
                            const std::filesystem::path& artifact) {
  dq::CompileOptions options;
  options.pipeline = request.pipeline;
  auto stage = dq::parseStage(request.stage);
  if (!stage)
    throw std::runtime_error("unknown stage '" + request.stage + "' (use onnx, dq, memref or dqp)");
  options.stopAfter = *stage;
  options.printIrAfter = request.printIrAfter;
  options.timing = request.timing;
  options.sourceName = model.graph().name();

  auto start = std::chrono::steady_clock::now();
  dq::CompileResult result = dq::compileOnnxModel(model, options);
  CompileOutcome out;
  out.totalMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!result.printedIr.empty())
    std::cerr << result.printedIr;
  if (!result.ok)
    throw std::runtime_error(result.error);
  // A pass name that matched nothing is a typo, not a request for silence.
  if (!request.printIrAfter.empty() && result.printedIr.empty())
    throw UsageError("--print-ir-after '" + request.printIrAfter +
                     "': no pass of that name ran (pipeline: " + result.pipelineSpec + ")");
  out.ir = result.ir;
  for (const auto& t : result.passTimes)
    out.passMs.emplace_back(t.pass, t.ms);
  if (*stage == dq::Stage::Dqp)
    dq::rt::writeProgram(result.program, artifact.string());
  return out;
}

void compileArtifact(const onnx::ModelProto& model, const std::string& pipeline,
                     const std::filesystem::path& artifact) {
  CompileRequest request;
  request.pipeline = pipeline;
  compileModel(model, request, artifact);
}

std::string pipelineSpecText(const std::string& pipeline) {
  std::string error;
  std::string spec = dq::resolvePipelineSpec(pipeline, &error);
  if (!error.empty())
    throw std::runtime_error("pipeline spec: " + error);
  return spec;
}

} // namespace dynqual::cli
