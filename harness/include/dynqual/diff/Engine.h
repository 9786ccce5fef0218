#pragma once
// The differential engine: correctness of both arms first, then interleaved ABBA timing rounds
// with looks on a fixed schedule, then the statistical verdicts (docs/commands/ab.md).
#include "dynqual/diff/AbTypes.h"

#include <functional>

namespace dynqual::diff {

/// Runs the A/B comparison described by `options` through `executor`. Never throws for a model's
/// compile or run failure (it becomes a failed ModelCheck); an unusable arm is recorded in
/// AbResult::infraErrors and ends the run early. `onProgress` (may be empty) receives one short
/// line per step: "round 3/12 head tiny_bert 41 s, budget left 559 s".
AbResult runAb(const AbOptions& options, exec::Executor& executor,
               const std::function<void(const std::string&)>& onProgress = {});

/// The deterministic signals that differ between the arms: every device counter of the first
/// checked case, and the artifact size (artifact_bytes). Exact, so any difference is listed.
std::vector<CounterChange> counterChanges(const std::vector<ModelCheck>& checks);

} // namespace dynqual::diff
