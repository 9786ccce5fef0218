#include "dynqual/fuzz/InProcessEngine.h"

#include "dq/Pipeline/CompileSession.h"
#include "dq/runtime/Device.h"
#include "dq/runtime/ProgramIO.h"
#include "dq/runtime/Runtime.h"
#include "dynqual/exec/FaultInjection.h"
#include "dynqual/run/TensorBridge.h"

#include <new>

namespace fs = std::filesystem;

namespace dynqual::fuzz {

namespace {

/// The compiled program as the child path hands it over: the .dqp and sidecar bytes.
struct InProcessProgram : EngineProgram {
  dq::rt::ProgramBytes bytes;
  std::string device;
  std::string where; ///< "<label> <model folder>: "
};

/// The last non-empty line, as the executor quotes a child's stderr.
std::string lastLine(const std::string& text) {
  size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos)
    return "";
  size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return text.substr(start, end - start + 1);
}

} // namespace

InProcessEngine::InProcessEngine(InProcessEngineOptions options)
    : options_(options), session_(std::make_unique<dq::CompileSession>(options.compilesPerContext)) {
}

InProcessEngine::~InProcessEngine() = default;

int InProcessEngine::contextsCreated() const {
  return session_->contextsCreated();
}

std::shared_ptr<const EngineProgram> InProcessEngine::compile(const onnx::ModelProto& model,
                                                              const exec::Variant& variant, const std::string& label,
                                                              const fs::path& modelFile, const fs::path& artifactFile) {
  auto program = std::make_shared<InProcessProgram>();
  program->device = variant.device;
  program->where = label + " " + modelFile.parent_path().filename().string() + ": ";
  watchdog_.arm(options_.compileTimeoutSeconds, program->where + "compile");
  exec::applyFault(exec::FaultStage::Compile, modelFile.string());
  dq::CompileOptions o;
  o.pipeline = variant.pipeline;
  o.sourceName = model.graph().name();
  dq::CompileResult r = session_->compile(model, o);
  std::string error = r.ok ? "" : r.error;
  if (r.ok) {
    try {
      program->bytes = dq::rt::serializeProgram(r.program, artifactFile.string());
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  watchdog_.disarm();
  if (!error.empty())
    throw exec::ExecError(exec::Stage::Compile, program->where + "compile: " + lastLine("dynqual compile: " + error));
  return program;
}

exec::ExecResult InProcessEngine::execute(const EngineProgram& base, const std::vector<Tensor>& inputs,
                                          const fs::path& programFile) {
  const auto& program = static_cast<const InProcessProgram&>(base);
  watchdog_.arm(options_.runTimeoutSeconds, program.where + "run");
  exec::applyFault(exec::FaultStage::Run, programFile.string());
  exec::ExecResult result;
  std::string error;
  try {
    dq::rt::Program p = dq::rt::deserializeProgram(program.bytes.program, program.bytes.sidecar, programFile.string());
    std::unique_ptr<dq::rt::Device> device = dq::rt::createDevice(program.device);
    std::vector<dq::rt::HostTensor> hostInputs;
    for (const auto& t : inputs)
      hostInputs.push_back(run::toHostTensor(t));
    dq::rt::RunOptions options;
    options.programName = programFile.string();
    dq::rt::RunResult run = dq::rt::runProgram(p, *device, hostInputs, options);
    for (const auto& o : run.outputs)
      result.outputs.push_back(run::fromHostTensor(o));
    for (const auto& [name, value] : run.counters.items())
      result.counters.emplace_back(name, value);
    result.version = p.compilerVersion;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    error = e.what();
  }
  watchdog_.disarm();
  if (!error.empty())
    throw exec::ExecError(exec::Stage::Run, program.where + "run: " + error);
  return result;
}

std::string InProcessEngine::pipelineSpec(const std::string& pipeline) {
  std::string error;
  std::string spec = dq::resolvePipelineSpec(pipeline, &error);
  return error.empty() ? spec : "";
}

} // namespace dynqual::fuzz
