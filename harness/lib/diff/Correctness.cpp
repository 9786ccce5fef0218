// Correctness comes first: each arm against the CPU reference, and arm against arm, on every
// stored data set (or generated bindings for a model without data). Any failure fails the gate.
#include "dynqual/diff/Correctness.h"

#include "dynqual/cases/CaseSource.h"
#include "dynqual/compare/MovementGraph.h"
#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/InputGenerator.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/onnx/TestDataSets.h"
#include "dynqual/reference/Interpreter.h"

namespace fs = std::filesystem;

namespace dynqual::diff {

namespace {

bool passed(const compare::Comparison& c) {
  return c.verdict == compare::Verdict::Pass;
}

/// Stored data sets as-is; else two generated bindings ("ones" and "asymmetric" when dynamic, or
/// the static shape) written under `work`.
std::vector<CheckCase> casesFor(const fs::path& modelDir, const onnx::ModelProto& model, const fs::path& work,
                                uint64_t seed) {
  std::vector<CheckCase> cases;
  for (const auto& set : onnxio::discoverTestDataSets(modelDir))
    cases.push_back({set.dir.filename().string(), set.inputs});
  if (!cases.empty())
    return cases;
  auto specs = onnxio::describeInputs(model);
  for (const auto& b : cases::chooseBindings(specs, {}, seed, cases::abPolicy())) {
    auto shapes = onnxio::bindShapes(specs, b.binding);
    auto inputs = onnxio::generateInputs(specs, shapes, seed);
    fs::path dir = work / ("binding_" + b.kind);
    fs::create_directories(dir);
    CheckCase c{"binding " + b.kind, {}};
    for (size_t i = 0; i < inputs.size(); ++i) {
      c.inputs.push_back(dir / ("input_" + std::to_string(i) + ".pb"));
      onnxio::writeTensorFile(c.inputs.back(), inputs[i], specs[i].name);
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

std::map<std::string, uint64_t> toMap(const std::vector<std::pair<std::string, uint64_t>>& v) {
  return {v.begin(), v.end()};
}

} // namespace

PreparedPair checkModel(const fs::path& modelDir, const AbOptions& options, exec::Executor& executor,
                        ModelCheck& check) {
  PreparedPair pair;
  check.model = modelDir.filename().string();
  onnx::ModelProto model;
  try {
    model = onnxio::loadModel(modelDir / "model.onnx");
  } catch (const std::exception& e) {
    check.detail = e.what();
    return pair;
  }
  check.bitExact = compare::isDataMovementOnly(model);
  compare::CompareOptions cmp = options.compare;
  cmp.bitExact = check.bitExact;
  std::vector<std::string> names;
  for (const auto& o : onnxio::describeOutputs(model))
    names.push_back(o.name);

  // Infra errors propagate: an unusable arm is not a property of this model.
  auto prepare = [&](const exec::Arm& arm, std::optional<exec::PreparedModel>& out) {
    try {
      out = executor.prepare(arm, modelDir);
    } catch (const exec::ExecError& e) {
      if (e.stage() == exec::Stage::Infra)
        throw;
      if (check.detail.empty())
        check.detail = e.what();
    }
  };
  prepare(options.base, pair.base);
  prepare(options.head, pair.head);
  if (pair.base) {
    check.baseArtifactBytes = pair.base->artifactBytes;
    check.baseCompileMs = pair.base->compileMs;
  }
  if (pair.head) {
    check.headArtifactBytes = pair.head->artifactBytes;
    check.headCompileMs = pair.head->compileMs;
  }
  if (!pair.base || !pair.head)
    return pair;

  fs::path work = executor.config().workDir / "cases" / check.model;
  std::vector<CheckCase> cases;
  try {
    cases = casesFor(modelDir, model, work, options.policy.seed);
  } catch (const std::exception& e) {
    check.detail = "inputs: " + std::string(e.what());
    return pair;
  }
  for (const auto& c : cases) {
    CaseCheck cc;
    cc.name = c.name;
    std::vector<Tensor> inputs, ref;
    try {
      for (const auto& f : c.inputs)
        inputs.push_back(onnxio::readTensorFile(f));
      ref = reference::evaluate(model, inputs);
    } catch (const std::exception& e) {
      cc.baseError = cc.headError = std::string("reference: ") + e.what();
      check.cases.push_back(std::move(cc));
      continue;
    }
    auto runArm = [&](const exec::PreparedModel& pm, std::string& error) -> std::optional<exec::ExecResult> {
      try {
        return executor.execute(pm, c.inputs, {}, work / pm.arm.label / c.name);
      } catch (const exec::ExecError& e) {
        if (e.stage() == exec::Stage::Infra)
          throw;
        error = e.what();
        return std::nullopt;
      }
    };
    auto b = runArm(*pair.base, cc.baseError);
    auto h = runArm(*pair.head, cc.headError);
    if (b) {
      cc.baseVsReference = compare::compareOutputs(names, b->outputs, ref, cmp);
      if (check.baseCounters.empty())
        check.baseCounters = toMap(b->counters);
      check.baseVersion = b->version;
    }
    if (h) {
      cc.headVsReference = compare::compareOutputs(names, h->outputs, ref, cmp);
      if (check.headCounters.empty())
        check.headCounters = toMap(h->counters);
      check.headVersion = h->version;
    }
    if (b && h)
      cc.headVsBase = compare::compareOutputs(names, h->outputs, b->outputs, cmp);
    cc.passed = b && h && passed(cc.baseVsReference) && passed(cc.headVsReference) && passed(cc.headVsBase);
    if (!cc.passed && check.detail.empty()) {
      std::string why = !cc.baseError.empty()         ? cc.baseError
                        : !cc.headError.empty()       ? cc.headError
                        : !passed(cc.baseVsReference) ? "base vs reference: " + cc.baseVsReference.reason
                        : !passed(cc.headVsReference) ? "head vs reference: " + cc.headVsReference.reason
                                                      : "head vs base: " + cc.headVsBase.reason;
      check.detail = c.name + ": " + why;
    }
    if (pair.timedInputs.empty() && cc.passed)
      pair.timedInputs = c.inputs;
    check.cases.push_back(std::move(cc));
  }
  check.passed = !check.cases.empty() &&
                 std::all_of(check.cases.begin(), check.cases.end(), [](const CaseCheck& c) { return c.passed; });
  if (check.cases.empty() && check.detail.empty())
    check.detail = "no case to check";
  return pair;
}

} // namespace dynqual::diff
