// Generator ops over shape values: a dim as a scalar operand, Shape arithmetic as an output.
#include "GeneratorImpl.h"

namespace dynqual::fuzz::gen_detail {

bool Gen::shapeScalar(size_t i) {
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
  std::string name = binaryNode(x.name, f);
  use(i);
  add(name, out);
  return true;
}

bool Gen::shapeOutput(size_t i) {
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

} // namespace dynqual::fuzz::gen_detail
