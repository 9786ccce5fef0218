#include "dynqual/fuzz/Oracle.h"

#include "dynqual/cases/CaseSource.h"
#include "dynqual/compare/Compare.h"
#include "dynqual/exec/FaultInjection.h"
#include "dynqual/modelgen/GraphBuilder.h"
#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/InputGenerator.h"
#include "dynqual/onnx/ShapeBindings.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/reference/Interpreter.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <chrono>
#include <new>
#include <set>

namespace fs = std::filesystem;

namespace dynqual::fuzz {

namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string classifyExecError(const exec::ExecError& e) {
  std::string m = e.what();
  bool compile = e.stage() == exec::Stage::Compile;
  if (m.find("timed out") != std::string::npos)
    return compile ? "compile-hang" : "run-hang";
  if (m.find("killed by signal") != std::string::npos || m.find("without a JSON result") != std::string::npos)
    return compile ? "compile-crash" : "run-crash";
  return compile ? "compile-error" : "run-trap";
}

std::string classifyComparison(const compare::Comparison& c) {
  for (const auto& o : c.outputs)
    if (o.verdict == compare::Verdict::Fail &&
        (o.reason.rfind("shape", 0) == 0 || o.reason.find("dtype") != std::string::npos))
      return "wrong-shape";
  if (c.reason.find("count") != std::string::npos || c.reason.find("outputs") != std::string::npos)
    return "wrong-shape";
  return "mismatch";
}

} // namespace

bool isCompileSymptom(const std::string& s) {
  return s.rfind("compile-", 0) == 0;
}

void checkModel(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw InvalidCase(std::string("onnx checker: ") + e.what());
  }
  onnx::ModelProto copy = model;
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/true, /*strict_mode=*/1, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    throw InvalidCase(std::string("onnx shape inference: ") + e.what());
  }
}

namespace {

/// Checks `model` (when `check`) and reads its input and output signatures into `pc` (the
/// outputs' into `outSpecs`).
std::vector<onnxio::ValueSpec> beginCase(PreparedCase& pc, const onnx::ModelProto& model, bool check,
                                         std::vector<onnxio::ValueSpec>& outSpecs) {
  pc.model = model;
  auto t0 = std::chrono::steady_clock::now();
  if (check)
    checkModel(model);
  pc.checkMs = msSince(t0);
  std::vector<onnxio::ValueSpec> specs, outs;
  try {
    specs = onnxio::describeInputs(model);
    outs = onnxio::describeOutputs(model);
  } catch (const std::exception& e) {
    throw InvalidCase(std::string("signature: ") + e.what());
  }
  for (const auto& o : outs)
    pc.outputNames.push_back(o.name);
  // Declared output dims bind the case only where the model is checked (generated and minimized
  // cases); a corpus model replayed as it is keeps whatever it declares.
  if (check)
    outSpecs = outs;
  return specs;
}

/// Inputs (seeded per binding index, `dataIndex[b]`) and reference outputs of every binding. A
/// binding on which an output's computed shape contradicts a static dim the model declares is
/// invalid: the compiled program checks declared dims at its boundary (an ABI cast), so such a
/// case would trap for a reason of its own. Generated cases declare only dims they prove; the
/// minimizer's cuts and promotions keep declarations from the larger graph, and without this
/// rule a reduction drifts to such a trap.
void finishCase(PreparedCase& pc, const std::vector<onnxio::ValueSpec>& specs,
                const std::vector<onnxio::ValueSpec>& outSpecs, uint64_t seed, const std::vector<size_t>& dataIndex,
                const reference::EvaluateLimits& limits) {
  auto t1 = std::chrono::steady_clock::now();
  for (size_t b = 0; b < pc.bindings.size(); ++b) {
    try {
      auto shapes = onnxio::bindShapes(specs, pc.bindings[b].binding);
      pc.inputs.push_back(onnxio::generateInputs(specs, shapes, seed + 101 * (dataIndex[b] + 1)));
      exec::applyFault(exec::FaultStage::Reference, pc.model.graph().name());
      pc.expected.push_back(reference::evaluate(pc.model, pc.inputs.back(), limits));
    } catch (const std::bad_alloc&) {
      // The reference cannot run it: the case is invalid, whatever the compiled program does.
      throw InvalidCase("reference on binding '" + pc.bindings[b].description + "': out of memory (std::bad_alloc)");
    } catch (const std::exception& e) {
      throw InvalidCase("reference on binding '" + pc.bindings[b].description + "': " + e.what());
    }
    if (outSpecs.empty())
      continue;
    std::vector<std::vector<int64_t>> computed;
    for (const auto& t : pc.expected.back())
      computed.push_back(t.dims());
    std::string contradiction = onnxio::declaredOutputContradiction(outSpecs, computed);
    if (!contradiction.empty())
      throw InvalidCase("declared output on binding '" + pc.bindings[b].description + "': " + contradiction);
  }
  pc.referenceMs = msSince(t1);
}

} // namespace

PreparedCase prepareCase(const onnx::ModelProto& model, int k, uint64_t seed, int onlyBinding, bool check,
                         const reference::EvaluateLimits& limits) {
  PreparedCase pc;
  std::vector<onnxio::ValueSpec> outSpecs;
  std::vector<onnxio::ValueSpec> specs = beginCase(pc, model, check, outSpecs);
  pc.bindings = cases::chooseBindings(specs, {}, seed, cases::fuzzPolicy(k));
  std::vector<size_t> dataIndex;
  for (size_t b = 0; b < pc.bindings.size(); ++b)
    dataIndex.push_back(b);
  if (onlyBinding >= 0) {
    if (onlyBinding >= static_cast<int>(pc.bindings.size()))
      throw InvalidCase("binding " + std::to_string(onlyBinding) + " does not exist");
    pc.bindings = {pc.bindings[static_cast<size_t>(onlyBinding)]};
    dataIndex = {static_cast<size_t>(onlyBinding)};
  }
  finishCase(pc, specs, outSpecs, seed, dataIndex, limits);
  return pc;
}

std::string describeBinding(const onnxio::DimBinding& binding) {
  std::string text;
  for (const auto& [label, v] : binding.byLabel)
    text += (text.empty() ? "" : " ") + label + "=" + std::to_string(v);
  for (const auto& [pos, v] : binding.byPosition)
    text += (text.empty() ? "" : " ") +
            ("input" + std::to_string(pos.first) + "[" + std::to_string(pos.second) + "]=" + std::to_string(v));
  return text.empty() ? "static" : text;
}

PreparedCase prepareCaseOn(const onnx::ModelProto& model, const onnxio::DimBinding& binding, uint64_t seed,
                           int dataIndex, bool check, const reference::EvaluateLimits& limits) {
  PreparedCase pc;
  std::vector<onnxio::ValueSpec> outSpecs;
  std::vector<onnxio::ValueSpec> specs = beginCase(pc, model, check, outSpecs);
  pc.bindings.push_back({"shrunk", describeBinding(binding), binding});
  finishCase(pc, specs, outSpecs, seed, {static_cast<size_t>(std::max(dataIndex, 0))}, limits);
  return pc;
}

OracleResult runOracle(const PreparedCase& pc, const OracleConfig& config, const fs::path& workDir) {
  OracleResult result;
  std::vector<exec::Variant> variants = config.variants;
  size_t referenceVariants = variants.size();
  if (config.ortOracle)
    variants.push_back(exec::parseVariant("ort:cpu"));
  CaseEngine* engine = config.env.empty() ? config.engine.get() : nullptr;
  auto inEngine = [&](const exec::Variant& v) { return engine && v.kind == exec::Variant::Kind::Dq; };
  bool needFiles = false;
  for (const auto& v : variants)
    needFiles |= !inEngine(v);

  // The child path's places; the engine names them in messages without writing them.
  fs::path caseDir = workDir / "case";
  std::vector<onnxio::ValueSpec> specs = onnxio::describeInputs(pc.model);
  std::vector<std::vector<fs::path>> inputFiles(pc.bindings.size());
  if (needFiles) {
    fs::create_directories(caseDir);
    modelgen::writeModel(pc.model, caseDir / "model.onnx");
  }
  for (size_t b = 0; b < pc.bindings.size() && needFiles; ++b) {
    fs::path dir = workDir / ("binding_" + std::to_string(b));
    fs::create_directories(dir);
    for (size_t i = 0; i < pc.inputs[b].size(); ++i) {
      inputFiles[b].push_back(dir / ("input_" + std::to_string(i) + ".pb"));
      onnxio::writeTensorFile(inputFiles[b].back(), pc.inputs[b][i], specs[i].name);
    }
  }
  exec::ExecConfig ec;
  ec.workDir = workDir / "arms";
  ec.compileTimeoutSeconds = config.compileTimeoutSeconds;
  ec.runTimeoutSeconds = config.runTimeoutSeconds;
  exec::Executor executor(ec);

  std::set<std::pair<std::string, std::string>> seen;
  auto report = [&](Finding f) {
    if (seen.insert({f.variant, f.symptom}).second)
      result.findings.push_back(std::move(f));
  };
  compare::CompareOptions bitExact;
  bitExact.bitExact = true;

  // outputs[v][b]: what variant v computed on binding b, when it ran.
  std::vector<std::vector<std::optional<std::vector<Tensor>>>> outputs(
      variants.size(), std::vector<std::optional<std::vector<Tensor>>>(pc.bindings.size()));
  bool firstDq = true;
  for (size_t v = 0; v < variants.size(); ++v) {
    exec::Arm arm;
    arm.label = "v" + std::to_string(v);
    arm.variant = variants[v];
    arm.binDir = config.binDir;
    arm.env = config.env;
    bool isOracle = v >= referenceVariants;
    std::string vt = variants[v].text();
    exec::PreparedModel pm;
    std::shared_ptr<const EngineProgram> program;
    // Where the executor would put this arm's artifact (exec::Executor::prepare).
    fs::path programFile = ec.workDir / arm.label / caseDir.filename() / "model.dqp";
    try {
      auto t0 = std::chrono::steady_clock::now();
      if (inEngine(arm.variant))
        program = engine->compile(pc.model, arm.variant, arm.label, caseDir / "model.onnx", programFile);
      else
        pm = executor.prepare(arm, caseDir);
      result.compileMs += msSince(t0);
    } catch (const exec::ExecError& e) {
      if (e.stage() == exec::Stage::Infra)
        throw;
      report({isOracle ? "oracle-disagreement" : classifyExecError(e), e.what(), vt, -1, ""});
      continue;
    }
    bool countThis = firstDq && variants[v].kind == exec::Variant::Kind::Dq;
    if (countThis)
      firstDq = false;
    for (size_t b = 0; b < pc.bindings.size(); ++b) {
      try {
        auto t0 = std::chrono::steady_clock::now();
        exec::ExecResult r;
        if (program) {
          r = engine->execute(*program, pc.inputs[b], programFile);
        } else {
          fs::path out = workDir / ("out_" + std::to_string(v) + "_" + std::to_string(b));
          fs::create_directories(out);
          r = executor.execute(pm, inputFiles[b], {}, out);
        }
        result.runMs += msSince(t0);
        if (countThis)
          for (const auto& [name, value] : r.counters)
            result.counters[name] += value;
        compare::Comparison c = compare::compareOutputs(pc.outputNames, r.outputs, pc.expected[b], bitExact);
        if (c.verdict == compare::Verdict::Fail)
          report({isOracle ? "oracle-disagreement" : classifyComparison(c), c.reason, vt, static_cast<int>(b),
                  pc.bindings[b].description});
        outputs[v][b] = std::move(r.outputs);
      } catch (const exec::ExecError& e) {
        if (e.stage() == exec::Stage::Infra)
          throw;
        report({isOracle ? "oracle-disagreement" : classifyExecError(e), e.what(), vt, static_cast<int>(b),
                pc.bindings[b].description});
      }
    }
  }
  // Variants of the same case must agree with each other, not only with the reference.
  for (size_t v = 1; v < referenceVariants; ++v)
    for (size_t b = 0; b < pc.bindings.size(); ++b) {
      if (!outputs[0][b] || !outputs[v][b])
        continue;
      compare::Comparison c = compare::compareOutputs(pc.outputNames, *outputs[v][b], *outputs[0][b], bitExact);
      if (c.verdict == compare::Verdict::Fail)
        report({"variant-disagreement", variants[0].text() + " vs " + variants[v].text() + ": " + c.reason,
                variants[v].text(), static_cast<int>(b), pc.bindings[b].description});
    }
  return result;
}

} // namespace dynqual::fuzz
