#include "dynqual/run/ModelRun.h"

#include "dynqual/cases/CaseSource.h"
#include "dynqual/compare/MovementGraph.h"
#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/InputGenerator.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/onnx/TestDataSets.h"
#include "dynqual/reference/Interpreter.h"
#include "dynqual/scope/DataQuirks.h"

#include <algorithm>
#include <chrono>

namespace fs = std::filesystem;

namespace dynqual::run {

const char* modelStatusName(ModelStatus s) {
  switch (s) {
  case ModelStatus::Passed:
    return "pass";
  case ModelStatus::Failed:
    return "FAIL";
  case ModelStatus::Skipped:
    return "skip";
  }
  return "?";
}

std::vector<fs::path> expandModelDirs(const std::vector<fs::path>& dirs) {
  std::vector<fs::path> models;
  for (const auto& d : dirs) {
    if (!fs::is_directory(d))
      throw std::runtime_error(d.string() + ": not a folder (expected a model folder or a folder of model folders)");
    if (fs::exists(d / "model.onnx")) {
      models.push_back(d);
      continue;
    }
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(d))
      if (entry.is_directory() && fs::exists(entry.path() / "model.onnx"))
        found.push_back(entry.path());
    if (found.empty())
      throw std::runtime_error(d.string() + ": holds no model.onnx and no model folders");
    std::sort(found.begin(), found.end());
    models.insert(models.end(), found.begin(), found.end());
  }
  return models;
}

namespace {

/// Runs one case of the compiled model through the executor. Throws std::runtime_error: the
/// executor's one line without its arm/model prefix (a crash, a timeout, an oom under the memory
/// limit, the runtime's error), or a replay backend's error as it is.
exec::ExecResult execute(exec::Executor& executor, const exec::PreparedModel& model, const std::string& caseId,
                         const std::vector<fs::path>& inputFiles, const fs::path& outDir) {
  try {
    return executor.execute(model, caseId, inputFiles, exec::TimingRequest{}, outDir);
  } catch (const exec::ExecError& e) {
    throw std::runtime_error(e.detail());
  }
}

std::vector<std::vector<int64_t>> shapesOf(const std::vector<Tensor>& ts) {
  std::vector<std::vector<int64_t>> s;
  for (const auto& t : ts)
    s.push_back(t.dims());
  return s;
}

/// Per-input value ranges for generated data: integer inputs keep the range seen in the stored
/// inputs (indices and masks stay valid), floats are uniform in [-1, 1).
std::vector<onnxio::GeneratorOptions> rangesFrom(const std::vector<onnxio::ValueSpec>& specs,
                                                 const std::vector<Tensor>& stored) {
  std::vector<onnxio::GeneratorOptions> opts(specs.size());
  for (size_t i = 0; i < specs.size() && i < stored.size(); ++i) {
    if (!isIntegerDType(stored[i].dtype()) || stored[i].numel() == 0)
      continue;
    auto v = stored[i].toInts();
    opts[i].intLow = *std::min_element(v.begin(), v.end());
    opts[i].intHigh = *std::max_element(v.begin(), v.end());
  }
  return opts;
}

std::vector<Tensor> generate(const std::vector<onnxio::ValueSpec>& specs,
                             const std::vector<std::vector<int64_t>>& shapes,
                             const std::vector<onnxio::GeneratorOptions>& ranges, uint64_t seed) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < specs.size(); ++i)
    inputs.push_back(onnxio::generateInputs({specs[i]}, {shapes[i]}, seed + 7919 * i, ranges[i]).front());
  return inputs;
}

/// Writes input_N.pb files for the runtime process into `dir` (created).
std::vector<fs::path> writeInputs(const fs::path& dir, const std::vector<Tensor>& inputs,
                                  const std::vector<onnxio::ValueSpec>& specs) {
  fs::create_directories(dir);
  std::vector<fs::path> files;
  for (size_t i = 0; i < inputs.size(); ++i) {
    files.push_back(dir / ("input_" + std::to_string(i) + ".pb"));
    onnxio::writeTensorFile(files.back(), inputs[i], i < specs.size() ? specs[i].name : "");
  }
  return files;
}

/// Stored data that follows a documented, verified quirk excuses the whole model.
ModelResult skipForQuirk(ModelResult& r, const std::string& quirk) {
  r.status = ModelStatus::Skipped;
  r.skipReason = scope::SkipReason::DocumentedDataQuirk;
  r.detail = quirk;
  r.cases.clear();
  return r;
}

bool passed(const std::optional<compare::Comparison>& c) {
  return c && c->verdict == compare::Verdict::Pass;
}

} // namespace

ModelResult runModel(const fs::path& modelDir, const RunConfig& config, const CompileFn& compile) {
  ModelResult r;
  r.dir = modelDir;
  r.name = modelDir.filename().string();
  try {
    onnx::ModelProto model = onnxio::loadModel(modelDir / "model.onnx");
    std::string detail;
    if (auto reason = scope::classifyModel(model, detail)) {
      r.status = ModelStatus::Skipped;
      r.skipReason = reason;
      r.detail = detail;
      if (*reason == scope::SkipReason::OpOutsideSupportedSet)
        r.missingOps = scope::missingOps(model);
      return r;
    }
    auto inSpecs = onnxio::describeInputs(model);
    auto outSpecs = onnxio::describeOutputs(model);
    for (const auto& o : outSpecs)
      r.outputNames.push_back(o.name);
    r.bitExact = compare::isDataMovementOnly(model);
    compare::CompareOptions cmpOpts = config.compare;
    cmpOpts.bitExact = r.bitExact;

    fs::path work = config.workDir / r.name;
    fs::create_directories(work);
    fs::path artifact = work / "model.dqp";
    auto t0 = std::chrono::steady_clock::now();
    try {
      compile(model, config.pipeline, artifact);
    } catch (const std::exception& e) {
      r.status = ModelStatus::Failed;
      r.detail = std::string("compile: ") + e.what();
      return r;
    }
    r.compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    r.artifact = artifact;

    // Every case runs through the one executor, with its time and memory limits.
    exec::ExecConfig execConfig;
    execConfig.workDir = work;
    execConfig.runTimeoutSeconds = config.execTimeoutSeconds;
    execConfig.memoryLimitBytes = config.memoryLimitBytes;
    execConfig.replay = config.replay;
    exec::Executor executor(execConfig);
    exec::PreparedModel prepared;
    prepared.arm.label = "run";
    prepared.arm.variant.device = config.device;
    prepared.arm.variant.pipeline = config.pipeline;
    prepared.arm.binDir = config.execPath.parent_path();
    prepared.arm.execPath = config.execPath;
    prepared.modelName = r.name;
    prepared.modelFile = modelDir / "model.onnx";
    prepared.artifact = artifact;

    auto sets = onnxio::discoverTestDataSets(modelDir);
    std::vector<Tensor> firstInputs;
    for (size_t s = 0; s < sets.size(); ++s) {
      CaseResult c;
      c.name = sets[s].dir.filename().string();
      c.kind = "stored";
      try {
        auto [inputs, expected] = scope::readStoredDataSet(model, sets[s]);
        if (s == 0)
          firstInputs = inputs;
        c.inputShapes = shapesOf(inputs);
        if (scope::storedShapeContradictsDeclaration(model, inputs))
          if (auto quirk = scope::verifiedQuirk(r.name, model, inputs, expected))
            return skipForQuirk(r, *quirk);
        std::vector<Tensor> ref = reference::evaluate(model, inputs);
        c.referenceVsStored = compare::compareOutputs(r.outputNames, ref, expected, cmpOpts);
        if (!passed(c.referenceVsStored))
          if (auto quirk = scope::verifiedQuirk(r.name, model, inputs, expected))
            return skipForQuirk(r, *quirk);
        // Inputs are rewritten as read, so the runtime sees what the harness saw (quirks).
        fs::path caseDir = work / c.name;
        c.inputFiles = writeInputs(caseDir, inputs, inSpecs);
        exec::ExecResult run = execute(executor, prepared, c.name, c.inputFiles, caseDir / "out");
        c.counters = run.counters;
        c.executeMs = run.executeMs;
        c.vsExpected = compare::compareOutputs(r.outputNames, run.outputs, expected, cmpOpts);
        c.vsReference = compare::compareOutputs(r.outputNames, run.outputs, ref, cmpOpts);
        c.passed = passed(c.vsExpected) && passed(c.vsReference) && passed(c.referenceVsStored);
        if (!passed(c.referenceVsStored))
          c.error = "reference defect: " + c.referenceVsStored->reason;
        else if (!c.passed)
          c.error = passed(c.vsExpected) ? c.vsReference->reason : c.vsExpected->reason;
      } catch (const std::exception& e) {
        c.error = e.what();
      }
      r.cases.push_back(std::move(c));
    }

    auto traced = shapesOf(firstInputs);
    auto bindings = cases::chooseBindings(inSpecs, traced, config.seed, cases::runPolicy(config.extraBindings));
    auto zeroAlts = onnxio::zeroAlternatives(inSpecs, traced);
    auto ranges = rangesFrom(inSpecs, firstInputs);
    for (size_t b = 0; b < bindings.size(); ++b) {
      // A zero-size binding is tried on each dynamic dim in turn until the model admits one.
      std::vector<onnxio::NamedBinding> candidates = {bindings[b]};
      if (bindings[b].kind == "zero")
        candidates = zeroAlts;
      CaseResult c;
      c.kind = "binding";
      // The reference decides admission before the compiled program runs: it must accept the
      // shapes and compute outputs that agree with the model's own declared static dims.
      cases::Admission admission = cases::admitBinding(
          model, candidates, inSpecs, outSpecs, [&](const std::vector<std::vector<int64_t>>& shapes) {
            return generate(inSpecs, shapes, ranges, config.seed + 101 * b);
          });
      c.name = "binding " + admission.binding.kind;
      c.binding = admission.binding.description;
      c.inputShapes = admission.inputShapes;
      const std::vector<Tensor>& inputs = admission.inputs;
      const std::vector<Tensor>& ref = admission.expected;
      if (!admission.admitted) {
        c.skipped = true;
        c.error = "not admitted by the model: " + admission.rejected;
        r.cases.push_back(std::move(c));
        continue;
      }
      try {
        const std::string caseId = "binding_" + std::to_string(b);
        fs::path caseDir = work / caseId;
        c.inputFiles = writeInputs(caseDir, inputs, inSpecs);
        exec::ExecResult run = execute(executor, prepared, caseId, c.inputFiles, caseDir / "out");
        c.counters = run.counters;
        c.executeMs = run.executeMs;
        c.vsExpected = compare::compareOutputs(r.outputNames, run.outputs, ref, cmpOpts);
        c.passed = passed(c.vsExpected);
        if (!c.passed)
          c.error = c.vsExpected->reason;
      } catch (const std::exception& e) {
        c.error = e.what();
      }
      r.cases.push_back(std::move(c));
    }

    bool ok = std::all_of(r.cases.begin(), r.cases.end(), [](const CaseResult& c) { return c.passed || c.skipped; });
    r.status = ok ? ModelStatus::Passed : ModelStatus::Failed;
    if (!ok)
      for (const auto& c : r.cases)
        if (!c.passed && !c.skipped) {
          r.detail = c.name + ": " + c.error;
          break;
        }
  } catch (const std::exception& e) {
    r.status = ModelStatus::Failed;
    r.detail = e.what();
  }
  return r;
}

} // namespace dynqual::run
