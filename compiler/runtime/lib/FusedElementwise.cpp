// The "fused_elementwise" encoding shared by the loader, the devices and the compiler: op code
// names and arities, and the structural check of a step program (Program.h).
#include "dq/runtime/Program.h"

#include <string>
#include <vector>

namespace dq::rt {
namespace {

struct FusedOpInfo {
  FusedOp code;
  const char *name;
  int arity;
};

// Indexed by code: the numbering is the enum's and never changes.
const FusedOpInfo kFusedOps[] = {
    {FusedOp::Add, "add", 2},         {FusedOp::Sub, "sub", 2},
    {FusedOp::Mul, "mul", 2},         {FusedOp::Div, "div", 2},
    {FusedOp::Pow, "pow", 2},         {FusedOp::Max, "max", 2},
    {FusedOp::Min, "min", 2},         {FusedOp::Neg, "neg", 1},
    {FusedOp::Sqrt, "sqrt", 1},       {FusedOp::Reciprocal, "reciprocal", 1},
    {FusedOp::Sigmoid, "sigmoid", 1}, {FusedOp::Tanh, "tanh", 1},
    {FusedOp::Exp, "exp", 1},         {FusedOp::Log, "log", 1},
    {FusedOp::Erf, "erf", 1},         {FusedOp::Relu, "relu", 1},
    {FusedOp::Abs, "abs", 1},         {FusedOp::Cos, "cos", 1},
    {FusedOp::Sin, "sin", 1},         {FusedOp::Floor, "floor", 1},
    {FusedOp::Ceil, "ceil", 1},       {FusedOp::Round, "round", 1},
    {FusedOp::Sign, "sign", 1},
};
constexpr int64_t kFusedOpCount = sizeof(kFusedOps) / sizeof(kFusedOps[0]);

const FusedOpInfo *info(int64_t code) {
  if (code < 0 || code >= kFusedOpCount) return nullptr;
  return &kFusedOps[code];
}

} // namespace

const char *fusedOpName(int64_t code) {
  const FusedOpInfo *i = info(code);
  return i ? i->name : nullptr;
}

int fusedOpArity(int64_t code) {
  const FusedOpInfo *i = info(code);
  return i ? i->arity : 0;
}

int64_t fusedOpCode(const std::string &name) {
  for (const FusedOpInfo &i : kFusedOps)
    if (name == i.name) return static_cast<int64_t>(i.code);
  return -1;
}

std::string checkFusedProgram(int64_t inputs, const std::vector<int64_t> &steps) {
  if (inputs < 1 || inputs > kFusedMaxInputs)
    return "takes 1 to " + std::to_string(kFusedMaxInputs) + " inputs, has " + std::to_string(inputs);
  if (steps.empty() || steps.size() % kFusedStepImms != 0)
    return "expects 3 immediates (op code, operand a, operand b) per step after the input count, has " +
           std::to_string(steps.size());
  const size_t n = steps.size() / kFusedStepImms;
  if (n > static_cast<size_t>(kFusedMaxSteps))
    return "has " + std::to_string(n) + " steps, at most " + std::to_string(kFusedMaxSteps) + " allowed";
  for (size_t j = 0; j < n; ++j) {
    const int64_t code = steps[kFusedStepImms * j], a = steps[kFusedStepImms * j + 1],
                  b = steps[kFusedStepImms * j + 2];
    const std::string step = "step " + std::to_string(j) + ": ";
    const int arity = fusedOpArity(code);
    if (arity == 0) return step + "unknown op code " + std::to_string(code);
    const int64_t limit = inputs + static_cast<int64_t>(j);
    auto operand = [&](const char *which, int64_t k) -> std::string {
      if (k >= 0 && k < limit) return "";
      return step + "operand " + which + " = " + std::to_string(k) + " is not a leaf or an earlier step (" +
             std::to_string(inputs) + " leaves, step " + std::to_string(j) + ")";
    };
    if (std::string e = operand("a", a); !e.empty()) return e;
    if (arity == 2) {
      if (std::string e = operand("b", b); !e.empty()) return e;
    } else if (b != -1) {
      return step + "unary '" + std::string(fusedOpName(code)) + "' takes operand b = -1, has " + std::to_string(b);
    }
  }
  return "";
}

} // namespace dq::rt
