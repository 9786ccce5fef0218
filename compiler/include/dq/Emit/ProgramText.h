//===- ProgramText.h - readable listing of a program ------------*- C++ -*-===//
// Plain C++ (no MLIR): the listing is what lit tests check and what --emit-dqp text writes.
#ifndef DQ_EMIT_PROGRAMTEXT_H
#define DQ_EMIT_PROGRAMTEXT_H

#include "dq/runtime/Program.h"

#include <string>

namespace dq {

/// Deterministic text listing of `program`: header (format, compiler version, pipeline spec),
/// inputs and outputs, one line per instruction ("<index>: <Opcode> [name] s[..] b[..] imm[..]
/// fimm[..] <dtype> <space> @<loc>"), the constants and an FNV-1a 64-bit hash of the sidecar.
/// Equal programs give byte-identical listings.
std::string formatProgram(const rt::Program &program);

} // namespace dq

#endif // DQ_EMIT_PROGRAMTEXT_H
