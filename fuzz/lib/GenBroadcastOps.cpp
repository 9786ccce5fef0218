// Generator ops that broadcast: binary elementwise ops and Expand.
#include "GeneratorImpl.h"

namespace dynqual::fuzz::gen_detail {

bool Gen::broadcastable(const std::vector<Poly>& a, const std::vector<Poly>& b, std::vector<Poly>& out) {
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

bool Gen::binary(size_t i) {
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
  std::string name = binaryNode(x.name, other);
  use(i);
  add(name, out);
  return true;
}

Poly Gen::randomDim() {
  if (rng_.chance(0.5)) {
    const Val& v = pool_[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(pool_.size()) - 1))];
    if (!v.dims.empty())
      return v.dims[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(v.dims.size()) - 1))];
  }
  return Poly::constant(rng_.range(1, 3));
}

bool Gen::expand(size_t i) {
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

bool Gen::runtimeOneBroadcast(size_t i) {
  const Val x = pool_[i];
  // An axis of x with a dynamic extent d, and an input symbol N other than d itself.
  std::vector<std::pair<size_t, int>> choices;
  for (size_t a = 0; a < x.dims.size(); ++a)
    for (int s = 0; s < static_cast<int>(atoms_.size()); ++s)
      if (!x.dims[a].isConstant() && atoms_[static_cast<size_t>(s)].input && x.dims[a] != Poly::atom(s))
        choices.emplace_back(a, s);
  if (choices.empty())
    return false;
  auto [axis, sym] = choices[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(choices.size()) - 1))];
  const Poly d = x.dims[axis];
  std::string n = dimPiece(Poly::atom(sym)), full = dimPiece(d);
  if (n.empty() || full.empty())
    return false;
  // e = N == 1 ? 1 : d, so y = x[.., :e, ..] is 1 on that axis exactly when N is 1 and as long
  // as x otherwise: y meets x's extent d (another dynamic dim) and broadcasts wherever the
  // binding puts N alone at 1. Valid on every binding, since e is 1 or d.
  std::string one = constInts({1});
  std::string e = g_.node("Where", {g_.node("Equal", {n, one}), one, full});
  std::string y = g_.node("Slice", {x.name, constInts({0}), e, constInts({static_cast<int64_t>(axis)})});
  std::vector<Poly> yDims = x.dims;
  yDims[axis] = Poly::atom(newAtom(mayBeZero(d), d)); // e is 1 or d, and Slice clamps to d
  add(y, yDims);
  std::string name;
  if (rng_.chance(0.35)) {
    // Expand y back to x's shape: the runtime-1 dim is stretched to d.
    name = g_.node("Expand", {y, shapeOf(x.name)});
  } else {
    name = binaryNode(x.name, y);
    use(i);
  }
  use(pool_.size() - 1);
  add(name, x.dims);
  return true;
}

} // namespace dynqual::fuzz::gen_detail
