// The three-way oracle check of a model's data sets: dq, the stored reference outputs, ORT CPU.
#include "dynqual/qualify/OracleCheck.h"

#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/onnx/TestDataSets.h"
#include "dynqual/reference/OpRegistry.h"

#include <cmath>
#include <fstream>
#include <set>

namespace fs = std::filesystem;

namespace dynqual::qualify {
namespace {

/// A copy of `model` with every MatMulNBits accuracy_level set to 0; false when none needed it.
bool rewriteAccuracyLevel(onnx::ModelProto& model) {
  bool changed = false;
  for (auto& n : *model.mutable_graph()->mutable_node()) {
    if (n.op_type() != "MatMulNBits")
      continue;
    for (auto& a : *n.mutable_attribute())
      if (a.name() == "accuracy_level" && a.i() != 0) {
        a.set_i(0);
        changed = true;
      }
  }
  return changed;
}

std::vector<Tensor> readAll(const std::vector<fs::path>& files) {
  std::vector<Tensor> out;
  for (const auto& f : files)
    out.push_back(onnxio::readTensorFile(f));
  return out;
}

} // namespace

ElementMask ortUndefinedOutputs(const onnx::ModelProto& model, const std::vector<Tensor>& inputs,
                                const std::vector<Tensor>& outputs) {
  const auto& g = model.graph();
  if (g.node_size() != 1 || g.node(0).op_type() != "GroupQueryAttention" || g.output_size() == 0 || outputs.empty() ||
      g.node(0).output(0) != g.output(0).name() || g.node(0).input_size() < 7)
    return {};
  const auto& n = g.node(0);
  auto inputNamed = [&](const std::string& name) -> const Tensor* {
    for (int i = 0; i < g.input_size() && i < static_cast<int>(inputs.size()); ++i)
      if (g.input(i).name() == name)
        return &inputs[static_cast<std::size_t>(i)];
    return nullptr;
  };
  const Tensor *q = inputNamed(n.input(0)), *seqlens = inputNamed(n.input(5)), *total = inputNamed(n.input(6));
  if (!q || !seqlens || !total || q->rank() != 3 || total->numel() != 1)
    return {};
  const int64_t B = q->dims()[0], S = q->dims()[1];
  if (S != total->getInt(0) || seqlens->numel() != B || outputs[0].numel() % std::max<int64_t>(1, B * S) != 0)
    return {};
  const int64_t width = outputs[0].numel() / std::max<int64_t>(1, B * S);
  ElementMask mask(outputs.size());
  std::vector<bool> m(static_cast<std::size_t>(outputs[0].numel()), false);
  bool any = false;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = seqlens->getInt(b) + 1; s < S; ++s)
      for (int64_t e = 0; e < width; ++e) {
        m[static_cast<std::size_t>((b * S + s) * width + e)] = true;
        any = true;
      }
  if (!any)
    return {};
  mask[0] = std::move(m);
  return mask;
}

OracleTolerance toleranceFor(const onnx::ModelProto& model) {
  OracleTolerance t;
  for (const auto& n : model.graph().node())
    if (n.op_type() == "MatMulNBits")
      t.atol = t.rtol = 5e-2;
  return t;
}

PairCheck checkPair(const std::vector<std::string>& names, const std::vector<Tensor>& actual,
                    const std::vector<Tensor>& expected, const OracleTolerance& tol, const ElementMask& skip) {
  PairCheck p;
  if (actual.size() != expected.size()) {
    p.error = std::to_string(actual.size()) + " outputs against " + std::to_string(expected.size());
    return p;
  }
  int64_t worst = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const std::string name = i < names.size() ? names[i] : "output " + std::to_string(i);
    const Tensor &a = actual[i], &b = expected[i];
    if (a.dims() != b.dims() || a.dtype() != b.dtype()) {
      p.error = "output '" + name + "': " + dtypeName(a.dtype()) + " " + shapeToString(a.dims()) + " against " +
                dtypeName(b.dtype()) + " " + shapeToString(b.dims());
      return p;
    }
    int64_t outside = 0;
    double dot = 0, na = 0, nb = 0;
    const std::vector<bool>* mask = i < skip.size() && !skip[i].empty() ? &skip[i] : nullptr;
    int64_t compared = 0;
    for (int64_t e = 0; e < a.numel(); ++e) {
      if (mask && (*mask)[static_cast<std::size_t>(e)])
        continue;
      ++compared;
      const double x = a.getDouble(e), y = b.getDouble(e);
      if (!std::isfinite(x) || !std::isfinite(y)) {
        const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
        outside += same ? 0 : 1;
        continue;
      }
      const double d = std::fabs(x - y);
      p.maxAbs = std::max(p.maxAbs, d);
      if (d > tol.atol + tol.rtol * std::fabs(y))
        ++outside;
      dot += x * y;
      na += x * x;
      nb += y * y;
    }
    // Cosine of the flattened output; 1 when both sides are zero, 0 when only one is.
    const double cosine = na == 0 && nb == 0 ? 1.0 : (na == 0 || nb == 0 ? 0.0 : dot / std::sqrt(na * nb));
    p.minCosine = std::min(p.minCosine, cosine);
    p.elements += compared;
    p.outside += outside;
    if (outside > worst) {
      worst = outside;
      p.worstOutput = name;
    }
  }
  p.ok = p.outside == 0 && p.minCosine >= tol.minCosine;
  if (!p.ok && p.worstOutput.empty() && !actual.empty())
    p.worstOutput = names.empty() ? "output 0" : names[0];
  return p;
}

std::vector<OracleCase> checkModelAgainstOracles(const fs::path& modelDir, const OracleConfig& config) {
  const std::string name = modelDir.filename().string();
  onnx::ModelProto model = onnxio::loadModel(modelDir / "model.onnx");
  const auto sets = onnxio::discoverTestDataSets(modelDir);
  if (sets.empty())
    throw std::runtime_error(modelDir.string() + ": no test_data_set_* folder to check");
  std::vector<std::string> outNames;
  for (const auto& s : onnxio::describeOutputs(model))
    outNames.push_back(s.name);
  std::set<std::string> opSet;
  for (const auto& n : model.graph().node())
    opSet.insert(reference::opKey(n));
  std::string ops;
  for (const auto& o : opSet)
    ops += (ops.empty() ? "" : ",") + o;
  const OracleTolerance tol = toleranceFor(model);
  const bool gqaOnly = model.graph().node_size() == 1 && model.graph().node(0).op_type() == "GroupQueryAttention";

  // ORT gets its own copy of the folder when accuracy_level must be rewritten.
  fs::path ortDir = modelDir;
  std::string notes;
  if (rewriteAccuracyLevel(model)) {
    ortDir = config.workDir / name / "ort-model";
    fs::create_directories(ortDir);
    std::ofstream out(ortDir / "model.onnx", std::ios::binary);
    if (!model.SerializeToOstream(&out))
      throw std::runtime_error("cannot write " + (ortDir / "model.onnx").string());
    notes = "ORT ran a copy with MatMulNBits accuracy_level rewritten to 0 (level 4 quantizes A to int8)";
  }

  exec::ExecConfig ec;
  ec.workDir = config.workDir / name;
  ec.runTimeoutSeconds = config.timeoutSeconds;
  ec.compileTimeoutSeconds = config.timeoutSeconds;
  exec::Executor executor(ec);
  exec::Arm dqArm, ortArm;
  dqArm.label = "dq";
  dqArm.variant = exec::parseVariant("dq:" + config.pipeline + "@" + config.device);
  dqArm.binDir = config.binDir;
  ortArm.label = "ort";
  ortArm.variant = exec::parseVariant("ort:cpu");
  ortArm.binDir = config.binDir;
  std::string dqPrepError, ortPrepError;
  exec::PreparedModel dqModel, ortModel;
  try {
    dqModel = executor.prepare(dqArm, modelDir);
  } catch (const std::exception& e) {
    dqPrepError = e.what();
  }
  try {
    ortModel = executor.prepare(ortArm, ortDir);
  } catch (const std::exception& e) {
    ortPrepError = e.what();
  }

  std::vector<OracleCase> out;
  for (const auto& set : sets) {
    OracleCase c;
    c.model = name;
    c.dataSet = set.dir.filename().string();
    c.ops = ops;
    c.notes = notes;
    const std::vector<Tensor> ref = readAll(set.outputs);
    std::vector<Tensor> dq, ort;
    exec::TimingRequest once; // correctness only
    c.dqError = dqPrepError;
    c.ortError = ortPrepError;
    if (c.dqError.empty())
      try {
        dq = executor.execute(dqModel, set.inputs, once, ec.workDir / "dq" / c.dataSet).outputs;
      } catch (const std::exception& e) {
        c.dqError = e.what();
      }
    if (c.ortError.empty())
      try {
        ort = executor.execute(ortModel, set.inputs, once, ec.workDir / "ort" / c.dataSet).outputs;
      } catch (const std::exception& e) {
        c.ortError = e.what();
      }
    if (c.dqError.empty())
      c.dqRef = checkPair(outNames, dq, ref, tol);
    // Only a one-node GroupQueryAttention leaves outputs undefined: read the inputs for it alone.
    const ElementMask undefinedInOrt = gqaOnly ? ortUndefinedOutputs(model, readAll(set.inputs), ref) : ElementMask{};
    for (const auto& m : undefinedInOrt)
      for (bool skipped : m)
        c.skippedForOrt += skipped;
    if (c.skippedForOrt > 0)
      c.notes += std::string(c.notes.empty() ? "" : "; ") + std::to_string(c.skippedForOrt) +
                 " output elements at padded query positions left out of the ORT comparisons (ORT leaves them "
                 "undefined)";
    if (c.ortError.empty())
      c.refOrt = checkPair(outNames, ref, ort, tol, undefinedInOrt);
    if (c.dqError.empty() && c.ortError.empty())
      c.dqOrt = checkPair(outNames, dq, ort, tol, undefinedInOrt);
    if (!c.dqError.empty())
      c.verdict = "dq-error";
    else if (!c.ortError.empty())
      c.verdict = "ort-error";
    else if (!c.refOrt.ok)
      c.verdict = "oracle-disagreement";
    else if (!c.dqRef.ok || !c.dqOrt.ok)
      c.verdict = "dq-mismatch";
    else
      c.verdict = "pass";
    out.push_back(std::move(c));
  }
  return out;
}

} // namespace dynqual::qualify
