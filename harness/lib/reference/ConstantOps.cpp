// Ops that create tensors from attributes or scalar operands.
#include "OpFamilies.h"
#include "OpUtil.h"

#include "dynqual/onnx/TensorProtoIO.h"

#include <cmath>

namespace dynqual::reference {
namespace {

// Exactly one of the value* attributes defines the constant (Constant-12 added the scalar and
// list forms; -1/-9/-11 have only 'value').
std::vector<Tensor> constant(const OpContext& ctx) {
  if (ctx.node().attribute_size() != 1)
    ctx.fail("needs exactly one value attribute, has " + std::to_string(ctx.node().attribute_size()));
  const onnx::AttributeProto& a = ctx.node().attribute(0);
  const std::string& name = a.name();
  if (name == "value")
    return {onnxio::tensorFromProto(a.t(), ctx.describe() + " attribute 'value'")};
  if (name == "value_float")
    return {Tensor::fromDoubles(DType::Float, {}, {a.f()})};
  if (name == "value_floats")
    return {Tensor::fromDoubles(DType::Float, {a.floats_size()}, {a.floats().begin(), a.floats().end()})};
  if (name == "value_int")
    return {Tensor::fromInts(DType::Int64, {}, {a.i()})};
  if (name == "value_ints")
    return {Tensor::fromInts(DType::Int64, {a.ints_size()}, {a.ints().begin(), a.ints().end()})};
  if (name == "value_string" || name == "value_strings")
    ctx.fail("unsupported: string type (attribute '" + name + "')");
  if (name == "sparse_value")
    ctx.fail("unsupported: sparse tensors (attribute 'sparse_value')");
  ctx.fail("unknown attribute '" + name + "'");
}

std::vector<Tensor> constantOfShape(const OpContext& ctx) {
  const std::vector<int64_t> dims = intValues(ctx, ctx.input(0), "shape");
  for (int64_t d : dims)
    if (d < 0)
      ctx.fail("negative dim in shape " + shapeToString(dims));
  Tensor value(DType::Float, {1}); // default: one f32 zero
  if (const auto* a = ctx.attribute("value")) {
    value = onnxio::tensorFromProto(a->t(), ctx.describe() + " attribute 'value'");
    if (value.numel() != 1)
      ctx.fail("attribute 'value' must hold one element, has " + std::to_string(value.numel()));
  }
  ctx.checkOutputSize(dims);
  Tensor out(value.dtype(), dims);
  for (int64_t i = 0; i < out.numel(); ++i)
    copyElement(value, 0, out, i);
  return {out};
}

// Range: n = max(ceil((limit - start) / delta), 0) elements, element i = start + i * delta
// (the numpy.arange formula the ONNX tests use).
std::vector<Tensor> range(const OpContext& ctx) {
  const Tensor& start = ctx.input(0);
  const Tensor& limit = ctx.input(1);
  const Tensor& delta = ctx.input(2);
  for (const Tensor* t : {&start, &limit, &delta}) {
    if (t->numel() != 1 || t->rank() > 1)
      ctx.fail("start, limit and delta must be scalars, got shape " + shapeToString(t->dims()));
    if (t->dtype() != start.dtype())
      ctx.fail("start, limit and delta must have one dtype");
  }
  if (start.dtype() == DType::Bool)
    ctx.fail("unsupported: bool Range");
  if (isFloatDType(start.dtype())) {
    const double s = start.getDouble(0), l = limit.getDouble(0), d = delta.getDouble(0);
    if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
      ctx.fail("delta must be nonzero and start, limit, delta finite");
    const double count = std::max(std::ceil((l - s) / d), 0.0);
    if (count > 1e12)
      ctx.fail("output of " + std::to_string(count) + " elements is too large");
    ctx.checkOutputSize({static_cast<int64_t>(count)});
    Tensor out(start.dtype(), {static_cast<int64_t>(count)});
    for (int64_t i = 0; i < out.numel(); ++i)
      out.setDouble(i, s + static_cast<double>(i) * d);
    return {out};
  }
  const int64_t s = start.getInt(0), l = limit.getInt(0), d = delta.getInt(0);
  if (d == 0)
    ctx.fail("delta must be nonzero");
  // ceil((l - s) / d) with exact integers: the span is at most 2^64 in magnitude, so use __int128.
  const __int128 span = static_cast<__int128>(l) - s;
  __int128 count = 0;
  if ((span > 0 && d > 0) || (span < 0 && d < 0)) {
    const __int128 mag = span > 0 ? span : -span;
    const __int128 step = d > 0 ? d : -static_cast<__int128>(d);
    count = (mag + step - 1) / step;
  }
  if (count > (int64_t{1} << 40))
    ctx.fail("output is too large");
  ctx.checkOutputSize({static_cast<int64_t>(count)});
  Tensor out(start.dtype(), {static_cast<int64_t>(count)});
  for (int64_t i = 0; i < out.numel(); ++i)
    out.setInt(i, static_cast<int64_t>(static_cast<uint64_t>(s) + static_cast<uint64_t>(i) * static_cast<uint64_t>(d)));
  return {out};
}

} // namespace

void registerConstantOps(OpRegistry& registry) {
  registry.add("Constant", constant);
  registry.add("ConstantOfShape", constantOfShape);
  registry.add("Range", range);
}

} // namespace dynqual::reference
