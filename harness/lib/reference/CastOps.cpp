// Cast and CastLike between the supported dtypes.
#include "OpFamilies.h"
#include "OpUtil.h"

namespace dynqual::reference {
namespace {

// Float -> float rounds once to nearest even (through double, which holds every source value
// exactly). Float -> integer truncates toward zero, saturates to int64 (NaN -> 0) and wraps to
// the width (ONNX leaves out-of-range values undefined). Anything -> bool is "!= 0" (NaN is
// true, as numpy). Integer -> integer wraps modulo 2^bits.
Tensor castTo(const OpContext& ctx, const Tensor& in, int64_t to) {
  if (to == onnx::TensorProto::STRING)
    ctx.fail("unsupported: string type (Cast to STRING)");
  if (!isSupportedOnnxDType(static_cast<int32_t>(to)))
    ctx.fail("unsupported dtype " + onnxDTypeName(static_cast<int32_t>(to)) + " as Cast target");
  const DType target = static_cast<DType>(to);
  Tensor out(target, in.dims());
  const bool exactInt = !isFloatDType(in.dtype());
  for (int64_t i = 0; i < in.numel(); ++i) {
    if (exactInt)
      out.setInt(i, in.getInt(i));
    else
      out.setDouble(i, in.getDouble(i));
  }
  return out;
}

std::vector<Tensor> cast(const OpContext& ctx) {
  return {castTo(ctx, ctx.input(0), ctx.requiredIntAttribute("to"))};
}

// CastLike-15: Cast to the dtype of input 1 (its values are not read).
std::vector<Tensor> castLike(const OpContext& ctx) {
  if (ctx.intAttribute("saturate", 1) != 1)
    ctx.fail("unsupported: CastLike with saturate = 0");
  return {castTo(ctx, ctx.input(0), static_cast<int64_t>(ctx.input(1).dtype()))};
}

} // namespace

void registerCastOps(OpRegistry& registry) {
  registry.add("Cast", cast);
  registry.add("CastLike", castLike);
}

} // namespace dynqual::reference
