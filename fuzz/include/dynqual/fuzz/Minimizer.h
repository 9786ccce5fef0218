#pragma once
// Test-case reduction of a failing model, keeping its symptom (docs/fuzz/minimize.md).
#include <onnx/onnx_pb.h>

#include <functional>

namespace dynqual::fuzz {

/// True when a candidate model still fails with the same symptom. It must return false for an
/// invalid candidate (the oracle's validity check does that).
using StillFails = std::function<bool(const onnx::ModelProto&)>;

/// Counts of one reduction.
struct MinimizeStats {
  int tries = 0;     ///< predicate calls
  int accepted = 0;  ///< candidates kept
  int nodesBefore = 0, nodesAfter = 0;
};

/// Reduces `model` while `stillFails` holds, trying at most `maxTries` candidates:
///  1. one graph output at a time (the others dropped);
///  2. to a fixpoint, for each node from the last to the first: cut the graph after it (its
///     first output becomes the only graph output, typed by ONNX shape inference), bypass it
///     (its first output replaced by its first input everywhere), or promote its first input to
///     a graph input of the inferred type (unknown dims become fresh dim_params); dead nodes are
///     removed after each candidate. This is the last, one-node granularity of delta debugging (ddmin's
///     complement step with n = #nodes), which reaches a 1-minimal graph for these two edits.
/// Returns the smallest failing model found (the input when nothing smaller fails).
onnx::ModelProto minimize(const onnx::ModelProto& model, const StillFails& stillFails, int maxTries,
                          MinimizeStats* stats = nullptr);

} // namespace dynqual::fuzz
