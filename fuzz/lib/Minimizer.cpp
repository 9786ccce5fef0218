#include "dynqual/fuzz/Minimizer.h"

#include "dynqual/fuzz/Generator.h"

#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <map>
#include <set>

namespace dynqual::fuzz {

namespace {

int rankOf(const std::map<std::string, onnx::TypeProto>& types, const std::string& name) {
  auto it = types.find(name);
  if (it == types.end() || !it->second.has_tensor_type() || !it->second.tensor_type().has_shape())
    return -1;
  return it->second.tensor_type().shape().dim_size();
}

/// The static length of 1-D `name` (a shape or axes operand), or -1.
int64_t lengthOf(const std::map<std::string, onnx::TypeProto>& types, const std::string& name) {
  auto it = types.find(name);
  if (rankOf(types, name) != 1 || !it->second.tensor_type().shape().dim(0).has_dim_value())
    return -1;
  return it->second.tensor_type().shape().dim(0).dim_value();
}

/// Gives a rank (every dim unknown) to the values ONNX shape inference leaves without a shape
/// although their rank follows from their operands' ranks: a Slice, Pad or Tile whose bounds are
/// computed (ONNX then infers nothing at all), the com.microsoft contrib ops, and everything
/// downstream of one. Without a rank a
/// value cannot be promoted to a graph input, and the minimizer would stop above it.
void completeRanks(const onnx::ModelProto& m, std::map<std::string, onnx::TypeProto>& types) {
  static const std::set<std::string> kSameRank = {"Slice", "Pad",    "Tile",     "Relu", "Cast", "Transpose",
                                                  "Neg",   "Concat", "Identity", "Abs",  "Sqrt", "Exp"};
  static const std::set<std::string> kBroadcast = {"Add",   "Sub",   "Mul", "Div", "Greater", "Less",
                                                   "Equal", "Where", "Max", "Min", "Pow"};
  for (const auto& n : m.graph().node()) {
    if (n.output_size() == 0 || rankOf(types, n.output(0)) >= 0 || n.input_size() == 0)
      continue;
    const std::string& op = n.op_type();
    int r0 = rankOf(types, n.input(0));
    int rank = -1;
    bool hasAxis = false;
    for (const auto& a : n.attribute())
      hasAxis |= a.name() == "axis";
    // The contrib ops have no ONNX schema (shape inference skips them): RotaryEmbedding keeps its
    // input's shape, MatMulNBits its input's with the last dim N; GroupQueryAttention's output is
    // [B, S, hidden], present_key and present_value [B, kv_heads, T, head].
    if ((op == "RotaryEmbedding" || op == "MatMulNBits") && n.domain() == "com.microsoft" && r0 >= 1) {
      onnx::TypeProto t = types[n.input(0)];
      for (const auto& a : n.attribute())
        if (op == "MatMulNBits" && a.name() == "N")
          t.mutable_tensor_type()->mutable_shape()->mutable_dim(r0 - 1)->set_dim_value(a.i());
      types[n.output(0)] = t;
      continue;
    }
    if (op == "GroupQueryAttention" && n.domain() == "com.microsoft") {
      for (int o = 0; o < n.output_size() && o < 3; ++o) {
        onnx::TypeProto t;
        t.mutable_tensor_type()->set_elem_type(types[n.input(0)].tensor_type().elem_type());
        for (int d = 0; d < (o == 0 ? 3 : 4); ++d)
          t.mutable_tensor_type()->mutable_shape()->add_dim();
        if (t.tensor_type().elem_type() != 0 && !n.output(o).empty())
          types[n.output(o)] = t;
      }
      continue;
    }
    if (kSameRank.count(op) || (op == "Compress" && hasAxis)) {
      rank = r0;
    } else if (op == "Compress" || op == "Shape") {
      rank = 1;
    } else if (op == "NonZero") {
      rank = 2;
    } else if (kBroadcast.count(op)) {
      for (const auto& in : n.input())
        rank = rankOf(types, in) < 0 ? -2 : std::max(rank, rankOf(types, in));
      rank = std::max(rank, -1);
    } else if (op == "Expand" && n.input_size() > 1 && r0 >= 0 && lengthOf(types, n.input(1)) >= 0) {
      rank = std::max<int>(r0, static_cast<int>(lengthOf(types, n.input(1))));
    } else if (op == "Reshape" && n.input_size() > 1) {
      rank = static_cast<int>(lengthOf(types, n.input(1)));
    } else if (op == "Gather" && n.input_size() > 1 && r0 >= 1 && rankOf(types, n.input(1)) >= 0) {
      rank = r0 - 1 + rankOf(types, n.input(1));
    } else if (op == "Unsqueeze" && n.input_size() > 1 && r0 >= 0 && lengthOf(types, n.input(1)) >= 0) {
      rank = r0 + static_cast<int>(lengthOf(types, n.input(1)));
    }
    if (rank < 0)
      continue;
    onnx::TypeProto t;
    t.mutable_tensor_type()->set_elem_type(types.count(n.output(0)) ? types[n.output(0)].tensor_type().elem_type()
                                                                    : types[n.input(0)].tensor_type().elem_type());
    if (op == "NonZero" || op == "Shape")
      t.mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
    if (t.tensor_type().elem_type() == 0)
      continue;
    auto* shape = t.mutable_tensor_type()->mutable_shape();
    for (int d = 0; d < rank; ++d)
      shape->add_dim();
    types[n.output(0)] = t;
  }
}

/// Inferred (or declared) types of every value of `model`.
std::map<std::string, onnx::TypeProto> valueTypes(const onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  std::map<std::string, onnx::TypeProto> types;
  // ONNX has no schema for the contrib ops and leaves their outputs without any type; with data
  // propagation libonnx then crashes (SIGSEGV) in the Shape of such a value (generated seed
  // 13877614986023876344: Shape(Slice(GroupQueryAttention))). Their outputs are declared float
  // (the generator's only element type) without a shape; completeRanks gives them a rank.
  for (const auto& n : model.graph().node())
    if (n.domain() == "com.microsoft")
      for (const auto& o : n.output())
        if (!o.empty()) {
          auto* v = copy.mutable_graph()->add_value_info();
          v->set_name(o);
          v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
        }
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
  for (const auto& t : copy.graph().initializer())
    if (!types.count(t.name())) {
      onnx::TypeProto ty;
      ty.mutable_tensor_type()->set_elem_type(t.data_type());
      auto* shape = ty.mutable_tensor_type()->mutable_shape();
      for (int64_t d : t.dims())
        shape->add_dim()->set_dim_value(d);
      types[t.name()] = ty;
    }
  completeRanks(copy, types);
  return types;
}

bool usable(const onnx::TypeProto& t) {
  return t.has_tensor_type() && t.tensor_type().has_shape();
}

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

/// The graph with node `k` removed and its first output replaced by its input `i`.
bool bypass(const onnx::ModelProto& m, int k, int i, onnx::ModelProto& out) {
  const auto& n = m.graph().node(k);
  if (n.input_size() <= i || n.output_size() == 0 || n.input(i).empty())
    return false;
  std::string from = n.output(0), to = n.input(i);
  auto types = valueTypes(m);
  bool isOutput = false;
  for (const auto& o : m.graph().output())
    isOutput |= o.name() == from;
  if (isOutput && (isGraphInput(m, to) || !types.count(to) || !usable(types[to])))
    return false;
  for (const auto& o : m.graph().output())
    if (o.name() == to)
      return false; // two outputs of one name
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

/// The graph with node `k`'s input `i` made a graph input of its inferred type (unknown dims get
/// fresh dim_params), so everything that only computed it dies.
bool promoteInput(const onnx::ModelProto& m, int k, int i, onnx::ModelProto& out) {
  const auto& n = m.graph().node(k);
  if (n.input_size() <= i || n.input(i).empty() || isGraphInput(m, n.input(i)))
    return false;
  const std::string value = n.input(i);
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
      shape->mutable_dim(d)->set_dim_param("p" + std::to_string(k) + (i ? "i" + std::to_string(i) : "") + "_" +
                                           std::to_string(d));
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

std::map<std::string, onnx::TypeProto> inferredTypes(const onnx::ModelProto& model) {
  return valueTypes(model);
}

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
  // Two rounds to a fixpoint each: first the first input only, then every input. The later
  // inputs carry shapes, bounds, conditions and indices whose computing chains only the second
  // round can cut away; starting it from the first round's graph keeps what that round reaches
  // (greedy reduction from the full set of moves at once can settle in a larger local minimum).
  for (bool everyInput : {false, true}) {
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
        const int inputs = everyInput ? best.graph().node(k).input_size() : 1;
        bool done = false;
        for (int i = 0; !done && i < inputs && s.tries < maxTries; ++i)
          done = bypass(best, k, i, c) && attempt(c);
        for (int i = 0; !done && k < best.graph().node_size() && i < inputs && s.tries < maxTries; ++i)
          done = promoteInput(best, k, i, c) && attempt(c);
        changed |= done;
      }
    }
  }
  s.nodesAfter = best.graph().node_size();
  return best;
}

namespace {

/// Smaller values to try for an extent `v`, in order: 1, v/2, v-1 (each < v, >= 1, distinct).
std::vector<int64_t> smaller(int64_t v) {
  std::vector<int64_t> out;
  for (int64_t c : {int64_t(1), v / 2, v - 1})
    if (c >= 1 && c < v && std::find(out.begin(), out.end(), c) == out.end())
      out.push_back(c);
  return out;
}

} // namespace

int64_t inputElements(const onnx::ModelProto& model, const onnxio::DimBinding& binding) {
  int64_t total = 0;
  for (int i = 0; i < model.graph().input_size(); ++i) {
    const auto& t = model.graph().input(i).type();
    if (!t.has_tensor_type() || !t.tensor_type().has_shape())
      continue;
    int64_t n = 1;
    const auto& shape = t.tensor_type().shape();
    for (int d = 0; d < shape.dim_size(); ++d) {
      const auto& dim = shape.dim(d);
      int64_t v = 1;
      if (dim.has_dim_value()) {
        v = dim.dim_value();
      } else if (auto it = binding.byLabel.find(dim.dim_param()); dim.has_dim_param() && it != binding.byLabel.end()) {
        v = it->second;
      } else if (auto pos = binding.byPosition.find({static_cast<size_t>(i), static_cast<size_t>(d)});
                 pos != binding.byPosition.end()) {
        v = pos->second;
      }
      n *= v;
    }
    total += n;
  }
  return total;
}

onnx::ModelProto shrinkDims(const onnx::ModelProto& model, onnxio::DimBinding& binding,
                            const StillFailsOn& stillFailsOn, int maxTries, ShrinkStats* stats) {
  ShrinkStats local;
  ShrinkStats& s = stats ? *stats : local;
  s.elementsBefore = inputElements(model, binding);
  onnx::ModelProto best = model;
  auto attempt = [&](const onnx::ModelProto& m, const onnxio::DimBinding& b) {
    if (s.tries >= maxTries)
      return false;
    ++s.tries;
    if (!stillFailsOn(m, b))
      return false;
    ++s.accepted;
    best = m;
    binding = b;
    return true;
  };
  bool changed = true;
  while (changed && s.tries < maxTries) {
    changed = false;
    // Binding values: by label, then unnamed dims by position.
    for (auto& [label, v] : std::map<std::string, int64_t>(binding.byLabel))
      for (int64_t c : smaller(binding.byLabel.at(label))) {
        onnxio::DimBinding b = binding;
        b.byLabel[label] = c;
        if (attempt(best, b)) {
          changed = true;
          break;
        }
      }
    for (auto& [pos, v] : std::map<std::pair<size_t, size_t>, int64_t>(binding.byPosition))
      for (int64_t c : smaller(binding.byPosition.at(pos))) {
        onnxio::DimBinding b = binding;
        b.byPosition[pos] = c;
        if (attempt(best, b)) {
          changed = true;
          break;
        }
      }
    // Static dims of graph inputs.
    for (int i = 0; i < best.graph().input_size(); ++i) {
      if (!best.graph().input(i).type().tensor_type().has_shape())
        continue;
      for (int d = 0; d < best.graph().input(i).type().tensor_type().shape().dim_size(); ++d) {
        const auto& dim = best.graph().input(i).type().tensor_type().shape().dim(d);
        if (!dim.has_dim_value())
          continue;
        for (int64_t c : smaller(dim.dim_value())) {
          onnx::ModelProto m = best;
          m.mutable_graph()
              ->mutable_input(i)
              ->mutable_type()
              ->mutable_tensor_type()
              ->mutable_shape()
              ->mutable_dim(d)
              ->set_dim_value(c);
          if (attempt(m, binding)) {
            changed = true;
            break;
          }
        }
      }
    }
  }
  s.elementsAfter = inputElements(best, binding);
  return best;
}

} // namespace dynqual::fuzz
