// Cast between the supported dtypes.
#include "OpFamilies.h"
#include "OpUtil.h"

namespace dynqual::reference {
namespace {

// Float -> float rounds once to nearest even (through double, which holds every source value
// exactly). Float -> integer truncates toward zero, saturates to int64 (NaN -> 0) and wraps to
// the width (ONNX leaves out-of-range values undefined). Anything -> bool is "!= 0" (NaN is
// true, as numpy). Integer -> integer wraps modulo 2^bits.
std::vector<Tensor> cast(const OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  const int64_t to = ctx.requiredIntAttribute("to");
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
  return {out};
}

} // namespace

void registerCastOps(OpRegistry& registry) { registry.add("Cast", cast); }

} // namespace dynqual::reference
