#include "dynqual/fuzz/Generator.h"

#include "dynqual/fuzz/SymbolicDim.h"
#include "dynqual/modelgen/GraphBuilder.h"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>

namespace dynqual::fuzz {

using modelgen::GraphBuilder;
using modelgen::intAttr;
using modelgen::intsAttr;
using modelgen::Random;

namespace {

constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kInt64 = onnx::TensorProto::INT64;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

/// A float data value of the graph with its symbolic dims.
struct Val {
  std::string name;
  std::vector<Poly> dims;
  bool input = false;
  bool consumed = false;
};

/// An int64 or float value computed from shapes, kept for graph outputs only.
struct ShapeOut {
  std::string name;
  int elemType = kInt64;
  int64_t length = -1;  ///< -1 = rank 0
};

class Gen {
public:
  Gen(uint64_t seed, const GeneratorOptions& opt)
      : rng_(seed ^ 0x5eed5eed5eedull), opt_(opt), model_(modelgen::newModel("dynqual fuzz", 17)),
        g_(*model_.mutable_graph()) {
    model_.mutable_graph()->set_name("fuzz_" + std::to_string(seed));
  }

  onnx::ModelProto run() {
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

private:
  // ---- constants, atoms, shape pieces -------------------------------------------------------
  std::string constInts(const std::vector<int64_t>& v, bool scalar = false) {
    return g_.ints("c" + std::to_string(consts_++), v, scalar);
  }
  /// An opaque extent cut from something at most `bound` (for the element cap, see fits()).
  int newAtom(bool mayBeZero, const Poly& bound) {
    atoms_.push_back({"s" + std::to_string(atoms_.size()), false, mayBeZero, bound.maxValue(atoms_)});
    return static_cast<int>(atoms_.size()) - 1;
  }
  bool mayBeZero(const Poly& p) const { return p.minValue(atoms_) == 0; }
  /// A value of these dims stays within kMaxValueElements on every binding whose symbols are at
  /// most kSymbolBound. The ops that multiply extents (Tile, Expand, Concat) check it, so chains
  /// of them cannot make values that the reference cannot hold.
  bool fits(const std::vector<Poly>& dims) const {
    return product(dims, 0, dims.size()).maxValue(atoms_) <= kMaxValueElements;
  }
  Poly product(const std::vector<Poly>& dims, size_t from, size_t to) const {
    Poly p = Poly::constant(1);
    for (size_t i = from; i < to; ++i)
      p = p * dims[i];
    return p;
  }

  std::string shapeOf(const std::string& name) {
    auto it = shapeCache_.find(name);
    if (it != shapeCache_.end())
      return it->second;
    return shapeCache_[name] = g_.node("Shape", {name});
  }

  /// A [1] int64 tensor holding dim `axis` of `v`: Gather with a 1-D index, or the exporters'
  /// Gather with a scalar index followed by Unsqueeze.
  std::string gatherDim(const Val& v, size_t axis) {
    std::string s = shapeOf(v.name);
    if (rng_.chance(0.5))
      return g_.node("Gather", {s, constInts({static_cast<int64_t>(axis)})}, {intAttr("axis", 0)});
    std::string scalar = g_.node("Gather", {s, constInts({static_cast<int64_t>(axis)}, true)}, {intAttr("axis", 0)});
    return g_.node("Unsqueeze", {scalar, constInts({0})});
  }

  std::string findDim(const Poly& p) {
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

  /// A [1] int64 tensor holding `p` at run time, computed from Shape values (with Mul for
  /// products), or "" when no value of the graph carries its factors.
  std::string dimPiece(const Poly& p) {
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

  /// A 1-D shape operand describing `target`. With `inDims` (Reshape), a constant operand may use
  /// 0 ("copy input dim j", allowzero=0) and one -1 when `minusOne` allows; a computed operand sets
  /// `allowZero` when a dim can be 0 at run time, so a 0 is never read as "copy".
  std::string shapeOperand(const std::vector<Poly>& target, const std::vector<Poly>* inDims, bool minusOne,
                           bool& allowZero) {
    allowZero = false;
    if (rng_.chance(0.45)) {
      std::vector<int64_t> values;
      int unknown = 0;
      for (size_t j = 0; j < target.size(); ++j) {
        if (target[j].isConstant() && target[j].constantValue() == 0) {
          values.clear();
          break;  // a constant 0 means "copy" without allowzero: the computed operand sets it
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

  // ---- pool ---------------------------------------------------------------------------------
  size_t pickIndex() {
    size_t n = pool_.size();
    if (n > 3 && rng_.chance(0.6))
      return n - 1 - static_cast<size_t>(rng_.range(0, 2));
    return static_cast<size_t>(rng_.range(0, static_cast<int64_t>(n) - 1));
  }
  Val& add(const std::string& name, std::vector<Poly> dims) {
    pool_.push_back({name, std::move(dims), false, false});
    ++dataOps_;
    return pool_.back();
  }
  void use(size_t i) { pool_[i].consumed = true; }

  void makeInputs() {
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

  // ---- data ops -----------------------------------------------------------------------------
  bool step() {
    // Weights: reshape 4, slice 5, elementwise 3, transpose 2, expand 2, concat 2, pad 2, a shape
    // value as a scalar operand 2, unsqueeze 1, squeeze 1, flatten 1, split 1, gather 1, shape
    // output 1, nonzero 1, compress 1, tile 1.
    static const char* kOps[] = {"Reshape", "Reshape", "Reshape", "Reshape", "Slice", "Slice", "Slice", "Slice",
                                 "Slice", "Binary", "Binary", "Binary", "Transpose", "Transpose", "Expand",
                                 "Expand", "Concat", "Concat", "Pad", "Pad", "ShapeScalar", "ShapeScalar",
                                 "Unsqueeze", "Squeeze", "Flatten", "Split", "Gather", "ShapeOut", "NonZero",
                                 "Compress", "Tile"};
    std::string op = kOps[rng_.range(0, sizeof(kOps) / sizeof(kOps[0]) - 1)];
    size_t i = pickIndex();
    if (op == "Reshape") return reshape(i);
    if (op == "Slice") return slice(i);
    if (op == "Binary") return binary(i);
    if (op == "Transpose") return transpose(i);
    if (op == "Expand") return expand(i);
    if (op == "Concat") return concat(i);
    if (op == "Unsqueeze") return unsqueeze(i);
    if (op == "Squeeze") return squeeze(i);
    if (op == "Flatten") return flatten(i);
    if (op == "Split") return split(i);
    if (op == "Gather") return gather(i);
    if (op == "Pad") return pad(i);
    if (op == "ShapeScalar") return shapeScalar(i);
    if (op == "NonZero") return nonZero(i);
    if (op == "Compress") return compress(i);
    if (op == "Tile") return tile(i);
    return shapeOutput(i);
  }

  bool reshape(size_t i) {
    std::vector<Poly> in = pool_[i].dims;
    if (in.size() >= 2 && rng_.chance(0.4))
      return reorderingReshape(i);
    // Factor every dim into constants and atoms, in order; a sum is one factor.
    std::vector<Poly> factors;
    for (const Poly& d : in) {
      if (d.isConstant()) {
        int64_t c = d.constantValue();
        if (c == 4 || c == 6) {
          factors.push_back(Poly::constant(2));
          factors.push_back(Poly::constant(c / 2));
        } else if (c != 1) {
          factors.push_back(d);
        }
      } else if (d.isMonomial()) {
        if (d.coefficient() != 1)
          factors.push_back(Poly::constant(d.coefficient()));
        for (int a : d.atoms())
          factors.push_back(Poly::atom(a));
      } else {
        factors.push_back(d);
      }
    }
    // The factors in any order keep the element count: exporters' views regroup and reorder.
    if (factors.size() >= 2 && rng_.chance(0.25))
      shuffle(factors);
    int64_t rank = rng_.range(factors.empty() ? 0 : 1, 4);
    std::vector<Poly> out(static_cast<size_t>(rank), Poly::constant(1));
    // Contiguous groups: each factor goes to the current group or opens the next one.
    size_t cur = 0;
    for (size_t f = 0; f < factors.size(); ++f) {
      size_t left = factors.size() - f;
      if (f > 0 && cur + 1 < out.size() && (rng_.chance(0.6) || left <= out.size() - cur - 1))
        ++cur;
      out[cur] = out[cur] * factors[f];
    }
    return emitReshape(i, out);
  }

  template <class T> void shuffle(std::vector<T>& v) {
    for (size_t k = v.size() - 1; k > 0; --k)
      std::swap(v[k], v[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(k)))]);
  }

  /// A reshape to the same rank with the input's extents in another order (`x.view(b, a)` of an
  /// `[a, b]` tensor): same element count, and with the same types when the moved dims are all
  /// dynamic, although the runtime extents differ.
  bool reorderingReshape(size_t i) {
    std::vector<Poly> out = pool_[i].dims;
    std::vector<size_t> dynamic;
    for (size_t k = 0; k < out.size(); ++k)
      if (!out[k].isConstant())
        dynamic.push_back(k);
    if (dynamic.size() >= 2 && rng_.chance(0.7)) {
      // Only the runtime extents move (`[a, 3, b]` viewed as `[b, 3, a]`).
      std::vector<Poly> moved;
      for (size_t k : dynamic)
        moved.push_back(out[k]);
      shuffle(moved);
      for (size_t k = 0; k < dynamic.size(); ++k)
        out[dynamic[k]] = moved[k];
    } else {
      shuffle(out);
    }
    return emitReshape(i, out);
  }

  bool emitReshape(size_t i, const std::vector<Poly>& out) {
    const std::vector<Poly> in = pool_[i].dims;
    if (out == in)
      return false;
    Poly count = product(in, 0, in.size());
    bool allowZero = false;
    std::string shape = shapeOperand(out, &in, !mayBeZero(count), allowZero);
    if (shape.empty())
      return false;
    std::vector<onnx::AttributeProto> attrs;
    if (allowZero)
      attrs.push_back(intAttr("allowzero", 1));
    std::string name = g_.node("Reshape", {pool_[i].name, shape}, attrs);
    use(i);
    add(name, out);
    return true;
  }

  std::string boundInput() {
    if (bound_.empty()) {
      bound_ = "bound";
      modelgen::declare(model_.mutable_graph()->add_input(), bound_, kInt64, {""}, {1});
    }
    return bound_;
  }

  bool slice(size_t i) {
    const Val x = pool_[i];
    if (x.dims.empty())
      return false;
    auto axis = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(x.dims.size()) - 1));
    const Poly d = x.dims[axis];
    const bool constDim = d.isConstant();
    const int64_t c = d.constantValue();
    if (constDim && c == 0)
      return false;  // ONNX shape inference gives a reversed empty axis extent 1, not 0
    std::string start, end, step;
    Poly out;
    auto clampedCount = [](int64_t n, int64_t s, int64_t e, int64_t st) {
      // ONNX Slice: clamp to [0, n] for a positive step, [-1, n-1] for a negative one.
      if (s < 0) s += n;
      if (e < 0 && e != kMin) e += n;
      if (st > 0) {
        s = std::clamp<int64_t>(s, 0, n);
        e = std::clamp<int64_t>(e, 0, n);
        return e > s ? (e - s + st - 1) / st : 0;
      }
      s = std::clamp<int64_t>(s, -1, n - 1);
      e = e == kMin ? -1 : std::clamp<int64_t>(e, -1, n - 1);
      return s > e ? (s - e + (-st) - 1) / (-st) : 0;
    };
    switch (rng_.range(0, 7)) {
    case 0: // full reverse, the exporters' clamped bounds
      start = constInts({-1});
      end = constInts({kMin});
      step = constInts({-1});
      out = d;
      break;
    case 1: { // constant bounds
      int64_t s = rng_.range(0, 2);
      int64_t e = rng_.chance(0.4) ? kMax : s + rng_.range(1, 3);
      int64_t st = rng_.range(1, 2);
      start = constInts({s});
      end = constInts({e});
      step = constInts({st});
      if (constDim)
        out = Poly::constant(clampedCount(c, s, e, st));
      else if (s == 0 && e == kMax && st == 1)
        out = d;
      else
        out = Poly::atom(newAtom(d.minValue(atoms_) <= s, d));
      break;
    }
    case 2: { // end from Shape arithmetic: dim - 1
      std::string piece = dimPiece(d);
      if (piece.empty())
        return false;
      start = constInts({0});
      end = g_.node("Sub", {piece, constInts({1})});
      step = constInts({1});
      out = constDim ? Poly::constant(std::max<int64_t>(c - 1, 0)) : Poly::atom(newAtom(d.minValue(atoms_) <= 1, d));
      break;
    }
    case 3: // negative stride over the clamped whole dim
      start = constInts({kMax});
      end = constInts({kMin});
      step = constInts({-2});
      out = constDim ? Poly::constant(clampedCount(c, kMax, kMin, -2)) : Poly::atom(newAtom(mayBeZero(d), d));
      break;
    case 4: // end from a data tensor: the compiler cannot resolve it on the host
      start = constInts({0});
      end = boundInput();
      step = constInts({1});
      out = Poly::atom(newAtom(true, d));
      break;
    default: { // bounds computed from data, as a KV cache's past length: the readback of a device result
      std::string piece = rng_.chance(0.5) ? dimPiece(d) : "";
      step = constInts({1});
      switch (rng_.range(0, 2)) {
      case 0: // start = the data value, to the end
        start = boundInput();
        end = constInts({kMax});
        break;
      case 1: // end = data + 1 (the position after the last one written)
        start = constInts({0});
        end = g_.node("Add", {boundInput(), constInts({1})});
        break;
      default: // end = dim - data (Shape arithmetic and data mixed on the device), or data - 1
        start = constInts({0});
        end = piece.empty() ? g_.node("Sub", {boundInput(), constInts({1})}) : g_.node("Sub", {piece, boundInput()});
        break;
      }
      out = Poly::atom(newAtom(true, d));
      break;
    }
    }
    int64_t axisValue = static_cast<int64_t>(axis);
    if (rng_.chance(0.3))
      axisValue -= static_cast<int64_t>(x.dims.size());
    std::string name = g_.node("Slice", {x.name, start, end, constInts({axisValue}), step});
    std::vector<Poly> dims = x.dims;
    dims[axis] = out;
    use(i);
    add(name, dims);
    return true;
  }

  static bool broadcastable(const std::vector<Poly>& a, const std::vector<Poly>& b, std::vector<Poly>& out) {
    size_t r = std::max(a.size(), b.size());
    out.assign(r, Poly::constant(1));
    for (size_t k = 0; k < r; ++k) {
      const Poly one = Poly::constant(1);
      const Poly& x = k < r - a.size() ? one : a[k - (r - a.size())];
      const Poly& y = k < r - b.size() ? one : b[k - (r - b.size())];
      if (x == y || y == one)
        out[k] = x;
      else if (x == one)
        out[k] = y;
      else
        return false;
    }
    return true;
  }

  bool binary(size_t i) {
    const Val x = pool_[i];
    std::vector<size_t> partners;
    std::vector<Poly> out;
    for (size_t j = 0; j < pool_.size(); ++j)
      if (j != i && broadcastable(x.dims, pool_[j].dims, out))
        partners.push_back(j);
    std::string other;
    if (!partners.empty() && rng_.chance(0.75)) {
      size_t j = partners[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(partners.size()) - 1))];
      other = pool_[j].name;
      broadcastable(x.dims, pool_[j].dims, out);
      use(j);
    } else if (!scalarInput_.empty() && rng_.chance(0.5)) {
      other = scalarInput_;
      out = x.dims;
    } else {
      // A constant that broadcasts: static dims kept or 1, dynamic dims 1, maybe fewer leading dims.
      size_t drop = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(x.dims.size())));
      std::vector<int64_t> shape;
      for (size_t k = drop; k < x.dims.size(); ++k)
        shape.push_back(x.dims[k].isConstant() && rng_.chance(0.6) ? x.dims[k].constantValue() : 1);
      int64_t n = 1;
      for (int64_t s : shape)
        n *= s;
      std::vector<double> v(static_cast<size_t>(n));
      for (auto& e : v)
        e = rng_.symmetric();
      other = g_.initializer("w" + std::to_string(consts_++), Tensor::fromDoubles(DType::Float, shape, v));
      out = x.dims;
    }
    static const char* kBin[] = {"Add", "Sub", "Mul"};
    std::vector<std::string> ins = {x.name, other};
    if (rng_.chance(0.5))
      std::swap(ins[0], ins[1]);
    std::string name = g_.node(kBin[rng_.range(0, 2)], ins);
    use(i);
    add(name, out);
    return true;
  }

  bool transpose(size_t i) {
    const Val x = pool_[i];
    if (x.dims.size() < 2)
      return false;
    std::vector<int64_t> perm(x.dims.size());
    for (size_t k = 0; k < perm.size(); ++k)
      perm[k] = static_cast<int64_t>(k);
    for (size_t k = perm.size() - 1; k > 0; --k)
      std::swap(perm[k], perm[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(k)))]);
    if (std::is_sorted(perm.begin(), perm.end()))
      std::swap(perm[0], perm[1]);
    std::vector<Poly> dims;
    for (int64_t p : perm)
      dims.push_back(x.dims[static_cast<size_t>(p)]);
    std::string name = g_.node("Transpose", {x.name}, {intsAttr("perm", perm)});
    use(i);
    add(name, dims);
    return true;
  }

  Poly randomDim() {
    if (rng_.chance(0.5)) {
      const Val& v = pool_[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(pool_.size()) - 1))];
      if (!v.dims.empty())
        return v.dims[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(v.dims.size()) - 1))];
    }
    return Poly::constant(rng_.range(1, 3));
  }

  bool expand(size_t i) {
    const Val x = pool_[i];
    std::vector<Poly> target;
    int64_t lead = x.dims.size() >= 4 ? 0 : rng_.range(0, 1);
    for (int64_t k = 0; k < lead; ++k)
      target.push_back(randomDim());
    bool changed = lead > 0;
    for (const Poly& d : x.dims) {
      if (d == Poly::constant(1) && rng_.chance(0.7)) {
        Poly r = randomDim();
        changed |= r != d;
        target.push_back(r);
      } else {
        target.push_back(d);
      }
    }
    if (!changed || !fits(target))
      return false;
    std::string shape;
    for (const Val& v : pool_)
      if (v.dims == target && rng_.chance(0.7)) {
        shape = shapeOf(v.name);
        break;
      }
    bool unusedAllowZero = false;
    if (shape.empty())
      shape = shapeOperand(target, nullptr, false, unusedAllowZero);
    if (shape.empty())
      return false;
    std::string name = g_.node("Expand", {x.name, shape});
    use(i);
    add(name, target);
    return true;
  }

  bool concat(size_t i) {
    const Val x = pool_[i];
    if (x.dims.empty())
      return false;
    auto axis = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(x.dims.size()) - 1));
    std::vector<size_t> partners = {i};
    for (size_t j = 0; j < pool_.size(); ++j) {
      if (j == i || pool_[j].dims.size() != x.dims.size())
        continue;
      bool ok = true;
      for (size_t k = 0; k < x.dims.size(); ++k)
        ok &= k == axis || pool_[j].dims[k] == x.dims[k];
      if (ok)
        partners.push_back(j);
    }
    size_t j = partners[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(partners.size()) - 1))];
    std::vector<Poly> dims = x.dims;
    dims[axis] = x.dims[axis] + pool_[j].dims[axis];
    if (!fits(dims))
      return false;
    int64_t axisValue = static_cast<int64_t>(axis) - (rng_.chance(0.3) ? static_cast<int64_t>(x.dims.size()) : 0);
    std::string name = g_.node("Concat", {x.name, pool_[j].name}, {intAttr("axis", axisValue)});
    use(i);
    use(j);
    add(name, dims);
    return true;
  }

  bool unsqueeze(size_t i) {
    const Val x = pool_[i];
    if (x.dims.size() >= 5)
      return false;
    int64_t k = rng_.range(1, 2);
    size_t outRank = x.dims.size() + static_cast<size_t>(k);
    std::set<int64_t> axes;
    while (static_cast<int64_t>(axes.size()) < k)
      axes.insert(rng_.range(0, static_cast<int64_t>(outRank) - 1));
    std::vector<Poly> dims;
    size_t src = 0;
    for (size_t p = 0; p < outRank; ++p)
      dims.push_back(axes.count(static_cast<int64_t>(p)) ? Poly::constant(1) : x.dims[src++]);
    std::string name = g_.node("Unsqueeze", {x.name, constInts(std::vector<int64_t>(axes.begin(), axes.end()))});
    use(i);
    add(name, dims);
    return true;
  }

  bool squeeze(size_t i) {
    const Val x = pool_[i];
    std::vector<int64_t> ones;
    for (size_t k = 0; k < x.dims.size(); ++k)
      if (x.dims[k] == Poly::constant(1) && (ones.empty() || rng_.chance(0.6)))
        ones.push_back(static_cast<int64_t>(k));
    if (ones.empty())
      return false;
    std::vector<Poly> dims;
    for (size_t k = 0; k < x.dims.size(); ++k)
      if (std::find(ones.begin(), ones.end(), static_cast<int64_t>(k)) == ones.end())
        dims.push_back(x.dims[k]);
    // Always with axes: without them a dim bound to 1 at run time would be squeezed too.
    std::string name = g_.node("Squeeze", {x.name, constInts(ones)});
    use(i);
    add(name, dims);
    return true;
  }

  bool flatten(size_t i) {
    const Val x = pool_[i];
    auto axis = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(x.dims.size())));
    std::vector<Poly> dims = {product(x.dims, 0, axis), product(x.dims, axis, x.dims.size())};
    std::string name = g_.node("Flatten", {x.name}, {intAttr("axis", static_cast<int64_t>(axis))});
    use(i);
    add(name, dims);
    return true;
  }

  bool split(size_t i) {
    const Val x = pool_[i];
    if (x.dims.empty())
      return false;
    auto axis = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(x.dims.size()) - 1));
    const Poly d = x.dims[axis];
    std::vector<std::string> inputs = {x.name};
    Poly first, second;
    if (d.isConstant() && d.constantValue() >= 2) {
      int64_t k = rng_.range(1, d.constantValue() - 1);
      inputs.push_back(constInts({k, d.constantValue() - k}));
      first = Poly::constant(k);
      second = Poly::constant(d.constantValue() - k);
    } else if (!d.isConstant() && d.isMonomial() && d.coefficient() % 2 == 0) {
      Poly half = Poly::constant(d.coefficient() / 2);
      for (int a : d.atoms())
        half = half * Poly::atom(a);
      first = second = half;  // equal split, no 'split' input
    } else if (!d.isConstant() && d.minValue(atoms_) >= 1) {
      std::string piece = dimPiece(d);
      if (piece.empty())
        return false;
      inputs.push_back(g_.node("Concat", {constInts({1}), g_.node("Sub", {piece, constInts({1})})}, {intAttr("axis", 0)}));
      first = Poly::constant(1);
      second = Poly::atom(newAtom(d.minValue(atoms_) <= 1, d));
    } else {
      return false;
    }
    auto outs = g_.nodeN("Split", inputs, 2, {intAttr("axis", static_cast<int64_t>(axis))});
    use(i);
    std::vector<Poly> a = x.dims, b = x.dims;
    a[axis] = first;
    b[axis] = second;
    add(outs[0], a);
    add(outs[1], b);
    return true;
  }

  bool gather(size_t i) {
    const Val x = pool_[i];
    std::vector<size_t> axes;
    for (size_t k = 0; k < x.dims.size(); ++k)
      if (x.dims[k].minValue(atoms_) >= 1)
        axes.push_back(k);
    if (axes.empty())
      return false;
    size_t axis = axes[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(axes.size()) - 1))];
    std::vector<Poly> dims(x.dims.begin(), x.dims.begin() + static_cast<std::ptrdiff_t>(axis));
    std::string idx;
    switch (rng_.range(0, 2)) {
    case 0: idx = constInts({rng_.chance(0.5) ? 0 : -1}, true); break;  // rank drops by one
    case 1: idx = constInts({-1}); dims.push_back(Poly::constant(1)); break;
    default: idx = constInts({0, -1, 0}); dims.push_back(Poly::constant(3)); break;
    }
    dims.insert(dims.end(), x.dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.dims.end());
    std::string name = g_.node("Gather", {x.name, idx}, {intAttr("axis", static_cast<int64_t>(axis))});
    use(i);
    add(name, dims);
    return true;
  }

  // ---- data-dependent extents, tiling, padding -----------------------------------------------

  /// NonZero of a value with zeros in it (Relu of data in [-1, 1), so about half the elements),
  /// cast back to float: [rank, count] with a count only the data decides.
  bool nonZero(size_t i) {
    const Val x = pool_[i];
    if (x.dims.empty())
      return false;
    std::string src = rng_.chance(0.7) ? g_.node("Relu", {x.name}) : x.name;
    std::string idx = g_.node("NonZero", {src});
    std::string name = g_.node("Cast", {idx}, {intAttr("to", kFloat)});
    use(i);
    add(name, {Poly::constant(static_cast<int64_t>(x.dims.size())),
               Poly::atom(newAtom(true, product(x.dims, 0, x.dims.size())))});
    return true;
  }

  /// A bool condition of length `d` = x.dims[axis] from data: a bool graph input when `d` is an
  /// input symbol or a constant, else Greater/Less of x summed over every other axis.
  std::string condition(const Val& x, size_t axis) {
    const Poly& d = x.dims[axis];
    std::vector<int> as = d.atoms();
    bool symbol = !d.isConstant() && d.isMonomial() && d.coefficient() == 1 && as.size() == 1 &&
                  atoms_[static_cast<size_t>(as[0])].input;
    if ((symbol || (d.isConstant() && d.constantValue() >= 1)) && rng_.chance(0.5)) {
      std::string name = "cond" + std::to_string(conds_++);
      if (symbol)
        modelgen::declare(model_.mutable_graph()->add_input(), name, onnx::TensorProto::BOOL,
                          {atoms_[static_cast<size_t>(as[0])].name}, {0});
      else
        modelgen::declare(model_.mutable_graph()->add_input(), name, onnx::TensorProto::BOOL, {""},
                          {d.constantValue()});
      return name;
    }
    std::string v = x.name;
    if (x.dims.size() > 1) {
      std::vector<int64_t> others;
      for (size_t k = 0; k < x.dims.size(); ++k)
        if (k != axis)
          others.push_back(static_cast<int64_t>(k));
      v = g_.node("ReduceSum", {x.name, constInts(others)}, {intAttr("keepdims", 0)});
    }
    return g_.node(rng_.chance(0.5) ? "Greater" : "Less", {v, g_.floatScalar("t" + std::to_string(consts_++), 0.0)});
  }

  /// Compress along an axis (the condition as long as that axis) or, without axis, over the
  /// flattened input (the condition as long as the element count).
  bool compress(size_t i) {
    const Val x = pool_[i];
    if (x.dims.empty())
      return false;
    std::string name;
    std::vector<Poly> dims;
    if (rng_.chance(0.6)) {
      auto axis = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(x.dims.size()) - 1));
      std::string cond = condition(x, axis);
      int64_t axisValue = static_cast<int64_t>(axis) - (rng_.chance(0.3) ? static_cast<int64_t>(x.dims.size()) : 0);
      name = g_.node("Compress", {x.name, cond}, {intAttr("axis", axisValue)});
      dims = x.dims;
      dims[axis] = Poly::atom(newAtom(true, x.dims[axis]));
    } else {
      // Reshape to [-1] is safe even for zero elements: there is no other entry to divide by.
      std::string flat = x.dims.size() == 1 ? x.name : g_.node("Reshape", {x.name, constInts({-1})});
      std::string cond = g_.node(rng_.chance(0.5) ? "Greater" : "Less",
                                 {flat, g_.floatScalar("t" + std::to_string(consts_++), 0.0)});
      name = g_.node("Compress", {x.name, cond});
      dims = {Poly::atom(newAtom(true, product(x.dims, 0, x.dims.size())))};
    }
    use(i);
    add(name, dims);
    return true;
  }

  /// Tile with repeats from a constant (2 or 3 on one axis, sometimes 2 on another) or from
  /// Shape arithmetic (one axis repeated by a dim of the graph).
  bool tile(size_t i) {
    const Val x = pool_[i];
    if (x.dims.empty())
      return false;
    std::vector<Poly> dims = x.dims;
    std::string repeats;
    auto pick = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(x.dims.size()) - 1));
    if (rng_.chance(0.5)) {
      std::vector<int64_t> r(x.dims.size(), 1);
      r[pick] = rng_.range(2, 3);
      if (x.dims.size() > 1 && rng_.chance(0.3))
        r[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(x.dims.size()) - 1))] = 2;
      for (size_t k = 0; k < r.size(); ++k)
        dims[k] = dims[k] * Poly::constant(r[k]);
      if (!fits(dims))
        return false;
      repeats = constInts(r);
    } else {
      Poly by = randomDim();
      dims[pick] = dims[pick] * by;
      if (!fits(dims))
        return false;
      std::string piece = dimPiece(by);
      if (piece.empty())
        return false;
      std::vector<std::string> pieces;
      for (size_t k = 0; k < x.dims.size(); ++k)
        pieces.push_back(k == pick ? piece : constInts({1}));
      repeats = pieces.size() == 1 ? pieces[0] : g_.node("Concat", pieces, {intAttr("axis", 0)});
    }
    std::string name = g_.node("Tile", {x.name, repeats});
    use(i);
    add(name, dims);
    return true;
  }

  /// Pad in constant, reflect or edge mode. Constant pads are 0..2 per side; reflect pads stay
  /// below every runtime extent of their axis (at most its minimum - 1); edge pads need an
  /// extent >= 1. Pads from Shape arithmetic: a dim of the graph (constant and edge modes), or
  /// the axis' own extent - 1 on the leading side (reflect).
  bool pad(size_t i) {
    const Val x = pool_[i];
    if (x.dims.empty())
      return false;
    static const char* kModes[] = {"constant", "reflect", "edge"};
    const std::string mode = kModes[rng_.range(0, 2)];
    const size_t r = x.dims.size();
    std::vector<std::string> pieces(2 * r);
    std::vector<int64_t> values(2 * r, 0);
    std::vector<Poly> dims = x.dims;
    bool computed = false, any = false;
    for (size_t k = 0; k < r; ++k) {
      const int64_t lo = x.dims[k].minValue(atoms_);
      const int64_t cap = mode == "constant" ? 2 : mode == "edge" ? (lo >= 1 ? 2 : 0) : std::min<int64_t>(lo - 1, 2);
      if (mode == "reflect" && lo >= 1 && !x.dims[k].isConstant() && rng_.chance(0.25)) {
        // extent - 1 on the leading side: the largest pad reflect allows, for every binding.
        std::string piece = dimPiece(x.dims[k]);
        if (!piece.empty()) {
          pieces[k] = g_.node("Sub", {piece, constInts({1})});
          dims[k] = Poly::atom(newAtom(false, Poly::constant(2) * x.dims[k]));
          computed = any = true;
          continue;
        }
      }
      for (size_t side : {k, k + r}) {
        if (cap <= 0 || !rng_.chance(0.5))
          continue;
        if (mode != "reflect" && rng_.chance(0.3)) {
          Poly by = randomDim();
          std::string piece = dimPiece(by);
          if (!piece.empty()) {
            pieces[side] = piece;
            dims[k] = dims[k] + by;
            computed = any = true;
            continue;
          }
        }
        values[side] = rng_.range(1, cap);
        dims[k] = dims[k] + Poly::constant(values[side]);
        any = true;
      }
    }
    if (!any)
      return false;
    std::string pads;
    if (!computed) {
      pads = constInts(values);
    } else {
      for (size_t k = 0; k < pieces.size(); ++k)
        if (pieces[k].empty())
          pieces[k] = constInts({values[k]});
      pads = g_.node("Concat", pieces, {intAttr("axis", 0)});
    }
    std::vector<std::string> ins = {x.name, pads};
    if (mode == "constant" && rng_.chance(0.6))
      ins.push_back(!scalarInput_.empty() && rng_.chance(0.5)
                        ? scalarInput_
                        : g_.floatScalar("v" + std::to_string(consts_++), rng_.symmetric()));
    onnx::AttributeProto m;
    m.set_name("mode");
    m.set_type(onnx::AttributeProto::STRING);
    m.set_s(mode);
    std::string name = g_.node("Pad", ins, {m});
    use(i);
    add(name, dims);
    return true;
  }

  /// A dim of the graph as a float scalar operand of an elementwise op (an exporter's scale by a
  /// runtime size): Cast(Gather(Shape(v), k)), rank 0 or [1], sometimes minus one first.
  bool shapeScalar(size_t i) {
    const Val x = pool_[i];
    const Val v = pool_[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(pool_.size()) - 1))];
    if (v.dims.empty())
      return false;
    auto axis = static_cast<int64_t>(rng_.range(0, static_cast<int64_t>(v.dims.size()) - 1));
    const bool scalar = rng_.chance(0.5);
    std::string dim = g_.node("Gather", {shapeOf(v.name), constInts({axis}, scalar)}, {intAttr("axis", 0)});
    if (rng_.chance(0.3))
      dim = g_.node("Sub", {dim, constInts({1}, scalar)});
    std::string f = g_.node("Cast", {dim}, {intAttr("to", kFloat)});
    std::vector<Poly> fDims, out;
    if (!scalar)
      fDims.push_back(Poly::constant(1));
    broadcastable(x.dims, fDims, out);
    static const char* kBin[] = {"Add", "Sub", "Mul"};
    std::vector<std::string> ins = {x.name, f};
    if (rng_.chance(0.5))
      std::swap(ins[0], ins[1]);
    std::string name = g_.node(kBin[rng_.range(0, 2)], ins);
    use(i);
    add(name, out);
    return true;
  }

  /// Outputs computed from shapes: Shape itself, one dim as a rank-0 value, dim - 1, or a dim
  /// cast to float.
  bool shapeOutput(size_t i) {
    const Val x = pool_[i];
    if (x.dims.empty() || shapeOuts_.size() >= 2)
      return false;
    std::string s = shapeOf(x.name);
    auto axis = static_cast<int64_t>(rng_.range(0, static_cast<int64_t>(x.dims.size()) - 1));
    switch (rng_.range(0, 3)) {
    case 0:
      shapeOuts_.push_back({s, kInt64, static_cast<int64_t>(x.dims.size())});
      break;
    case 1:
      shapeOuts_.push_back({g_.node("Gather", {s, constInts({axis}, true)}, {intAttr("axis", 0)}), kInt64, -1});
      break;
    case 2: {
      std::string dim = g_.node("Gather", {s, constInts({axis}, true)}, {intAttr("axis", 0)});
      shapeOuts_.push_back({g_.node("Sub", {dim, constInts({1}, true)}), kInt64, -1});
      break;
    }
    default: {
      std::string dim = g_.node("Gather", {s, constInts({axis})}, {intAttr("axis", 0)});
      shapeOuts_.push_back({g_.node("Cast", {dim}, {intAttr("to", kFloat)}), kFloat, 1});
      break;
    }
    }
    return true;
  }

  void forceTranspose() {
    // Every case holds at least one data op: a lone Identity would test nothing.
    size_t i = 0;
    if (!transpose(i)) {
      std::string name = g_.node("Mul", {pool_[i].name, pool_[i].name});
      use(i);
      add(name, pool_[i].dims);
    }
  }

  void declareOutput(const std::string& name, int elemType, const std::vector<Poly>& dims) {
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

  void finishOutputs() {
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

  Random rng_;
  GeneratorOptions opt_;
  onnx::ModelProto model_;
  GraphBuilder g_;
  std::vector<Atom> atoms_;
  std::vector<Val> pool_;
  std::vector<ShapeOut> shapeOuts_;
  std::map<std::string, std::string> shapeCache_;
  std::string scalarInput_, bound_;
  int consts_ = 0;
  int conds_ = 0;
  int dataOps_ = 0;
};

} // namespace

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
