// Elementwise ops with numpy broadcasting: arithmetic, Mod, Sum/Mean, Max/Min, comparison, logic
// (And, Or, Xor, Not), Where, unary math.
// Floats are computed in double and rounded once to the output dtype; for +, -, *, / and sqrt
// of f32/f16/bf16 operands that equals the correctly rounded result in the narrow type.
#include "OpFamilies.h"
#include "OpUtil.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace dynqual::reference {
namespace {

using FloatBinary = std::function<double(double, double)>;
using IntBinary = std::function<int64_t(const OpContext&, int64_t, int64_t)>;

// Evaluates out = f(a, b) elementwise over the broadcast shape. Operands must share a dtype
// unless `mixedTypes` (Pow's exponent). Integer results wrap to the output width.
Tensor binary(const OpContext& ctx, const FloatBinary& onFloat, const IntBinary& onInt, bool mixedTypes = false) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (!mixedTypes && a.dtype() != b.dtype())
    ctx.fail(std::string("operand dtypes differ: ") + dtypeName(a.dtype()) + " and " + dtypeName(b.dtype()));
  if (a.dtype() == DType::Bool || b.dtype() == DType::Bool)
    ctx.fail("unsupported: arithmetic on bool");
  const std::vector<int64_t> outDims = broadcastShape(ctx, {a.dims(), b.dims()});
  Tensor out(a.dtype(), outDims);
  const bool useFloat = isFloatDType(a.dtype()) || isFloatDType(b.dtype());
  forEachBroadcast(outDims, {broadcastStrides(a.dims(), outDims), broadcastStrides(b.dims(), outDims)},
                   [&](int64_t o, const std::vector<int64_t>& off) {
                     if (useFloat)
                       out.setDouble(o, onFloat(a.getDouble(off[0]), b.getDouble(off[1])));
                     else
                       out.setInt(o, onInt(ctx, a.getInt(off[0]), b.getInt(off[1])));
                   });
  return out;
}

// Wrapping int64 arithmetic (results are then wrapped again to the operand width).
int64_t wrapAdd(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
}
int64_t wrapSub(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
}
int64_t wrapMul(int64_t x, int64_t y) {
  return static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
}

std::vector<Tensor> add(const OpContext& ctx) {
  return {binary(ctx, std::plus<double>(), [](const OpContext&, int64_t x, int64_t y) { return wrapAdd(x, y); })};
}
std::vector<Tensor> sub(const OpContext& ctx) {
  return {binary(ctx, std::minus<double>(), [](const OpContext&, int64_t x, int64_t y) { return wrapSub(x, y); })};
}
std::vector<Tensor> mul(const OpContext& ctx) {
  return {binary(ctx, std::multiplies<double>(), [](const OpContext&, int64_t x, int64_t y) { return wrapMul(x, y); })};
}

// Integer Div truncates toward zero: ONNX tests compute it as numpy true division followed by
// astype (truncation), e.g. test_div_uint8; C++ '/' truncates the same way.
std::vector<Tensor> div(const OpContext& ctx) {
  return {binary(ctx, std::divides<double>(), [](const OpContext& c, int64_t x, int64_t y) -> int64_t {
    if (y == 0)
      c.fail("integer division by zero");
    if (y == -1)
      return wrapSub(0, x); // INT64_MIN / -1 overflows; negation wraps instead
    return x / y;
  })};
}

// Pow: base and exponent may differ in type (Pow-12+); the result has the base's dtype. With a
// float on either side it is computed in double (an integer result truncates toward zero, as
// numpy's astype); integer ** integer is exact repeated multiplication, wrapping.
std::vector<Tensor> pow(const OpContext& ctx) {
  if (isFloatDType(ctx.input(0).dtype()) || isFloatDType(ctx.input(1).dtype()))
    return {binary(ctx, [](double x, double y) { return std::pow(x, y); }, nullptr, true)};
  return {binary(
      ctx, nullptr,
      [](const OpContext& c, int64_t x, int64_t y) -> int64_t {
        if (y < 0)
          c.fail("unsupported: negative integer exponent");
        if (y >= 64 && x != 0 && x != 1 && x != -1)
          c.fail("unsupported: integer exponent >= 64");
        if (x == -1)
          return y % 2 ? -1 : 1;
        int64_t r = 1;
        for (int64_t k = 0; k < y && k < 64; ++k)
          r = wrapMul(r, x);
        return r;
      },
      true)};
}

// Comparisons produce bool; floats compare as doubles (NaN compares unequal), integers exactly.
Tensor compare(const OpContext& ctx, const std::function<bool(double, double)>& onFloat,
               const std::function<bool(int64_t, int64_t)>& onInt) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype())
    ctx.fail(std::string("operand dtypes differ: ") + dtypeName(a.dtype()) + " and " + dtypeName(b.dtype()));
  const std::vector<int64_t> outDims = broadcastShape(ctx, {a.dims(), b.dims()});
  Tensor out(DType::Bool, outDims);
  const bool useFloat = isFloatDType(a.dtype());
  forEachBroadcast(outDims, {broadcastStrides(a.dims(), outDims), broadcastStrides(b.dims(), outDims)},
                   [&](int64_t o, const std::vector<int64_t>& off) {
                     const bool r = useFloat ? onFloat(a.getDouble(off[0]), b.getDouble(off[1]))
                                             : onInt(a.getInt(off[0]), b.getInt(off[1]));
                     out.setInt(o, r ? 1 : 0);
                   });
  return out;
}

std::vector<Tensor> equal(const OpContext& ctx) {
  return {compare(ctx, std::equal_to<double>(), std::equal_to<int64_t>())};
}
std::vector<Tensor> greaterOrEqual(const OpContext& ctx) {
  return {compare(ctx, std::greater_equal<double>(), std::greater_equal<int64_t>())};
}
std::vector<Tensor> greater(const OpContext& ctx) {
  return {compare(ctx, std::greater<double>(), std::greater<int64_t>())};
}
std::vector<Tensor> less(const OpContext& ctx) {
  return {compare(ctx, std::less<double>(), std::less<int64_t>())};
}
std::vector<Tensor> lessOrEqual(const OpContext& ctx) {
  return {compare(ctx, std::less_equal<double>(), std::less_equal<int64_t>())};
}

std::vector<Tensor> logicalAnd(const OpContext& ctx) {
  if (ctx.input(0).dtype() != DType::Bool || ctx.input(1).dtype() != DType::Bool)
    ctx.fail("operands must be bool");
  return {compare(ctx, nullptr, [](int64_t x, int64_t y) { return x != 0 && y != 0; })};
}

std::vector<Tensor> logicalOr(const OpContext& ctx) {
  if (ctx.input(0).dtype() != DType::Bool || ctx.input(1).dtype() != DType::Bool)
    ctx.fail("operands must be bool");
  return {compare(ctx, nullptr, [](int64_t x, int64_t y) { return x != 0 || y != 0; })};
}

// Max / Min-13: one or more operands of one dtype, broadcast together. A NaN operand makes the
// result NaN (numpy maximum / minimum, which the ONNX reference uses).
OpEvaluator extremum(bool takeMax) {
  return [takeMax](const OpContext& ctx) -> std::vector<Tensor> {
    if (ctx.inputCount() == 0)
      ctx.fail("needs at least one input");
    std::vector<std::vector<int64_t>> shapes;
    const DType dtype = ctx.input(0).dtype();
    for (std::size_t k = 0; k < ctx.inputCount(); ++k) {
      const Tensor& t = ctx.input(k);
      if (t.dtype() != dtype)
        ctx.fail("input " + std::to_string(k) + " is " + dtypeName(t.dtype()) + ", input 0 is " + dtypeName(dtype));
      shapes.push_back(t.dims());
    }
    if (dtype == DType::Bool)
      ctx.fail("unsupported: bool operands");
    const std::vector<int64_t> outDims = broadcastShape(ctx, shapes);
    std::vector<std::vector<int64_t>> strides;
    for (const auto& s : shapes)
      strides.push_back(broadcastStrides(s, outDims));
    Tensor out(dtype, outDims);
    const bool useFloat = isFloatDType(dtype);
    forEachBroadcast(outDims, strides, [&](int64_t o, const std::vector<int64_t>& off) {
      if (useFloat) {
        double r = ctx.input(0).getDouble(off[0]);
        for (std::size_t k = 1; k < off.size(); ++k) {
          const double v = ctx.input(k).getDouble(off[k]);
          if (std::isnan(v) || std::isnan(r))
            r = std::nan("");
          else
            r = takeMax ? std::max(r, v) : std::min(r, v);
        }
        out.setDouble(o, r);
      } else {
        int64_t r = ctx.input(0).getInt(off[0]);
        for (std::size_t k = 1; k < off.size(); ++k) {
          const int64_t v = ctx.input(k).getInt(off[k]);
          r = takeMax ? std::max(r, v) : std::min(r, v);
        }
        out.setInt(o, r);
      }
    });
    return {out};
  };
}

// Neg: floats and signed integers; integer negation wraps (-(-128) is -128 in int8).
std::vector<Tensor> neg(const OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.dtype() == DType::Bool || in.dtype() == DType::Uint8)
    ctx.fail(std::string("unsupported: ") + dtypeName(in.dtype()) + " operand (float or signed integer types only)");
  Tensor out(in.dtype(), in.dims());
  for (int64_t i = 0; i < in.numel(); ++i) {
    if (isFloatDType(in.dtype()))
      out.setDouble(i, -in.getDouble(i));
    else
      out.setInt(i, wrapSub(0, in.getInt(i)));
  }
  return {out};
}

std::vector<Tensor> logicalNot(const OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.dtype() != DType::Bool)
    ctx.fail("operand must be bool");
  Tensor out(DType::Bool, in.dims());
  for (int64_t i = 0; i < in.numel(); ++i)
    out.setInt(i, in.getInt(i) ? 0 : 1);
  return {out};
}

std::vector<Tensor> where(const OpContext& ctx) {
  const Tensor& cond = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  if (cond.dtype() != DType::Bool)
    ctx.fail(std::string("condition must be bool, got ") + dtypeName(cond.dtype()));
  if (x.dtype() != y.dtype())
    ctx.fail(std::string("X and Y dtypes differ: ") + dtypeName(x.dtype()) + " and " + dtypeName(y.dtype()));
  const std::vector<int64_t> outDims = broadcastShape(ctx, {cond.dims(), x.dims(), y.dims()});
  Tensor out(x.dtype(), outDims);
  forEachBroadcast(outDims,
                   {broadcastStrides(cond.dims(), outDims), broadcastStrides(x.dims(), outDims),
                    broadcastStrides(y.dims(), outDims)},
                   [&](int64_t o, const std::vector<int64_t>& off) {
                     if (cond.getInt(off[0]))
                       copyElement(x, off[1], out, o);
                     else
                       copyElement(y, off[2], out, o);
                   });
  return {out};
}

// Float-only unary math, evaluated in double.
OpEvaluator unaryFloat(double (*f)(double)) {
  return [f](const OpContext& ctx) -> std::vector<Tensor> {
    const Tensor& in = ctx.input(0);
    if (!isFloatDType(in.dtype()))
      ctx.fail(std::string("unsupported: ") + dtypeName(in.dtype()) + " operand (float types only)");
    Tensor out(in.dtype(), in.dims());
    for (int64_t i = 0; i < in.numel(); ++i)
      out.setDouble(i, f(in.getDouble(i)));
    return {out};
  };
}

double reciprocal(double x) {
  return 1.0 / x;
}
double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double sqrtD(double x) {
  return std::sqrt(x);
}
double erfD(double x) {
  return std::erf(x);
}
double sinD(double x) {
  return std::sin(x);
}
double cosD(double x) {
  return std::cos(x);
}
double tanhD(double x) {
  return std::tanh(x);
}
double expD(double x) {
  return std::exp(x);
}

std::vector<Tensor> isNaN(const OpContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (!isFloatDType(in.dtype()))
    ctx.fail("operand must be a float type");
  Tensor out(DType::Bool, in.dims());
  for (int64_t i = 0; i < in.numel(); ++i)
    out.setInt(i, std::isnan(in.getDouble(i)) ? 1 : 0);
  return {out};
}

// Xor: bool operands.
std::vector<Tensor> logicalXor(const OpContext& ctx) {
  if (ctx.input(0).dtype() != DType::Bool || ctx.input(1).dtype() != DType::Bool)
    ctx.fail("operands must be bool");
  return {compare(ctx, nullptr, [](int64_t x, int64_t y) { return (x != 0) != (y != 0); })};
}

// Mod-13: fmod = 0 (integers only) gives the remainder with the divisor's sign (numpy mod);
// fmod = 1 the remainder with the dividend's sign (C fmod), the only form for floats. Integer
// modulo by zero is an error.
std::vector<Tensor> mod(const OpContext& ctx) {
  const int64_t fmod = ctx.intAttribute("fmod", 0);
  if (fmod != 0 && fmod != 1)
    ctx.fail("fmod must be 0 or 1");
  if (fmod == 0 && isFloatDType(ctx.input(0).dtype()))
    ctx.fail("unsupported: fmod = 0 on float operands (ONNX requires fmod = 1)");
  return {binary(
      ctx, [](double x, double y) { return std::fmod(x, y); },
      [fmod](const OpContext& c, int64_t x, int64_t y) -> int64_t {
        if (y == 0)
          c.fail("integer modulo by zero");
        if (y == -1)
          return 0;
        const int64_t r = x % y;
        if (fmod == 0 && r != 0 && ((r < 0) != (y < 0)))
          return r + y;
        return r;
      })};
}

// Sum-13 and Mean-13: one or more operands of one dtype, broadcast together, added left to right
// with each partial sum rounded to the dtype (as the ONNX reference accumulates in place); Mean
// then divides by the operand count. Mean admits float types only.
OpEvaluator sumOrMean(bool mean) {
  return [mean](const OpContext& ctx) -> std::vector<Tensor> {
    if (ctx.inputCount() == 0)
      ctx.fail("needs at least one input");
    const DType dtype = ctx.input(0).dtype();
    if (dtype == DType::Bool || (mean && !isFloatDType(dtype)))
      ctx.fail(std::string("unsupported: ") + dtypeName(dtype) + " operands");
    std::vector<std::vector<int64_t>> shapes;
    for (std::size_t k = 0; k < ctx.inputCount(); ++k) {
      if (ctx.input(k).dtype() != dtype)
        ctx.fail("input " + std::to_string(k) + " is " + dtypeName(ctx.input(k).dtype()) + ", input 0 is " +
                 dtypeName(dtype));
      shapes.push_back(ctx.input(k).dims());
    }
    const std::vector<int64_t> outDims = broadcastShape(ctx, shapes);
    std::vector<std::vector<int64_t>> strides;
    for (const auto& s : shapes)
      strides.push_back(broadcastStrides(s, outDims));
    Tensor out(dtype, outDims);
    Tensor partial(dtype, {});
    const bool useFloat = isFloatDType(dtype);
    forEachBroadcast(outDims, strides, [&](int64_t o, const std::vector<int64_t>& off) {
      if (useFloat) {
        partial.setDouble(0, ctx.input(0).getDouble(off[0]));
        for (std::size_t k = 1; k < off.size(); ++k)
          partial.setDouble(0, partial.getDouble(0) + ctx.input(k).getDouble(off[k]));
        double r = partial.getDouble(0);
        if (mean && off.size() > 1)
          r /= static_cast<double>(off.size());
        out.setDouble(o, r);
      } else {
        int64_t r = ctx.input(0).getInt(off[0]);
        for (std::size_t k = 1; k < off.size(); ++k)
          r = wrapAdd(r, ctx.input(k).getInt(off[k]));
        out.setInt(o, r);
      }
    });
    return {out};
  };
}

} // namespace

void registerElementwiseOps(OpRegistry& registry) {
  registry.add("Add", add);
  registry.add("Sub", sub);
  registry.add("Mul", mul);
  registry.add("Div", div);
  registry.add("Pow", pow);
  registry.add("Equal", equal);
  registry.add("GreaterOrEqual", greaterOrEqual);
  registry.add("Greater", greater);
  registry.add("Less", less);
  registry.add("LessOrEqual", lessOrEqual);
  registry.add("And", logicalAnd);
  registry.add("Or", logicalOr);
  registry.add("Max", extremum(true));
  registry.add("Min", extremum(false));
  registry.add("Neg", neg);
  registry.add("Not", logicalNot);
  registry.add("Where", where);
  registry.add("Sqrt", unaryFloat(sqrtD));
  registry.add("Reciprocal", unaryFloat(reciprocal));
  registry.add("Sigmoid", unaryFloat(sigmoid));
  registry.add("Erf", unaryFloat(erfD));
  registry.add("Sin", unaryFloat(sinD));
  registry.add("Cos", unaryFloat(cosD));
  registry.add("Tanh", unaryFloat(tanhD));
  registry.add("Exp", unaryFloat(expD));
  registry.add("IsNaN", isNaN);
  registry.add("Xor", logicalXor);
  registry.add("Mod", mod);
  registry.add("Sum", sumOrMean(false));
  registry.add("Mean", sumOrMean(true));
}

} // namespace dynqual::reference
