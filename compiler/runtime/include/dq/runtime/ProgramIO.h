// Reading and writing the program artifact: X.dqp plus the constants sidecar X.dqp.bin.
// The byte format is specified in docs/artifact.md.
#pragma once

#include "dq/runtime/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dq::rt {

/// Serialized artifact: the .dqp bytes and the sidecar bytes (Program::constantData).
struct ProgramBytes {
  std::vector<uint8_t> program;
  std::vector<uint8_t> sidecar;
};

/// Serializes deterministically: equal Programs give equal bytes. Validates first (see
/// validateProgram) and throws RuntimeError naming `where` if the Program is malformed.
ProgramBytes serializeProgram(const Program &program, const std::string &where = "<program>");

/// Parses and validates. `where` names the artifact in errors. Throws RuntimeError on a wrong
/// magic, a version other than Program::kFormatVersion, truncation, trailing bytes, a checksum
/// mismatch, a sidecar shorter than its constants or different from the recorded one, and
/// anything validateProgram rejects.
Program deserializeProgram(const std::vector<uint8_t> &program, const std::vector<uint8_t> &sidecar,
                           const std::string &where = "<program>");

/// Writes `path` and `path + ".bin"` (always, possibly empty). Files are written to temporary
/// names and renamed, so a failure leaves no partial artifact. Throws RuntimeError naming the path.
void writeProgram(const Program &program, const std::string &path);

/// Reads `path` and its sidecar `path + ".bin"` (a missing sidecar is accepted only when the
/// program records zero constant bytes). Throws RuntimeError naming the file.
Program readProgram(const std::string &path);

} // namespace dq::rt
