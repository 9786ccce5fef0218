//===- ProgramText.cpp - readable listing of a program --------------------===//
#include "dq/Emit/ProgramText.h"

#include "dq/runtime/ProgramCheck.h"

#include <cstdio>
#include <sstream>

namespace {

template <typename T> void list(std::ostringstream &os, const char *label, const std::vector<T> &values) {
  if (values.empty()) return;
  os << ' ' << label << '[';
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? "," : "") << values[i];
  os << ']';
}

const char *spaceName(dq::rt::MemSpace s) {
  switch (s) {
  case dq::rt::MemSpace::Device:
    return "device";
  case dq::rt::MemSpace::Host:
    return "host";
  case dq::rt::MemSpace::HostMapped:
    return "host_mapped";
  }
  return "space?";
}

void tensorLine(std::ostringstream &os, const char *kind, size_t i, const dq::rt::TensorSpec &t) {
  os << kind << ' ' << i << " \"" << t.name << "\" " << dq::rt::dtypeName(t.dtype);
  list(os, "", t.dims);
  os << '\n';
}

} // namespace

std::string dq::formatProgram(const rt::Program &p) {
  std::ostringstream os;
  os << "program format=" << p.formatVersion << " compiler=" << p.compilerVersion << '\n';
  os << "pipeline " << p.pipelineSpec << '\n';
  os << "source " << p.sourceName << '\n';
  for (size_t i = 0; i < p.inputs.size(); ++i)
    tensorLine(os, "input", i, p.inputs[i]);
  for (size_t i = 0; i < p.outputs.size(); ++i)
    tensorLine(os, "output", i, p.outputs[i]);
  os << "registers s=" << p.numScalarRegs << " b=" << p.numBufferRegs << '\n';
  for (size_t i = 0; i < p.code.size(); ++i) {
    const rt::Instr &in = p.code[i];
    os << i << ": " << rt::opcodeName(in.op);
    if (!in.name.empty()) os << " \"" << in.name << '"';
    list(os, "s", in.s);
    list(os, "b", in.b);
    list(os, "imm", in.imm);
    list(os, "fimm", in.fimm);
    switch (in.op) {
    case rt::Opcode::Alloc:
    case rt::Opcode::AllocOutput:
    case rt::Opcode::GetHostScratch:
    case rt::Opcode::PoolSubview:
    case rt::Opcode::Kernel:
      os << ' ' << rt::dtypeName(in.dtype) << ' ' << spaceName(in.space);
      break;
    default:
      break;
    }
    if (!in.loc.empty()) os << " @" << in.loc;
    os << '\n';
  }
  for (size_t i = 0; i < p.constants.size(); ++i) {
    const rt::ConstantSpec &c = p.constants[i];
    os << "constant " << i << ' ' << rt::dtypeName(c.dtype);
    list(os, "", c.dims);
    os << " offset=" << c.offset << " size=" << c.size << '\n';
  }
  uint64_t hash = 1469598103934665603ull; // FNV-1a 64
  for (uint8_t byte : p.constantData)
    hash = (hash ^ byte) * 1099511628211ull;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  os << "sidecar bytes=" << p.constantData.size() << " fnv1a=" << buf << '\n';
  return os.str();
}
