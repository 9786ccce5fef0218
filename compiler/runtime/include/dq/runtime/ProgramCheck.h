// Structural validation of a Program against the contract in Program.h.
#pragma once

#include "dq/runtime/Program.h"

#include <string>
#include <string_view>
#include <vector>

namespace dq::rt {

/// "Kernel", "ScalarBinary", ...; "opcode<N>" for an unknown value.
std::string opcodeName(Opcode op);
/// True for every Opcode enumerator.
bool isKnownOpcode(uint16_t code);
/// True for the kernel names listed in Program.h.
bool isKernelName(std::string_view name);
/// Kernel names listed in Program.h, in that order.
const std::vector<std::string> &kernelNames();
/// True for the ScalarBinary operation names listed in Program.h.
bool isScalarOpName(std::string_view name);
/// True for the DType enumerators.
bool isKnownDType(uint8_t code);

/// Checks everything that can be checked without running: known opcodes, dtypes, spaces, copy
/// kinds, kernel and scalar-op names; operand counts per opcode; register numbers within
/// numScalarRegs/numBufferRegs; input/output/constant indices in range; constants inside
/// constantData. Throws RuntimeError "<where>: instruction N (Opcode 'name') at <loc>: problem".
void validateProgram(const Program &program, const std::string &where);

/// "instruction 7 (Kernel 'add') at node_3" - how errors name an instruction.
std::string describeInstr(const Program &program, size_t index);

} // namespace dq::rt
