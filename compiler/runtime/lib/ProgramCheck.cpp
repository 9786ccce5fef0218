// Static checks of a Program: everything the loader can reject before any execution.
#include "dq/runtime/ProgramCheck.h"

#include "dq/runtime/Error.h"

#include <algorithm>
#include <cstdint>

namespace dq::rt {

std::string opcodeName(Opcode op) {
  switch (op) {
  case Opcode::ConstIndex:
    return "ConstIndex";
  case Opcode::ScalarBinary:
    return "ScalarBinary";
  case Opcode::Select:
    return "Select";
  case Opcode::Dim:
    return "Dim";
  case Opcode::Assert:
    return "Assert";
  case Opcode::Input:
    return "Input";
  case Opcode::Alloc:
    return "Alloc";
  case Opcode::AllocOutput:
    return "AllocOutput";
  case Opcode::GetHostScratch:
    return "GetHostScratch";
  case Opcode::GetPool:
    return "GetPool";
  case Opcode::PoolSubview:
    return "PoolSubview";
  case Opcode::Dealloc:
    return "Dealloc";
  case Opcode::Constant:
    return "Constant";
  case Opcode::View:
    return "View";
  case Opcode::CheckShape:
    return "CheckShape";
  case Opcode::ReadbackScalar:
    return "ReadbackScalar";
  case Opcode::LoadScalar:
    return "LoadScalar";
  case Opcode::StoreScalar:
    return "StoreScalar";
  case Opcode::HostCopy:
    return "HostCopy";
  case Opcode::Copy:
    return "Copy";
  case Opcode::Kernel:
    return "Kernel";
  case Opcode::Return:
    return "Return";
  }
  return "opcode<" + std::to_string(static_cast<int>(op)) + ">";
}

bool isKnownOpcode(uint16_t code) { return opcodeName(static_cast<Opcode>(code)).rfind("opcode<", 0) != 0; }

const std::vector<std::string> &kernelNames() {
  static const std::vector<std::string> names = {
      "add", "sub", "mul", "div", "equal", "where", "cast", "expand", "slice", "transpose", "concat", "gather", "range",
      "fill", "range_length",
      // transformer op set
      "pow", "max", "min", "and", "or", "less", "less_equal", "greater", "greater_equal", "neg", "sqrt", "reciprocal",
      "sigmoid", "tanh", "erf", "exp", "cos", "sin", "not", "isnan", "matmul", "softmax", "layer_norm", "reduce_sum",
      "reduce_mean", "reduce_max", "trilu", "cumsum", "gather_elements", "gather_nd",
      // elementwise and reduction tail
      "relu", "abs", "log", "floor", "ceil", "round", "sign", "xor", "mod", "fmod", "leaky_relu", "log_softmax",
      "reduce_min", "reduce_prod", "reduce_l2", "reduce_sum_square", "reduce_log_sum_exp", "arg_max", "arg_min",
      "one_hot",
      // data-dependent extents and shape-input ops
      "count_nonzero", "nonzero", "compress", "top_k", "tile", "pad", "scatter_nd", "scatter_elements",
      // elementwise fusion
      "fused_elementwise",
      // onnxruntime contrib ops
      "matmul_nbits", "simplified_layer_norm", "skip_simplified_layer_norm", "rotary_embedding",
      "group_query_attention"};
  return names;
}

bool isKernelName(std::string_view name) {
  const auto &names = kernelNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool isScalarOpName(std::string_view name) {
  static const char *const ops[] = {"add", "sub", "mul", "divsi", "floordiv", "ceildiv", "remsi", "min", "max",
                                    "eq",  "ne",  "lt",  "le",    "gt",       "ge",      "and",   "or"};
  for (const char *op : ops)
    if (name == op) return true;
  return false;
}

bool isKnownDType(uint8_t code) {
  switch (static_cast<DType>(code)) {
  case DType::F32:
  case DType::U8:
  case DType::I8:
  case DType::I32:
  case DType::I64:
  case DType::Bool:
  case DType::F16:
  case DType::F64:
  case DType::BF16:
    return true;
  }
  return false;
}

std::string describeInstr(const Program &program, size_t index) {
  std::string s = "instruction " + std::to_string(index);
  if (index >= program.code.size()) return s;
  const Instr &in = program.code[index];
  s += " (" + opcodeName(in.op);
  if (!in.name.empty()) s += " '" + in.name + "'";
  s += ")";
  if (!in.loc.empty()) s += " at " + in.loc;
  return s;
}

namespace {

struct Checker {
  const Program &p;
  const std::string &where;
  size_t index = 0;

  [[noreturn]] void fail(const std::string &problem) const {
    throw RuntimeError(where + ": " + describeInstr(p, index) + ": " + problem);
  }
  void count(const char *what, size_t have, size_t want) const {
    if (have != want) fail("expects " + std::to_string(want) + " " + what + " operands, has " + std::to_string(have));
  }
  void atLeast(const char *what, size_t have, size_t want) const {
    if (have < want)
      fail("expects at least " + std::to_string(want) + " " + what + " operands, has " + std::to_string(have));
  }
  void check(const Instr &in) {
    if (!isKnownOpcode(static_cast<uint16_t>(in.op))) fail("unknown opcode");
    if (!isKnownDType(static_cast<uint8_t>(in.dtype)))
      fail("unknown dtype code " + std::to_string(static_cast<int>(in.dtype)));
    if (static_cast<uint8_t>(in.space) > 2) fail("unknown memory space " + std::to_string(static_cast<int>(in.space)));
    for (int32_t r : in.s)
      if (r < 0 || r >= p.numScalarRegs)
        fail("scalar register s" + std::to_string(r) + " out of range (program has " + std::to_string(p.numScalarRegs) +
             ")");
    for (int32_t r : in.b)
      if (r < 0 || r >= p.numBufferRegs)
        fail("buffer register b" + std::to_string(r) + " out of range (program has " + std::to_string(p.numBufferRegs) +
             ")");
    const size_t S = in.s.size(), B = in.b.size(), I = in.imm.size();
    switch (in.op) {
    case Opcode::ConstIndex:
      count("scalar", S, 1);
      count("immediate", I, 1);
      break;
    case Opcode::ScalarBinary:
      count("scalar", S, 3);
      if (!isScalarOpName(in.name)) fail("unknown scalar operation '" + in.name + "'");
      break;
    case Opcode::Select:
      count("scalar", S, 4);
      break;
    case Opcode::Dim:
      count("scalar", S, 1);
      count("buffer", B, 1);
      count("immediate", I, 1);
      break;
    case Opcode::Assert:
      count("scalar", S, 1);
      break;
    case Opcode::Input:
      count("buffer", B, 1);
      count("immediate", I, 1);
      if (in.imm[0] < 0 || static_cast<size_t>(in.imm[0]) >= p.inputs.size())
        fail("input index " + std::to_string(in.imm[0]) + " out of range (program has " +
             std::to_string(p.inputs.size()) + " inputs)");
      break;
    case Opcode::Alloc:
    case Opcode::GetHostScratch:
      count("buffer", B, 1);
      break;
    case Opcode::AllocOutput:
      count("buffer", B, 1);
      atLeast("immediate", I, 1);
      if (in.imm[0] < 0 || static_cast<size_t>(in.imm[0]) >= p.outputs.size())
        fail("output index " + std::to_string(in.imm[0]) + " out of range (program has " +
             std::to_string(p.outputs.size()) + " outputs)");
      if (I > 1 && I - 1 != S)
        fail("lists " + std::to_string(I - 1) + " static dims for " + std::to_string(S) + " dims");
      break;
    case Opcode::GetPool:
      count("buffer", B, 1);
      count("scalar", S, 1);
      break;
    case Opcode::PoolSubview:
      count("buffer", B, 2);
      atLeast("scalar", S, 2);
      break;
    case Opcode::Dealloc:
      count("buffer", B, 1);
      break;
    case Opcode::Constant: {
      count("buffer", B, 1);
      count("immediate", I, 1);
      if (in.imm[0] < 0 || static_cast<size_t>(in.imm[0]) >= p.constants.size())
        fail("constant index " + std::to_string(in.imm[0]) + " out of range (program has " +
             std::to_string(p.constants.size()) + " constants)");
      size_t rank = p.constants[static_cast<size_t>(in.imm[0])].dims.size();
      if (S != 0 && S != rank) fail("constant has rank " + std::to_string(rank));
      break;
    }
    case Opcode::View:
      count("buffer", B, 2);
      count("immediate", I, 1);
      if (in.imm[0] < 0) fail("negative rank");
      count("scalar", S, 1 + 2 * static_cast<size_t>(in.imm[0]));
      break;
    case Opcode::CheckShape:
      count("buffer", B, 1);
      break;
    case Opcode::ReadbackScalar:
      count("buffer", B, 1);
      atLeast("scalar", S, 1);
      if (!in.imm.empty() && (in.imm.size() != 1 || in.imm[0] != 1))
        fail("ReadbackScalar takes no immediate or imm[1] (unsynchronized)");
      break;
    case Opcode::LoadScalar:
    case Opcode::StoreScalar:
      count("buffer", B, 1);
      atLeast("scalar", S, 1);
      break;
    case Opcode::HostCopy:
      count("buffer", B, 2);
      break;
    case Opcode::Copy:
      count("buffer", B, 2);
      count("immediate", I, 1);
      if (in.imm[0] < 0 || in.imm[0] > 2) fail("unknown copy kind " + std::to_string(in.imm[0]));
      break;
    case Opcode::Kernel:
      if (!isKernelName(in.name)) fail("unknown kernel name '" + in.name + "'");
      atLeast("immediate", I, 1);
      if (in.imm[0] < 0 || static_cast<size_t>(in.imm[0]) >= B)
        fail("input count " + std::to_string(in.imm[0]) + " leaves no output among " + std::to_string(B) + " buffers");
      if (in.name == "fused_elementwise") {
        if (B != static_cast<size_t>(in.imm[0]) + 1)
          fail("fused_elementwise has one output, has " + std::to_string(B - in.imm[0]));
        std::string problem = checkFusedProgram(in.imm[0], std::vector<int64_t>(in.imm.begin() + 1, in.imm.end()));
        if (!problem.empty()) fail("fused_elementwise " + problem);
      }
      break;
    case Opcode::Return:
      count("buffer", B, p.outputs.size());
      if (index + 1 != p.code.size()) fail("Return must be the last instruction");
      break;
    }
  }
};

void checkSpec(const TensorSpec &t, const std::string &where, const char *kind, size_t i) {
  std::string name = std::string(kind) + " " + std::to_string(i) + " '" + t.name + "'";
  if (!isKnownDType(static_cast<uint8_t>(t.dtype)))
    throw RuntimeError(where + ": " + name + ": unknown dtype code " + std::to_string(static_cast<int>(t.dtype)));
  for (int64_t d : t.dims)
    if (d < -1) throw RuntimeError(where + ": " + name + ": invalid dim " + std::to_string(d));
}

} // namespace

void validateProgram(const Program &p, const std::string &where) {
  if (p.formatVersion != Program::kFormatVersion)
    throw RuntimeError(where + ": format version " + std::to_string(p.formatVersion) + ", this runtime reads version " +
                       std::to_string(Program::kFormatVersion) + "; recompile the model");
  if (p.numScalarRegs < 0 || p.numBufferRegs < 0) throw RuntimeError(where + ": negative register count");
  for (size_t i = 0; i < p.inputs.size(); ++i)
    checkSpec(p.inputs[i], where, "input", i);
  for (size_t i = 0; i < p.outputs.size(); ++i)
    checkSpec(p.outputs[i], where, "output", i);
  for (size_t i = 0; i < p.constants.size(); ++i) {
    const ConstantSpec &c = p.constants[i];
    std::string name = where + ": constant " + std::to_string(i);
    if (!isKnownDType(static_cast<uint8_t>(c.dtype)))
      throw RuntimeError(name + ": unknown dtype code " + std::to_string(static_cast<int>(c.dtype)));
    uint64_t n = 1;
    for (int64_t d : c.dims) {
      if (d < 0) throw RuntimeError(name + ": negative dim");
      if (d != 0 && n > UINT64_MAX / 16 / static_cast<uint64_t>(d))
        throw RuntimeError(name + ": element count overflows");
      n *= static_cast<uint64_t>(d);
    }
    if (n * dtypeSize(c.dtype) != c.size)
      throw RuntimeError(name + ": " + std::to_string(c.size) + " bytes do not match " + dtypeName(c.dtype) + " with " +
                         std::to_string(n) + " elements");
    if (c.offset > p.constantData.size() || c.size > p.constantData.size() - c.offset)
      throw RuntimeError(name + ": bytes [" + std::to_string(c.offset) + ", " + std::to_string(c.offset + c.size) +
                         ") lie beyond the " + std::to_string(p.constantData.size()) + "-byte sidecar");
  }
  if (p.code.empty() || p.code.back().op != Opcode::Return)
    throw RuntimeError(where + ": program does not end with Return");
  Checker checker{p, where};
  for (checker.index = 0; checker.index < p.code.size(); ++checker.index)
    checker.check(p.code[checker.index]);
}

} // namespace dq::rt
