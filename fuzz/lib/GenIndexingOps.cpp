// Generator ops that select or move data: Slice, Transpose, Concat, Gather, Pad, Tile.
#include "GeneratorImpl.h"

namespace dynqual::fuzz::gen_detail {

std::string Gen::boundInput() {
  if (bound_.empty()) {
    bound_ = "bound";
    modelgen::declare(model_.mutable_graph()->add_input(), bound_, kInt64, {""}, {1});
  }
  return bound_;
}

bool Gen::slice(size_t i) {
  const Val x = pool_[i];
  if (x.dims.empty())
    return false;
  auto axis = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(x.dims.size()) - 1));
  const Poly d = x.dims[axis];
  const bool constDim = d.isConstant();
  const int64_t c = d.constantValue();
  if (constDim && c == 0)
    return false; // ONNX shape inference gives a reversed empty axis extent 1, not 0
  std::string start, end, step;
  Poly out;
  auto clampedCount = [](int64_t n, int64_t s, int64_t e, int64_t st) {
    // ONNX Slice: clamp to [0, n] for a positive step, [-1, n-1] for a negative one.
    if (s < 0)
      s += n;
    if (e < 0 && e != kMin)
      e += n;
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

bool Gen::transpose(size_t i) {
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

bool Gen::concat(size_t i) {
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

bool Gen::gather(size_t i) {
  const Val x = pool_[i];
  std::optional<size_t> picked = nonEmptyAxis(x);
  if (!picked)
    return false;
  size_t axis = *picked;
  std::vector<Poly> dims(x.dims.begin(), x.dims.begin() + static_cast<std::ptrdiff_t>(axis));
  std::string idx;
  switch (rng_.range(0, 2)) {
  case 0:
    idx = constInts({rng_.chance(0.5) ? 0 : -1}, true);
    break; // rank drops by one
  case 1:
    idx = constInts({-1});
    dims.push_back(Poly::constant(1));
    break;
  default:
    idx = constInts({0, -1, 0});
    dims.push_back(Poly::constant(3));
    break;
  }
  dims.insert(dims.end(), x.dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.dims.end());
  std::string name = g_.node("Gather", {x.name, idx}, {intAttr("axis", static_cast<int64_t>(axis))});
  use(i);
  add(name, dims);
  return true;
}

bool Gen::pad(size_t i) {
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

bool Gen::tile(size_t i) {
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

} // namespace dynqual::fuzz::gen_detail
