// "fused_elementwise" on the sim device: a chain of float elementwise steps per output element
// (encoding in Program.h). Each step calls the very function of the elementwise kernel of its
// name and rounds to the element type, as storing that kernel's output would, so the result is
// bit for bit the one of the unfused kernels in both precision modes (elementwise kernels are
// one step and identical in both, docs/devices.md).
#include "SimKernelSupport.h"

namespace dq::rt::sim {
namespace {

const char *const kName = "fused_elementwise";

/// `v` rounded to `t` and read back as a double: what a store of `v` then a load give.
double roundTo(DType t, double v) {
  switch (t) {
  case DType::F32:
    return static_cast<float>(v);
  case DType::F16:
    return halfToFloat(doubleToHalf(v));
  case DType::BF16:
    return bf16ToFloat(doubleToBF16(v));
  default:
    return v;
  }
}

struct Step {
  double (*binary)(double, double) = nullptr;
  double (*unary)(double) = nullptr;
  int64_t a = 0, b = 0;
};

void kFusedElementwise(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  kernel::validateFusedElementwise(kName, ins, outs, args);
  Operand &out = outs[0];
  std::vector<Step> steps(args.attrs.size() / kFusedStepImms);
  for (size_t j = 0; j < steps.size(); ++j) {
    const int64_t code = args.attrs[kFusedStepImms * j];
    const std::string op = fusedOpName(code);
    Step &s = steps[j];
    if (fusedOpArity(code) == 2)
      s.binary = floatBinaryFn(op);
    else
      s.unary = floatUnaryFn(op);
    if (!s.binary && !s.unary) fail(kName, "unsupported: step " + std::to_string(j) + " op '" + op + "' on sim");
    s.a = args.attrs[kFusedStepImms * j + 1];
    s.b = args.attrs[kFusedStepImms * j + 2];
  }
  const size_t n = ins.size();
  std::vector<double> vals(n + steps.size());
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &idx) {
    for (size_t i = 0; i < n; ++i)
      vals[i] = loadF(ins[i], at(ins[i], idx));
    for (size_t j = 0; j < steps.size(); ++j) {
      const Step &s = steps[j];
      const double v = s.binary ? s.binary(vals[s.a], vals[s.b]) : s.unary(vals[s.a]);
      vals[n + j] = roundTo(out.dtype, v);
    }
    storeF(out, at(out, idx), vals.back());
  });
}

} // namespace

void addFusedKernels(KernelTable &table) { table[kName] = kFusedElementwise; }

} // namespace dq::rt::sim
