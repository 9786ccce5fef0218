#pragma once
// The correctness stage of an A/B run: both arms against the CPU reference and against each other.
#include "dynqual/diff/AbTypes.h"

#include <optional>

namespace dynqual::diff {

/// One case's input files (TensorProto, graph input order).
struct CheckCase {
  std::string name;
  std::vector<std::filesystem::path> inputs;
};

/// The model prepared on both arms, and the inputs the timed rounds use (the first case that
/// passed; empty when none did).
struct PreparedPair {
  std::optional<exec::PreparedModel> base, head;
  std::vector<std::filesystem::path> timedInputs;
};

/// Prepares `modelDir` on both arms and checks every case: each arm against the reference
/// (rel-L2 gate, or bit-exact for data-movement graphs) and head against base. Fills `check`
/// (passed, detail naming the arm and case of the first failure, counters of the first case,
/// artifact sizes, compile times). Compile and run failures are recorded, not thrown; throws
/// exec::ExecError with Stage::Infra when an arm is unusable.
PreparedPair checkModel(const std::filesystem::path& modelDir, const AbOptions& options, exec::Executor& executor,
                        ModelCheck& check);

} // namespace dynqual::diff
