// Generator chains of views: a unit Slice, then Transpose, Unsqueeze or Squeeze and Reshape of
// it, ending in an op that needs a contiguous operand (docs/fuzz/generator.md, shapegen-4).
#include "GeneratorImpl.h"

namespace dynqual::fuzz::gen_detail {

bool Gen::unitSlice(size_t i) {
  const Val x = pool_[i];
  std::optional<size_t> picked = nonEmptyAxis(x);
  if (!picked)
    return false;
  size_t axis = *picked;
  // The last element or the first: either way exactly one, since the extent is at least 1. The
  // last one gives the view a non-zero offset.
  bool last = rng_.chance(0.3);
  std::vector<int64_t> starts{last ? -1 : 0}, ends{last ? kMax : 1}, sliced{static_cast<int64_t>(axis)}, steps{1};
  std::vector<Poly> dims = x.dims;
  dims[axis] = Poly::constant(1);
  if (x.dims.size() >= 2 && rng_.chance(0.5)) {
    size_t other =
        (axis + 1 + static_cast<size_t>(rng_.range(0, static_cast<int64_t>(x.dims.size()) - 2))) % x.dims.size();
    const Poly d = x.dims[other];
    starts.push_back(0);
    ends.push_back(kMax);
    sliced.push_back(static_cast<int64_t>(other));
    steps.push_back(2);
    // ceil(d / 2): 0 only where d can be 0.
    dims[other] = d.isConstant() ? Poly::constant((d.constantValue() + 1) / 2) : Poly::atom(newAtom(mayBeZero(d), d));
  }
  std::string name =
      g_.node("Slice", {x.name, constInts(starts), constInts(ends), constInts(sliced), constInts(steps)});
  use(i);
  add(name, dims);
  return true;
}

bool Gen::viewChain(size_t i) {
  if (!unitSlice(i))
    return false;
  auto top = [&] { return pool_.size() - 1; };
  // Each link is taken most of the time, so most chains are three or four views deep; a link
  // that cannot apply (Transpose of rank 1, Squeeze without a static 1) is left out. The dynamic
  // axes the Slice keeps are size 1 on the bindings that set their symbol to 1, next to the
  // static unit dim the Slice made.
  if (rng_.chance(0.8))
    transpose(top());
  if (rng_.chance(0.75)) {
    if (rng_.chance(0.5) || !squeeze(top()))
      unsqueeze(top());
  }
  if (rng_.chance(0.5))
    reshape(top());
  switch (rng_.range(0, 2)) {
  case 0:
    concat(top());
    break;
  case 1:
    gather(top());
    break;
  default:
    transpose(top());
    break;
  }
  return true;
}

} // namespace dynqual::fuzz::gen_detail
