// Unary math and activations: Relu, LeakyRelu, Abs, Log, Floor, Ceil, Round, Sign, Clip. Floats
// are computed in double and rounded once to the output dtype; integers exactly, wrapping.
#include "OpFamilies.h"
#include "OpUtil.h"

#include <cmath>

namespace dynqual::reference {
namespace {

using FloatFn = double (*)(double);
using IntFn = int64_t (*)(int64_t);

// An elementwise unary op: `onFloat` for float operands, `onInt` for integer ones (null: float
// types only). Bool is rejected; `signedOnly` also rejects uint8 (ONNX Relu has no unsigned type).
OpEvaluator unary(FloatFn onFloat, IntFn onInt, bool signedOnly = false) {
  return [onFloat, onInt, signedOnly](const OpContext& ctx) -> std::vector<Tensor> {
    const Tensor& in = ctx.input(0);
    const bool useFloat = isFloatDType(in.dtype());
    if (in.dtype() == DType::Bool || (!useFloat && !onInt) || (signedOnly && in.dtype() == DType::Uint8))
      ctx.fail(std::string("unsupported: ") + dtypeName(in.dtype()) + " operand");
    Tensor out(in.dtype(), in.dims());
    for (int64_t i = 0; i < in.numel(); ++i) {
      if (useFloat)
        out.setDouble(i, onFloat(in.getDouble(i)));
      else
        out.setInt(i, onInt(in.getInt(i)));
    }
    return {out};
  };
}

// Relu and Sign keep NaN (every comparison with it is false).
double reluF(double x) {
  return x < 0 ? 0.0 : x;
}
int64_t reluI(int64_t x) {
  return x < 0 ? 0 : x;
}
double absF(double x) {
  return std::fabs(x);
}
int64_t absI(int64_t x) {
  return x < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(x)) : x;
}
double logF(double x) {
  return std::log(x);
}
double floorF(double x) {
  return std::floor(x);
}
double ceilF(double x) {
  return std::ceil(x);
}
// Round-11: halves go to the even neighbour (numpy round).
double roundF(double x) {
  const double r = std::round(x);
  return std::fabs(x - std::trunc(x)) == 0.5 ? 2.0 * std::round(x / 2.0) : r;
}
double signF(double x) {
  return x > 0 ? 1.0 : x < 0 ? -1.0 : x;
}
int64_t signI(int64_t x) {
  return x > 0 ? 1 : x < 0 ? -1 : 0;
}

// LeakyRelu-16: x < 0 ? alpha * x : x, alpha default 0.01; float types.
std::vector<Tensor> leakyRelu(const OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (!isFloatDType(in.dtype()))
    ctx.fail(std::string("unsupported: ") + dtypeName(in.dtype()) + " operand (float types only)");
  const double alpha = ctx.floatAttribute("alpha", 0.01f);
  Tensor out(in.dtype(), in.dims());
  for (int64_t i = 0; i < in.numel(); ++i) {
    const double x = in.getDouble(i);
    out.setDouble(i, x < 0 ? alpha * x : x);
  }
  return {out};
}

// Clip: numpy clip, i.e. min(max(x, lo), hi) (hi wins when lo > hi; NaN stays NaN). Bounds are
// optional scalar inputs from opset 11, float attributes 'min' / 'max' before.
std::vector<Tensor> clip(const OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.dtype() == DType::Bool)
    ctx.fail("unsupported: bool operand");
  const bool useFloat = isFloatDType(in.dtype());
  bool hasLo = false, hasHi = false;
  double lo = 0, hi = 0;
  int64_t ilo = 0, ihi = 0;
  auto bound = [&](std::size_t k, bool& has, double& f, int64_t& i) {
    if (!ctx.hasInput(k))
      return;
    const Tensor& b = ctx.input(k);
    if (b.dtype() != in.dtype())
      ctx.fail("bound " + std::to_string(k) + " is " + dtypeName(b.dtype()) + ", input is " + dtypeName(in.dtype()));
    if (b.numel() != 1)
      ctx.fail("bound " + std::to_string(k) + " must hold one element");
    has = true;
    f = b.getDouble(0);
    i = b.getInt(0);
  };
  if (ctx.opset() < 11) {
    if (!useFloat)
      ctx.fail("unsupported: Clip before opset 11 on a non-float operand");
    hasLo = ctx.hasAttribute("min");
    hasHi = ctx.hasAttribute("max");
    lo = ctx.floatAttribute("min", 0.0f);
    hi = ctx.floatAttribute("max", 0.0f);
  } else {
    bound(1, hasLo, lo, ilo);
    bound(2, hasHi, hi, ihi);
  }
  Tensor out(in.dtype(), in.dims());
  for (int64_t i = 0; i < in.numel(); ++i) {
    if (useFloat) {
      double x = in.getDouble(i);
      if (hasLo)
        x = (std::isnan(x) || std::isnan(lo)) ? std::nan("") : std::max(x, lo);
      if (hasHi)
        x = (std::isnan(x) || std::isnan(hi)) ? std::nan("") : std::min(x, hi);
      out.setDouble(i, x);
    } else {
      int64_t x = in.getInt(i);
      if (hasLo)
        x = std::max(x, ilo);
      if (hasHi)
        x = std::min(x, ihi);
      out.setInt(i, x);
    }
  }
  return {out};
}

} // namespace

void registerActivationOps(OpRegistry& registry) {
  registry.add("Relu", unary(reluF, reluI, true));
  registry.add("LeakyRelu", leakyRelu);
  registry.add("Abs", unary(absF, absI));
  registry.add("Log", unary(logF, nullptr));
  registry.add("Floor", unary(floorF, nullptr));
  registry.add("Ceil", unary(ceilF, nullptr));
  registry.add("Round", unary(roundF, nullptr));
  registry.add("Sign", unary(signF, signI));
  registry.add("Clip", clip);
}

} // namespace dynqual::reference
