// The VM's instruction dispatch: each opcode goes to the function of its family; kernel launches
// are here.
#include "Vm.h"

#include <algorithm>

namespace dq::rt::vm {

void Vm::exec(size_t index, const Instr &in) {
  switch (in.op) {
  case Opcode::ConstIndex:
    setS(in.s[0], in.imm[0]);
    return;
  case Opcode::ScalarBinary:
    return scalarBinary(in);
  case Opcode::Select:
    setS(in.s[0], sreg(in.s[1]) != 0 ? sreg(in.s[2]) : sreg(in.s[3]));
    return;
  case Opcode::Dim:
    return dim(in);
  case Opcode::Assert:
    if (sreg(in.s[0]) == 0) throw RuntimeError("assertion failed: " + in.name);
    return;
  case Opcode::Input:
    return input(in);
  case Opcode::Alloc:
  case Opcode::GetHostScratch:
    return alloc(in);
  case Opcode::AllocOutput:
    return allocOutput(in);
  case Opcode::GetPool:
    return getPool(in);
  case Opcode::PoolSubview:
    return poolSubview(index, in);
  case Opcode::Dealloc:
    return dealloc(in);
  case Opcode::Constant:
    return constant(in);
  case Opcode::View:
    return view(in);
  case Opcode::CheckShape:
    return checkShape(in);
  case Opcode::ReadbackScalar:
  case Opcode::LoadScalar:
    return loadScalar(in);
  case Opcode::StoreScalar:
    return storeScalar(in);
  case Opcode::HostCopy:
    return hostCopy(in);
  case Opcode::Copy:
    return copy(in);
  case Opcode::Kernel:
    return launch(in);
  case Opcode::Return:
    return finish(in);
  }
  throw RuntimeError("unknown opcode " + std::to_string(static_cast<int>(in.op)));
}

void Vm::launch(const Instr &in) {
  // The operand and argument vectors are members reused from launch to launch: copying into
  // them keeps their capacity, so a launch costs no heap allocation here.
  const size_t n = std::min(static_cast<size_t>(in.imm[0]), in.b.size());
  kernelIns_.resize(n);
  kernelOuts_.resize(in.b.size() - n);
  for (size_t i = 0; i < in.b.size(); ++i)
    (i < n ? kernelIns_[i] : kernelOuts_[i - n]) = breg(in.b[i]).view;
  kernelArgs_.attrs.assign(in.imm.begin() + 1, in.imm.end());
  kernelArgs_.fattrs.assign(in.fimm.begin(), in.fimm.end());
  kernelArgs_.scalars.clear();
  for (int32_t r : in.s)
    kernelArgs_.scalars.push_back(sreg(r));
  dev_.launch(in.name, kernelIns_, kernelOuts_, kernelArgs_);
}

} // namespace dq::rt::vm
