// Elementwise kernels of the sim device: binary and unary tables (add a line to add one), where
// and cast.
#include "SimKernelSupport.h"

namespace dq::rt::sim {
namespace {

// ---- elementwise ops: add a line to a table to add one --------------------------------------

using FloatFn = double (*)(double, double);
using IntFn = int64_t (*)(int64_t, int64_t);
struct Binary {
  const char *name;
  FloatFn f;        ///< used when either input is a float
  IntFn i;          ///< used when both inputs are integers or bool
  bool boolResult;  ///< output is bool (comparisons) instead of the input dtype
  TypeSet types;    ///< dtypes admitted for in 0 (and in 1 unless `exponent` is set)
  TypeSet exponent; ///< non-zero: in 1 may have its own dtype from this set (Pow's T1)
};

int64_t truncDiv(int64_t a, int64_t b) {
  if (b == 0) throw RuntimeError("integer division by zero");
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return a; // wraps
  return a / b;
}

// Integer power: exact with wrap-around for e >= 0; for e < 0 the real result truncated toward
// zero (only |a| = 1 gives a non-zero value), and 0 to a negative power is an error.
int64_t intPow(int64_t a, int64_t e) {
  if (e < 0) {
    if (a == 0) throw RuntimeError("integer 0 raised to the negative power " + std::to_string(e));
    if (a == 1) return 1;
    if (a == -1) return (e % 2 == 0) ? 1 : -1;
    return 0;
  }
  int64_t r = 1;
  for (; e > 0; e >>= 1) {
    if (e & 1) r = wrapMul(r, a);
    a = wrapMul(a, a);
  }
  return r;
}

// NaN-propagating max/min (numpy maximum/minimum, the ONNX reference semantics).
// ONNX Mod with fmod = 0 (integers only): the remainder takes the divisor's sign (Python %).
int64_t floorMod(int64_t a, int64_t b) {
  if (b == 0) throw RuntimeError("integer modulo by zero");
  if (b == -1) return 0; // INT64_MIN % -1 overflows
  int64_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

// ONNX Mod with fmod = 1 on integers: the remainder takes the dividend's sign (C fmod).
int64_t truncMod(int64_t a, int64_t b) {
  if (b == 0) throw RuntimeError("integer modulo by zero");
  return b == -1 ? 0 : a % b;
}

using kernel::kIntegerTypes;

const Binary kBinary[] = {
    {"add", [](double a, double b) { return a + b; }, wrapAdd, false, kAllTypes, 0},
    {"sub", [](double a, double b) { return a - b; }, wrapSub, false, kAllTypes, 0},
    {"mul", [](double a, double b) { return a * b; }, wrapMul, false, kAllTypes, 0},
    {"div", [](double a, double b) { return a / b; }, truncDiv, false, kAllTypes, 0},
    {"equal", [](double a, double b) { return a == b ? 1.0 : 0.0; },
     [](int64_t a, int64_t b) -> int64_t { return a == b; }, true, kAllTypes, 0},
    {"pow", [](double a, double b) { return std::pow(a, b); }, intPow, false, kWideTypes, kNumericTypes},
    {"max", fmaxNan, [](int64_t a, int64_t b) { return std::max(a, b); }, false, kNumericTypes, 0},
    {"min", fminNan, [](int64_t a, int64_t b) { return std::min(a, b); }, false, kNumericTypes, 0},
    {"and", nullptr, [](int64_t a, int64_t b) -> int64_t { return a != 0 && b != 0; }, false, kBoolTypes, 0},
    {"or", nullptr, [](int64_t a, int64_t b) -> int64_t { return a != 0 || b != 0; }, false, kBoolTypes, 0},
    {"less", [](double a, double b) { return a < b ? 1.0 : 0.0; },
     [](int64_t a, int64_t b) -> int64_t { return a < b; }, true, kNumericTypes, 0},
    {"less_equal", [](double a, double b) { return a <= b ? 1.0 : 0.0; },
     [](int64_t a, int64_t b) -> int64_t { return a <= b; }, true, kNumericTypes, 0},
    {"greater", [](double a, double b) { return a > b ? 1.0 : 0.0; },
     [](int64_t a, int64_t b) -> int64_t { return a > b; }, true, kNumericTypes, 0},
    {"greater_equal", [](double a, double b) { return a >= b ? 1.0 : 0.0; },
     [](int64_t a, int64_t b) -> int64_t { return a >= b; }, true, kNumericTypes, 0},
    {"xor", nullptr, [](int64_t a, int64_t b) -> int64_t { return (a != 0) != (b != 0); }, false, kBoolTypes, 0},
    {"mod", nullptr, floorMod, false, kIntegerTypes, 0},
    {"fmod", [](double a, double b) { return std::fmod(a, b); }, truncMod, false, kNumericTypes, 0},
};

void runBinary(const Binary &op, std::vector<Operand> &ins, std::vector<Operand> &outs) {
  kernel::validateElementwise(op.name, ins, outs, true, op.types, op.exponent, op.boolResult);
  Operand &out = outs[0];
  const bool fl = isFloat(ins[0].dtype) || isFloat(ins[1].dtype);
  try {
    forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
      int64_t ea = at(ins[0], idx), eb = at(ins[1], idx), eo = at(out, idx);
      if (fl)
        storeD(out, eo, op.f(loadD(ins[0], ea), loadD(ins[1], eb)));
      else
        storeI(out, eo, op.i(loadI(ins[0], ea), loadI(ins[1], eb)));
    });
  } catch (const RuntimeError &e) {
    fail(op.name, e.what());
  }
}

using FloatFn1 = double (*)(double);
using IntFn1 = int64_t (*)(int64_t);
struct Unary {
  const char *name;
  FloatFn1 f;      ///< float inputs; also integer inputs when `i` is null (result truncated)
  IntFn1 i;        ///< integer and bool inputs
  bool boolResult; ///< output is bool instead of the input dtype
  TypeSet types;   ///< dtypes admitted for the input
};

const Unary kUnary[] = {
    {"neg", [](double x) { return -x; }, [](int64_t x) { return wrapSub(0, x); }, false, kSignedTypes},
    {"sqrt", [](double x) { return std::sqrt(x); }, nullptr, false, kFloatTypes},
    {"reciprocal", [](double x) { return 1.0 / x; }, nullptr, false, kFloatTypes},
    {"sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, nullptr, false, kFloatTypes},
    {"tanh", [](double x) { return std::tanh(x); }, nullptr, false, kFloatTypes},
    {"erf", [](double x) { return std::erf(x); }, nullptr, false, kNumericTypes},
    {"exp", [](double x) { return std::exp(x); }, nullptr, false, kFloatTypes},
    {"cos", [](double x) { return std::cos(x); }, nullptr, false, kFloatTypes},
    {"sin", [](double x) { return std::sin(x); }, nullptr, false, kFloatTypes},
    {"not", nullptr, [](int64_t x) -> int64_t { return x == 0; }, false, kBoolTypes},
    {"isnan", [](double x) { return std::isnan(x) ? 1.0 : 0.0; }, nullptr, true, kFloatTypes},
    // NaN stays NaN in relu and sign (every comparison with it is false).
    {"relu", [](double x) { return x < 0 ? 0.0 : x; }, [](int64_t x) -> int64_t { return x < 0 ? 0 : x; }, false,
     kSignedTypes},
    {"abs", [](double x) { return std::fabs(x); }, [](int64_t x) { return x < 0 ? wrapSub(0, x) : x; }, false,
     kNumericTypes},
    {"log", [](double x) { return std::log(x); }, nullptr, false, kFloatTypes},
    {"floor", [](double x) { return std::floor(x); }, nullptr, false, kFloatTypes},
    {"ceil", [](double x) { return std::ceil(x); }, nullptr, false, kFloatTypes},
    // Halves round to even (the default rounding mode), as ONNX Round specifies.
    {"round", [](double x) { return std::nearbyint(x); }, nullptr, false, kFloatTypes},
    {"sign", [](double x) { return x > 0   ? 1.0
                                   : x < 0 ? -1.0
                                           : x; },
     [](int64_t x) -> int64_t { return (x > 0) - (x < 0); }, false, kNumericTypes},
};

void runUnary(const Unary &op, std::vector<Operand> &ins, std::vector<Operand> &outs) {
  kernel::validateElementwise(op.name, ins, outs, false, op.types, 0, op.boolResult);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const bool viaFloat = isFloat(in.dtype) || !op.i;
  try {
    forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
      int64_t ei = at(in, idx), eo = at(out, idx);
      if (viaFloat)
        storeD(out, eo, op.f(loadD(in, ei)));
      else
        storeI(out, eo, op.i(loadI(in, ei)));
    });
  } catch (const RuntimeError &e) {
    fail(op.name, e.what());
  }
}

void kWhere(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  kernel::validateWhere(ins, outs);
  Operand &out = outs[0];
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    bool c = loadI(ins[0], at(ins[0], idx)) != 0;
    const Operand &src = c ? ins[1] : ins[2];
    copyElement(out, at(out, idx), src, at(src, idx));
  });
}

void kCast(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  checkArity("cast", ins, outs, 1);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  checkBroadcast("cast", in, out);
  const bool fromFloat = isFloat(in.dtype), toFloat = isFloat(out.dtype);
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    int64_t ei = at(in, idx), eo = at(out, idx);
    if (in.dtype == out.dtype) {
      copyElement(out, eo, in, ei);
    } else if (fromFloat) {
      double v = loadF(in, ei);
      if (toFloat)
        storeF(out, eo, v);
      else if (out.dtype == DType::Bool)
        storeI(out, eo, v != 0.0);
      else
        storeI(out, eo, floatToInteger(v, out.dtype));
    } else {
      int64_t v = loadI(in, ei);
      if (out.dtype == DType::F32)
        rawStore<float>(out, eo, static_cast<float>(v));
      else if (toFloat)
        storeF(out, eo, static_cast<double>(v));
      else
        storeI(out, eo, v);
    }
  });
}

// LeakyRelu: out = x < 0 ? alpha * x : x with alpha = fimm[0], in double, rounded once.
void kLeakyRelu(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const double alpha = kernel::validateLeakyRelu(ins, outs, args);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    const double x = loadF(in, at(in, idx));
    storeF(out, at(out, idx), x < 0 ? alpha * x : x);
  });
}

} // namespace

double (*floatBinaryFn(const std::string &name))(double, double) {
  for (const Binary &b : kBinary)
    if (name == b.name && !b.boolResult) return b.f;
  return nullptr;
}

double (*floatUnaryFn(const std::string &name))(double) {
  for (const Unary &u : kUnary)
    if (name == u.name && !u.boolResult) return u.f;
  return nullptr;
}

void addElementwiseKernels(KernelTable &table) {
  for (const Binary &b : kBinary)
    table[b.name] = [&b](std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
      runBinary(b, ins, outs);
    };
  for (const Unary &u : kUnary)
    table[u.name] = [&u](std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
      runUnary(u, ins, outs);
    };
  table["where"] = kWhere;
  table["cast"] = kCast;
  table["leaky_relu"] = kLeakyRelu;
}

} // namespace dq::rt::sim
