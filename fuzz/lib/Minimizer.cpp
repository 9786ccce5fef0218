#include "dynqual/fuzz/Minimizer.h"

#include "dynqual/fuzz/Generator.h"

#include <onnx/shape_inference/implementation.h>

#include <map>

namespace dynqual::fuzz {

namespace {

/// Inferred (or declared) types of every value of `model`.
std::map<std::string, onnx::TypeProto> valueTypes(const onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  std::map<std::string, onnx::TypeProto> types;
  try {
    // Data propagation follows Shape->Gather->Concat chains, so computed reshapes get a rank.
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0, /*data_prop=*/true);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
    return types;
  }
  for (const auto& v : copy.graph().value_info())
    types[v.name()] = v.type();
  for (const auto& v : copy.graph().input())
    types[v.name()] = v.type();
  for (const auto& v : copy.graph().output())
    types[v.name()] = v.type();
  return types;
}

bool usable(const onnx::TypeProto& t) { return t.has_tensor_type() && t.tensor_type().has_shape(); }

bool isGraphInput(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& v : m.graph().input())
    if (v.name() == name)
      return true;
  return false;
}

/// The graph with `value` as its only output, or false when its type is not known.
bool cutAfter(const onnx::ModelProto& m, const std::string& value, onnx::ModelProto& out) {
  auto types = valueTypes(m);
  auto it = types.find(value);
  if (it == types.end() || !usable(it->second) || isGraphInput(m, value))
    return false;
  out = m;
  out.mutable_graph()->clear_output();
  auto* o = out.mutable_graph()->add_output();
  o->set_name(value);
  *o->mutable_type() = it->second;
  removeDeadNodes(out);
  return true;
}

/// The graph with node `k` removed and its first output replaced by its first input.
bool bypass(const onnx::ModelProto& m, int k, onnx::ModelProto& out) {
  const auto& n = m.graph().node(k);
  if (n.input_size() == 0 || n.output_size() == 0 || n.input(0).empty())
    return false;
  std::string from = n.output(0), to = n.input(0);
  auto types = valueTypes(m);
  bool isOutput = false;
  for (const auto& o : m.graph().output())
    isOutput |= o.name() == from;
  if (isOutput && (isGraphInput(m, to) || !types.count(to) || !usable(types[to])))
    return false;
  for (const auto& o : m.graph().output())
    if (o.name() == to)
      return false;  // two outputs of one name
  out = m;
  auto* g = out.mutable_graph();
  for (auto& node : *g->mutable_node())
    for (auto& in : *node.mutable_input())
      if (in == from)
        in = to;
  for (auto& o : *g->mutable_output())
    if (o.name() == from) {
      o.set_name(to);
      *o.mutable_type() = types[to];
    }
  g->mutable_node()->DeleteSubrange(k, 1);
  removeDeadNodes(out);
  return true;
}

/// The graph with node `k`'s first input made a graph input of its inferred type (unknown dims
/// get fresh dim_params), so everything that only computed it dies.
bool promoteInput(const onnx::ModelProto& m, int k, onnx::ModelProto& out) {
  const auto& n = m.graph().node(k);
  if (n.input_size() == 0 || n.input(0).empty() || isGraphInput(m, n.input(0)))
    return false;
  const std::string value = n.input(0);
  for (const auto& t : m.graph().initializer())
    if (t.name() == value)
      return false;
  auto types = valueTypes(m);
  auto it = types.find(value);
  if (it == types.end() || !usable(it->second))
    return false;
  out = m;
  auto* g = out.mutable_graph();
  auto* in = g->add_input();
  in->set_name(value);
  *in->mutable_type() = it->second;
  auto* shape = in->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (int d = 0; d < shape->dim_size(); ++d)
    if (!shape->dim(d).has_dim_value() && !shape->dim(d).has_dim_param())
      shape->mutable_dim(d)->set_dim_param("p" + std::to_string(k) + "_" + std::to_string(d));
  // The producer of `value` must go: drop that output's node (dead-node removal does the rest).
  for (int j = 0; j < g->node_size(); ++j)
    for (const auto& o : g->node(j).output())
      if (o == value) {
        g->mutable_node()->DeleteSubrange(j, 1);
        removeDeadNodes(out);
        return true;
      }
  return false;
}

} // namespace

onnx::ModelProto minimize(const onnx::ModelProto& model, const StillFails& stillFails, int maxTries,
                          MinimizeStats* stats) {
  MinimizeStats local;
  MinimizeStats& s = stats ? *stats : local;
  s.nodesBefore = model.graph().node_size();
  onnx::ModelProto best = model;
  auto attempt = [&](const onnx::ModelProto& candidate) {
    if (s.tries >= maxTries || candidate.graph().node_size() == 0)
      return false;
    ++s.tries;
    if (!stillFails(candidate))
      return false;
    ++s.accepted;
    best = candidate;
    return true;
  };
  if (best.graph().output_size() > 1) {
    for (int o = 0; o < best.graph().output_size(); ++o) {
      onnx::ModelProto c = best;
      c.mutable_graph()->clear_output();
      *c.mutable_graph()->add_output() = best.graph().output(o);
      removeDeadNodes(c);
      if (attempt(c))
        break;
    }
  }
  bool changed = true;
  while (changed && s.tries < maxTries) {
    changed = false;
    for (int k = best.graph().node_size() - 1; k >= 0 && s.tries < maxTries; --k) {
      if (k >= best.graph().node_size())
        continue;
      onnx::ModelProto c;
      if (k + 1 < best.graph().node_size() && cutAfter(best, best.graph().node(k).output(0), c) &&
          c.graph().node_size() < best.graph().node_size() && attempt(c)) {
        changed = true;
        continue;
      }
      if (bypass(best, k, c) && attempt(c)) {
        changed = true;
        continue;
      }
      if (k < best.graph().node_size() && promoteInput(best, k, c) && attempt(c))
        changed = true;
    }
  }
  s.nodesAfter = best.graph().node_size();
  return best;
}

} // namespace dynqual::fuzz
