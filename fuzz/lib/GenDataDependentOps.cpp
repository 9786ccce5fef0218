// Generator ops whose extents are known only after a kernel ran: NonZero, Compress.
#include "GeneratorImpl.h"

namespace dynqual::fuzz::gen_detail {

bool Gen::nonZero(size_t i) {
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

std::string Gen::condition(const Val& x, size_t axis) {
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
      modelgen::declare(model_.mutable_graph()->add_input(), name, onnx::TensorProto::BOOL, {""}, {d.constantValue()});
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

bool Gen::compress(size_t i) {
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
    std::string cond =
        g_.node(rng_.chance(0.5) ? "Greater" : "Less", {flat, g_.floatScalar("t" + std::to_string(consts_++), 0.0)});
    name = g_.node("Compress", {x.name, cond});
    dims = {Poly::atom(newAtom(true, product(x.dims, 0, x.dims.size())))};
  }
  use(i);
  add(name, dims);
  return true;
}

} // namespace dynqual::fuzz::gen_detail
