// Generator ops that regroup extents: Reshape (in order and reordering), Unsqueeze, Squeeze, Flatten, Split.
#include "GeneratorImpl.h"

namespace dynqual::fuzz::gen_detail {

bool Gen::reshape(size_t i) {
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

bool Gen::reorderingReshape(size_t i) {
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

bool Gen::emitReshape(size_t i, const std::vector<Poly>& out) {
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
  const bool twice = subtractedShape_ && !pool_[i].input && rng_.chance(0.9);
  use(i);
  add(name, out);
  if (twice) {
    // The same shape again, for an elementwise value of the same dims written after it (an
    // exporter reshaping q and k alike): the dims are computed once, before the writer, and the
    // second Reshape is a graph output (the class of corpus/reshape_output_dims_in_order).
    std::string c = g_.floatScalar("w" + std::to_string(consts_++), rng_.symmetric());
    std::string w = binaryNode(pool_[i].name, c);
    add(w, in);
    use(pool_.size() - 1);
    std::string second = g_.node("Reshape", {w, shape}, attrs);
    add(second, out);
  }
  return true;
}

bool Gen::unsqueeze(size_t i) {
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

bool Gen::squeeze(size_t i) {
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

bool Gen::flatten(size_t i) {
  const Val x = pool_[i];
  auto axis = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(x.dims.size())));
  std::vector<Poly> dims = {product(x.dims, 0, axis), product(x.dims, axis, x.dims.size())};
  std::string name = g_.node("Flatten", {x.name}, {intAttr("axis", static_cast<int64_t>(axis))});
  use(i);
  add(name, dims);
  return true;
}

bool Gen::split(size_t i) {
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
    first = second = half; // equal split, no 'split' input
  } else if (!d.isConstant() && d.minValue(atoms_) >= 1) {
    std::string piece = dimPiece(d);
    if (piece.empty())
      return false;
    inputs.push_back(
        g_.node("Concat", {constInts({1}), g_.node("Sub", {piece, constInts({1})})}, {intAttr("axis", 0)}));
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

} // namespace dynqual::fuzz::gen_detail
