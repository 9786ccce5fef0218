#include "dynqual/fuzz/OriginTrace.h"

#include "dynqual/fuzz/Bucket.h"
#include "dynqual/fuzz/Generator.h"
#include "dynqual/fuzz/Minimizer.h"
#include "dynqual/onnx/GraphSignature.h"

#include <chrono>
#include <map>

namespace fs = std::filesystem;

namespace dynqual::fuzz {

namespace {

std::string nodeName(const onnx::NodeProto& n, int k) {
  return n.name().empty() ? "#" + std::to_string(k) : n.name();
}

} // namespace

std::string OriginTrace::note() const {
  std::string where = node + " (" + op + ")";
  switch (result) {
  case Result::Difference:
    return "origin: " + where + " gives " + kind + " first (" + std::to_string(cuts) + " cut(s) run): " + detail;
  case Result::Trap:
    return "origin: the cut after " + where + " gives " + kind + " before any output differs (" + std::to_string(cuts) +
           " cut(s) run): " + detail;
  case Result::Clean:
    return "origin not traced: no cut of the minimized graph fails (" + std::to_string(cuts) + " cut(s) run, " +
           std::to_string(skipped) + " did not compile)";
  case Result::Error:
    break;
  }
  return "origin not traced: " + detail;
}

bool traceableSymptom(const std::string& symptom) {
  return symptom == "run-trap" || symptom == "run-crash" || symptom == "wrong-shape" || symptom == "mismatch";
}

bool cutAfterNode(const onnx::ModelProto& model, int k, onnx::ModelProto& out) {
  if (k < 0 || k >= model.graph().node_size())
    return false;
  auto types = inferredTypes(model);
  const auto& n = model.graph().node(k);
  out = model;
  auto* g = out.mutable_graph();
  g->clear_output();
  for (const auto& name : n.output()) {
    auto it = types.find(name);
    if (name.empty() || it == types.end() || !it->second.has_tensor_type() || !it->second.tensor_type().has_shape() ||
        it->second.tensor_type().elem_type() == 0)
      continue;
    auto* o = g->add_output();
    o->set_name(name);
    auto* tt = o->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(it->second.tensor_type().elem_type());
    auto* shape = tt->mutable_shape();
    // Unknown dims: a declared dim would make a wrong extent a boundary trap, not a difference.
    for (int d = 0; d < it->second.tensor_type().shape().dim_size(); ++d)
      shape->add_dim();
  }
  if (g->output_size() == 0)
    return false;
  removeDeadNodes(out);
  return true;
}

OriginTrace traceOrigin(const PreparedCase& minimized, const OracleConfig& config, const std::string& variant,
                        const fs::path& workDir, const reference::EvaluateLimits& limits) {
  OriginTrace t;
  auto t0 = std::chrono::steady_clock::now();
  auto finish = [&]() {
    t.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::error_code ec;
    fs::remove_all(workDir, ec);
    return t;
  };
  try {
    if (minimized.bindings.empty() || minimized.inputs.empty()) {
      t.detail = "the minimized case has no binding";
      return finish();
    }
    std::map<std::string, const Tensor*> byName;
    auto ins = onnxio::describeInputs(minimized.model);
    for (size_t i = 0; i < ins.size() && i < minimized.inputs[0].size(); ++i)
      byName[ins[i].name] = &minimized.inputs[0][i];
    OracleConfig oc = config;
    oc.ortOracle = false;
    oc.variants = {exec::parseVariant(variant)};
    const auto& nodes = minimized.model.graph().node();
    for (int k = 0; k < nodes.size(); ++k) {
      onnx::ModelProto cut;
      if (!cutAfterNode(minimized.model, k, cut))
        continue; // no output of known rank: nothing to compare here, the next cut covers it
      PreparedCase pc;
      pc.model = cut;
      pc.bindings = {minimized.bindings[0]};
      std::vector<Tensor> inputs;
      for (const auto& in : onnxio::describeInputs(cut)) {
        auto it = byName.find(in.name);
        if (it == byName.end()) {
          t.detail = "the cut after " + nodeName(nodes[k], k) + " has input '" + in.name + "' the case does not";
          return finish();
        }
        inputs.push_back(*it->second);
      }
      for (const auto& o : onnxio::describeOutputs(cut))
        pc.outputNames.push_back(o.name);
      pc.expected.push_back(reference::evaluate(cut, inputs, limits));
      pc.inputs.push_back(std::move(inputs));
      OracleResult r = runOracle(pc, oc, workDir / ("cut_" + std::to_string(k)));
      ++t.cuts;
      const Finding* diff = nullptr;
      const Finding* other = nullptr;
      for (const auto& f : r.findings) {
        if (f.symptom == "wrong-shape" || (f.symptom == "mismatch" && !diff))
          diff = &f;
        else if (f.symptom != "wrong-shape" && f.symptom != "mismatch" && !other)
          other = &f;
      }
      if (!diff && !other)
        continue;
      if (other && isCompileSymptom(other->symptom)) {
        // The whole graph compiled (the finding is a run symptom): a cut that does not is the
        // cut's own doing (a rank the declaration guessed wrong), so the next cut decides.
        ++t.skipped;
        continue;
      }
      t.node = nodeName(nodes[k], k);
      t.op = nodes[k].op_type();
      // A failure of the cut's own run comes before any comparison of its outputs.
      const Finding& f = other ? *other : *diff;
      t.result = other ? OriginTrace::Result::Trap : OriginTrace::Result::Difference;
      t.kind = f.symptom;
      t.detail = f.detail;
      if (other)
        t.trapOrigin = originOp(cut, f.detail);
      return finish();
    }
    t.result = OriginTrace::Result::Clean;
  } catch (const std::exception& e) {
    t.result = OriginTrace::Result::Error;
    t.detail = e.what();
  }
  return finish();
}

} // namespace dynqual::fuzz
