// Generator Concat of three or more data values along a dynamic axis whose extents differ at run
// time (docs/fuzz/generator.md, shapegen-4).
#include "GeneratorImpl.h"

namespace dynqual::fuzz::gen_detail {

bool Gen::concatMany(size_t i) {
  const Val x = pool_[i];
  std::vector<size_t> dynamicAxes;
  for (size_t k = 0; k < x.dims.size(); ++k)
    if (!x.dims[k].isConstant())
      dynamicAxes.push_back(k);
  if (dynamicAxes.empty())
    return false;
  size_t axis = dynamicAxes[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(dynamicAxes.size()) - 1))];
  // Pool values that match x everywhere but on the axis, with another extent there.
  std::vector<size_t> partners;
  for (size_t j = 0; j < pool_.size(); ++j) {
    if (j == i || pool_[j].dims.size() != x.dims.size() || pool_[j].dims[axis] == x.dims[axis])
      continue;
    bool ok = true;
    for (size_t k = 0; k < x.dims.size(); ++k)
      ok &= k == axis || pool_[j].dims[k] == x.dims[k];
    if (ok)
      partners.push_back(j);
  }
  shuffle(partners);
  const auto want = static_cast<size_t>(rng_.range(3, 4));
  // Leave room for at least one piece cut from x, so one extent is always x's minus a part.
  std::vector<size_t> taken;
  for (size_t j : partners)
    if (taken.size() + 2 < want)
      taken.push_back(j);
  const Poly d = x.dims[axis];
  const size_t pieces = want - 1 - taken.size();
  // The element cap, with each piece at its largest (d).
  std::vector<Poly> dims = x.dims;
  Poly sum = d;
  for (size_t j : taken)
    sum = sum + pool_[j].dims[axis];
  for (size_t p = 0; p < pieces; ++p)
    sum = sum + d;
  dims[axis] = sum;
  if (!fits(dims))
    return false;
  std::vector<std::string> names{x.name};
  sum = d;
  for (size_t j : taken) {
    names.push_back(pool_[j].name);
    sum = sum + pool_[j].dims[axis];
    use(j);
  }
  // Pieces of x with other extents on the axis: all but the first element (d - 1, empty when d
  // is 1) and every other element (ceil(d / 2)); with d >= 2 at run time the extents differ.
  for (size_t p = 0; p < pieces; ++p) {
    bool dropFirst = p % 2 == 0;
    names.push_back(g_.node("Slice", {x.name, constInts({dropFirst ? 1 : 0}), constInts({kMax}),
                                      constInts({static_cast<int64_t>(axis)}), constInts({dropFirst ? 1 : 2})}));
    sum = sum + Poly::atom(newAtom(dropFirst || mayBeZero(d), d));
  }
  shuffle(names);
  dims[axis] = sum;
  int64_t axisValue = static_cast<int64_t>(axis) - (rng_.chance(0.3) ? static_cast<int64_t>(x.dims.size()) : 0);
  std::string name = g_.node("Concat", names, {intAttr("axis", axisValue)});
  use(i);
  add(name, dims);
  return true;
}

} // namespace dynqual::fuzz::gen_detail
