#include "GeneratorImpl.h"

#include <algorithm>
#include <set>

namespace dynqual::fuzz {

namespace gen_detail {

onnx::ModelProto Gen::run() {
  makeInputs();
  int steps = static_cast<int>(rng_.range(opt_.minSteps, opt_.maxSteps));
  for (int s = 0; s < steps && model_.graph().node_size() < opt_.maxNodes; ++s) {
    for (int attempt = 0; attempt < 8; ++attempt)
      if (step())
        break;
  }
  if (model_.graph().node_size() == 0 || dataOps_ == 0)
    forceTranspose();
  finishOutputs();
  removeDeadNodes(model_);
  return model_;
}

std::string Gen::constInts(const std::vector<int64_t>& v, bool scalar) {
  return g_.ints("c" + std::to_string(consts_++), v, scalar);
}

int Gen::newAtom(bool mayBeZero, const Poly& bound) {
  atoms_.push_back({"s" + std::to_string(atoms_.size()), false, mayBeZero, bound.maxValue(atoms_)});
  return static_cast<int>(atoms_.size()) - 1;
}

bool Gen::fits(const std::vector<Poly>& dims) const {
  return product(dims, 0, dims.size()).maxValue(atoms_) <= kMaxValueElements;
}

Poly Gen::product(const std::vector<Poly>& dims, size_t from, size_t to) const {
  Poly p = Poly::constant(1);
  for (size_t i = from; i < to; ++i)
    p = p * dims[i];
  return p;
}

std::string Gen::shapeOf(const std::string& name) {
  auto it = shapeCache_.find(name);
  if (it != shapeCache_.end())
    return it->second;
  return shapeCache_[name] = g_.node("Shape", {name});
}

std::string Gen::gatherDim(const Val& v, size_t axis) {
  // Opset 15's Shape(start, end) slices one dim out in a single node, as newer exporters write it.
  if (rng_.chance(0.25))
    return g_.node("Shape", {v.name},
                   {intAttr("start", static_cast<int64_t>(axis)), intAttr("end", static_cast<int64_t>(axis) + 1)});
  std::string s = shapeOf(v.name);
  if (rng_.chance(0.5))
    return g_.node("Gather", {s, constInts({static_cast<int64_t>(axis)})}, {intAttr("axis", 0)});
  std::string scalar = g_.node("Gather", {s, constInts({static_cast<int64_t>(axis)}, true)}, {intAttr("axis", 0)});
  return g_.node("Unsqueeze", {scalar, constInts({0})});
}

std::string Gen::findDim(const Poly& p) {
  std::vector<std::pair<size_t, size_t>> hits;
  for (size_t i = 0; i < pool_.size(); ++i)
    for (size_t a = 0; a < pool_[i].dims.size(); ++a)
      if (pool_[i].dims[a] == p)
        hits.emplace_back(i, a);
  if (hits.empty())
    return "";
  auto [i, a] = hits[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(hits.size()) - 1))];
  return gatherDim(pool_[i], a);
}

std::string Gen::dimPiece(const Poly& p) {
  if (p.isConstant())
    return constInts({p.constantValue()});
  std::string whole = findDim(p);
  if (!whole.empty() || !p.isMonomial())
    return whole;
  std::vector<std::string> factors;
  if (p.coefficient() != 1)
    factors.push_back(constInts({p.coefficient()}));
  for (int a : p.atoms()) {
    std::string f = findDim(Poly::atom(a));
    if (f.empty())
      return "";
    factors.push_back(f);
  }
  std::string acc = factors[0];
  for (size_t i = 1; i < factors.size(); ++i)
    acc = g_.node("Mul", {acc, factors[i]});
  return acc;
}

std::string Gen::subtractedPiece(const Poly& /*p*/, const std::string& piece) {
  // (c + 1) * d - c * d: a subtraction that the compiler's folders leave alone (they fold
  // (d + c) - c back to d, which it proves non-negative), as an exporter's size arithmetic.
  int64_t c = rng_.range(1, 2);
  std::string more = g_.node("Mul", {piece, constInts({c + 1})});
  std::string less = c == 1 ? piece : g_.node("Mul", {piece, constInts({c})});
  return g_.node("Sub", {more, less});
}

std::string Gen::shapeOperand(const std::vector<Poly>& target, const std::vector<Poly>* inDims, bool minusOne,
                              bool& allowZero) {
  allowZero = false;
  subtractedShape_ = false;
  if (rng_.chance(0.45)) {
    std::vector<int64_t> values;
    int unknown = 0;
    for (size_t j = 0; j < target.size(); ++j) {
      if (target[j].isConstant() && target[j].constantValue() == 0) {
        values.clear();
        break; // a constant 0 means "copy" without allowzero: the computed operand sets it
      } else if (target[j].isConstant()) {
        values.push_back(target[j].constantValue());
      } else if (inDims && j < inDims->size() && (*inDims)[j] == target[j] && rng_.chance(0.8)) {
        values.push_back(0);
      } else {
        values.push_back(-1);
        ++unknown;
      }
    }
    if (values.size() == target.size() && (unknown == 0 || (unknown == 1 && minusOne)))
      return constInts(values);
  }
  bool anyZero = std::any_of(target.begin(), target.end(), [&](const Poly& p) { return mayBeZero(p); });
  bool usedMinusOne = false;
  std::vector<std::string> pieces;
  for (const Poly& p : target) {
    std::string piece;
    if (!p.isConstant() && minusOne && !anyZero && !usedMinusOne && rng_.chance(0.3)) {
      piece = constInts({-1});
      usedMinusOne = true;
    } else {
      piece = dimPiece(p);
      // After the -1, now and then a runtime entry that only equals the dim through host
      // arithmetic with a subtraction, which the compiler cannot prove non-negative: its output
      // dim becomes select(e == -1, inferred, e), defined from the inferred dim right after it
      // (the class of corpus/reshape_output_dims_in_order).
      if (!piece.empty() && usedMinusOne && !p.isConstant() && rng_.chance(0.8)) {
        piece = subtractedPiece(p, piece);
        subtractedShape_ = true;
      }
    }
    if (piece.empty()) {
      if (!minusOne || anyZero || usedMinusOne)
        return "";
      piece = constInts({-1});
      usedMinusOne = true;
    }
    pieces.push_back(piece);
  }
  if (pieces.empty())
    return constInts({});
  allowZero = anyZero || (!usedMinusOne && inDims && rng_.chance(0.3));
  return pieces.size() == 1 ? pieces[0] : g_.node("Concat", pieces, {intAttr("axis", 0)});
}

size_t Gen::pickIndex() {
  size_t n = pool_.size();
  if (n > 3 && rng_.chance(0.6))
    return n - 1 - static_cast<size_t>(rng_.range(0, 2));
  return static_cast<size_t>(rng_.range(0, static_cast<int64_t>(n) - 1));
}

Val& Gen::add(const std::string& name, std::vector<Poly> dims) {
  pool_.push_back({name, std::move(dims), false, false});
  ++dataOps_;
  return pool_.back();
}

std::optional<size_t> Gen::nonEmptyAxis(const Val& x) {
  std::vector<size_t> axes;
  for (size_t k = 0; k < x.dims.size(); ++k)
    if (x.dims[k].minValue(atoms_) >= 1)
      axes.push_back(k);
  if (axes.empty())
    return std::nullopt;
  return axes[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(axes.size()) - 1))];
}

std::string Gen::binaryNode(const std::string& a, const std::string& b) {
  static const char* kBin[] = {"Add", "Sub", "Mul"};
  std::vector<std::string> ins = {a, b};
  if (rng_.chance(0.5))
    std::swap(ins[0], ins[1]);
  return g_.node(kBin[rng_.range(0, 2)], ins);
}

void Gen::makeInputs() {
  int symbols = static_cast<int>(rng_.range(1, opt_.maxSymbols));
  std::vector<int> symbolAtom(static_cast<size_t>(symbols), -1);
  int inputs = static_cast<int>(rng_.range(1, 2));
  for (int k = 0; k < inputs; ++k) {
    int64_t rank = rng_.range(1, 4);
    std::vector<Poly> dims;
    std::vector<std::string> params;
    std::vector<int64_t> sizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (rng_.chance(0.7)) {
        auto s = static_cast<size_t>(rng_.range(0, symbols - 1));
        if (symbolAtom[s] < 0) {
          atoms_.push_back({"N" + std::to_string(s), true, false, kSymbolBound});
          symbolAtom[s] = static_cast<int>(atoms_.size()) - 1;
        }
        dims.push_back(Poly::atom(symbolAtom[s]));
        params.push_back("N" + std::to_string(s));
        sizes.push_back(0);
      } else {
        int64_t c = rng_.range(1, 4);
        dims.push_back(Poly::constant(c));
        params.push_back("");
        sizes.push_back(c);
      }
    }
    std::string name = "x" + std::to_string(k);
    modelgen::declare(model_.mutable_graph()->add_input(), name, kFloat, params, sizes);
    pool_.push_back({name, dims, true, false});
  }
  if (rng_.chance(0.3)) {
    modelgen::declare(model_.mutable_graph()->add_input(), "scalar", kFloat, {}, {});
    scalarInput_ = "scalar";
  }
}

bool Gen::step() {
  // Weights: reshape 4, slice 5, elementwise 3, transpose 2, expand 2, concat 2, pad 2, a shape
  // value as a scalar operand 2, unsqueeze 1, squeeze 1, flatten 1, split 1, gather 1, shape
  // output 1, nonzero 1, compress 1, tile 1, view chain 1, n-ary concat 1, runtime-1 broadcast 1,
  // MatMulNBits 1, RotaryEmbedding 1, GroupQueryAttention 1 (shapegen-7).
  static const char* kOps[] = {
      "Reshape",    "Reshape",    "Reshape",     "Reshape",  "Slice",       "Slice",       "Slice",     "Slice",
      "Slice",      "Binary",     "Binary",      "Binary",   "Transpose",   "Transpose",   "Expand",    "Expand",
      "Concat",     "Concat",     "Pad",         "Pad",      "ShapeScalar", "ShapeScalar", "Unsqueeze", "Squeeze",
      "Flatten",    "Split",      "Gather",      "ShapeOut", "NonZero",     "Compress",    "Tile",      "ViewChain",
      "ConcatMany", "RuntimeOne", "MatMulNBits", "Rotary",   "GQA"};
  std::string op = kOps[rng_.range(0, sizeof(kOps) / sizeof(kOps[0]) - 1)];
  size_t i = pickIndex();
  if (op == "Reshape")
    return reshape(i);
  if (op == "Slice")
    return slice(i);
  if (op == "Binary")
    return binary(i);
  if (op == "Transpose")
    return transpose(i);
  if (op == "Expand")
    return expand(i);
  if (op == "Concat")
    return concat(i);
  if (op == "Unsqueeze")
    return unsqueeze(i);
  if (op == "Squeeze")
    return squeeze(i);
  if (op == "Flatten")
    return flatten(i);
  if (op == "Split")
    return split(i);
  if (op == "Gather")
    return gather(i);
  if (op == "Pad")
    return pad(i);
  if (op == "ShapeScalar")
    return shapeScalar(i);
  if (op == "NonZero")
    return nonZero(i);
  if (op == "Compress")
    return compress(i);
  if (op == "Tile")
    return tile(i);
  if (op == "ViewChain")
    return viewChain(i);
  if (op == "ConcatMany")
    return concatMany(i);
  if (op == "RuntimeOne")
    return runtimeOneBroadcast(i);
  if (op == "MatMulNBits")
    return matMulNBits(i);
  if (op == "Rotary")
    return rotaryEmbedding(i);
  if (op == "GQA")
    return groupQueryAttention(i);
  return shapeOutput(i);
}

void Gen::forceTranspose() {
  // Every case holds at least one data op: a lone Identity would test nothing.
  size_t i = 0;
  if (!transpose(i)) {
    std::string name = g_.node("Mul", {pool_[i].name, pool_[i].name});
    use(i);
    add(name, pool_[i].dims);
  }
}

void Gen::declareOutput(const std::string& name, int elemType, const std::vector<Poly>& dims) {
  std::vector<std::string> params;
  std::vector<int64_t> sizes;
  for (const Poly& d : dims) {
    std::vector<int> as = d.atoms();
    if (d.isConstant()) {
      params.push_back("");
      sizes.push_back(d.constantValue());
    } else if (d.isMonomial() && d.coefficient() == 1 && as.size() == 1 && atoms_[static_cast<size_t>(as[0])].input) {
      params.push_back(atoms_[static_cast<size_t>(as[0])].name);
      sizes.push_back(0);
    } else {
      params.push_back("");
      sizes.push_back(-1);
    }
  }
  modelgen::declare(model_.mutable_graph()->add_output(), name, elemType, params, sizes);
}

void Gen::finishOutputs() {
  std::vector<size_t> leaves;
  for (size_t k = 0; k < pool_.size(); ++k)
    if (!pool_[k].input && !pool_[k].consumed)
      leaves.push_back(k);
  std::vector<size_t> chosen;
  if (!leaves.empty())
    chosen.push_back(leaves.back());
  for (size_t k = leaves.size(); k-- > 1 && static_cast<int>(chosen.size()) < opt_.maxOutputs;)
    if (rng_.chance(0.6))
      chosen.push_back(leaves[k - 1]);
  // A non-leaf view as an output too, now and then (an output that is also consumed).
  for (size_t k = 0; k < pool_.size() && static_cast<int>(chosen.size()) < opt_.maxOutputs; ++k)
    if (!pool_[k].input && pool_[k].consumed && rng_.chance(0.15))
      chosen.push_back(k);
  std::set<std::string> seen;
  for (size_t k : chosen)
    if (seen.insert(pool_[k].name).second)
      declareOutput(pool_[k].name, kFloat, pool_[k].dims);
  for (const auto& s : shapeOuts_)
    if (seen.insert(s.name).second) {
      std::vector<Poly> dims;
      if (s.length >= 0)
        dims.push_back(Poly::constant(s.length));
      declareOutput(s.name, s.elemType, dims);
    }
}

} // namespace gen_detail

using gen_detail::Gen;

std::map<std::string, int> countOps(const onnx::ModelProto& model) {
  std::map<std::string, int> counts;
  for (const auto& n : model.graph().node())
    ++counts[n.op_type()];
  return counts;
}

void removeDeadNodes(onnx::ModelProto& model) {
  auto* g = model.mutable_graph();
  std::set<std::string> live;
  for (const auto& o : g->output())
    live.insert(o.name());
  std::vector<bool> keep(static_cast<size_t>(g->node_size()), false);
  for (int k = g->node_size() - 1; k >= 0; --k) {
    const auto& n = g->node(k);
    bool needed = false;
    for (const auto& out : n.output())
      needed |= live.count(out) > 0;
    if (!needed)
      continue;
    keep[static_cast<size_t>(k)] = true;
    for (const auto& in : n.input())
      if (!in.empty())
        live.insert(in);
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int k = 0; k < g->node_size(); ++k)
    if (keep[static_cast<size_t>(k)])
      *nodes.Add() = g->node(k);
  g->mutable_node()->Swap(&nodes);
  google::protobuf::RepeatedPtrField<onnx::TensorProto> inits;
  for (const auto& t : g->initializer())
    if (live.count(t.name()))
      *inits.Add() = t;
  g->mutable_initializer()->Swap(&inits);
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
  for (const auto& v : g->input())
    if (live.count(v.name()))
      *inputs.Add() = v;
  g->mutable_input()->Swap(&inputs);
}

GeneratedCase generate(uint64_t seed, const GeneratorOptions& options) {
  GeneratedCase c;
  c.seed = seed;
  c.model = Gen(seed, options).run();
  c.opCounts = countOps(c.model);
  c.nodes = c.model.graph().node_size();
  return c;
}

uint64_t caseSeed(uint64_t campaignSeed, uint64_t index) {
  Random r(campaignSeed * 0x9E3779B97F4A7C15ull + index);
  return r.next();
}

} // namespace dynqual::fuzz
