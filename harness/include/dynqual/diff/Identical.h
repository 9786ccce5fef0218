#pragma once
// The identical-artifact short-circuit of the gate: two arms whose runtime binaries and compiled
// program are byte for byte the same run the same instructions, so no timing difference between
// them can be a change of the code, and the model is not timed (docs/commands/gate.md).
#include "dynqual/diff/AbTypes.h"
#include "dynqual/diff/Correctness.h"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace dynqual::diff {

/// SHA-256 (64 hex digits) of a compiled program `dqp` and its sidecar `dqp`.bin. The compiler
/// version recorded in the program is hashed apart: the program is read, its compilerVersion
/// blanked, serialized again (deterministic, docs/artifact.md) and hashed with the sidecar bytes,
/// so a version bump alone never makes two programs differ. A program this build cannot read
/// (another format version) is hashed as its raw bytes. Throws std::runtime_error when a file
/// cannot be read.
std::string programSha256(const std::filesystem::path& dqp);

/// The runtime binaries whose bytes decide "identical": dynqual-exec, plus dynqual when
/// compile times are measured (then the compiler's speed is part of the comparison).
std::vector<std::string> runtimeBinaries(const Measurement& m);

/// SHA-256 of each of runtimeBinaries(m) in both arms' binDir: name -> (base, head); a file that
/// cannot be read hashes as "" (never identical). Empty unless both arms are dq arms.
std::map<std::string, std::pair<std::string, std::string>> runtimeSha256(const AbOptions& o);

/// Fills check.baseProgramSha256 / headProgramSha256 from the prepared dq programs of `pair`
/// (left "" for an arm without a program or when hashing fails).
void hashPrograms(const PreparedPair& pair, ModelCheck& check);

/// True when `runtime` is not empty, every entry has two equal non-empty hashes, and both program
/// hashes of `check` are non-empty and equal.
bool artifactsIdentical(const ModelCheck& check,
                        const std::map<std::string, std::pair<std::string, std::string>>& runtime);

/// The comparison of an untimed identical model: verdict Identical, 0 rounds, ratio and its
/// intervals 1, p 1, medians NaN (nothing was measured).
MetricComparison identicalComparison(const std::string& model, const std::string& metric);

/// The hashes as run parameters: "sha256.<arm>.<binary>" per runtime binary and
/// "sha256.<arm>.program.<model>" per model (arm: base or head).
std::map<std::string, std::string> hashParams(const AbResult& r);

/// Puts the hashes of hashParams back into `r` (runtimeSha256, and the checks' program hashes by
/// model name). Parameters of other names are ignored.
void hashesFromParams(const std::map<std::string, std::string>& params, AbResult& r);

} // namespace dynqual::diff
