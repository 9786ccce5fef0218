#pragma once
// Test-case reduction of a failing model, keeping its symptom (docs/fuzz/minimize.md).
#include "dynqual/onnx/InputGenerator.h"

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <string>

namespace dynqual::fuzz {

/// True when a candidate model still fails with the same symptom. It must return false for an
/// invalid candidate (the oracle's validity check does that).
using StillFails = std::function<bool(const onnx::ModelProto&)>;

/// Counts of one reduction.
struct MinimizeStats {
  int tries = 0;    ///< predicate calls
  int accepted = 0; ///< candidates kept
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

/// The type of every value of `model` as the minimizer sees it: ONNX shape inference with data
/// propagation, declared inputs, outputs and initializers, and a rank (every dim unknown) for the
/// values inference leaves without a shape although their operands' ranks fix it. A value
/// missing from the map has no known type. Empty when shape inference throws.
std::map<std::string, onnx::TypeProto> inferredTypes(const onnx::ModelProto& model);

/// True when a candidate model, run on the given binding of its dim symbols, still fails with
/// the same symptom; false for an invalid candidate.
using StillFailsOn = std::function<bool(const onnx::ModelProto&, const onnxio::DimBinding&)>;

/// Counts of one dim and binding shrink.
struct ShrinkStats {
  int tries = 0;    ///< predicate calls
  int accepted = 0; ///< candidates kept
  /// Elements of every graph input under the binding (a dim the binding leaves out counts 1),
  /// before and after.
  int64_t elementsBefore = 0, elementsAfter = 0;
};

/// The element count of all graph inputs of `model` with `binding` applied (see ShrinkStats).
int64_t inputElements(const onnx::ModelProto& model, const onnxio::DimBinding& binding);

/// The second stage of minimization, after the nodes: to a fixpoint, each value of `binding`
/// (by label, then by position) and then each static dim > 1 of a graph input is replaced by
/// the first of 1, v/2, v-1 (smaller than v, distinct) on which `stillFailsOn` still holds;
/// never below 1, since the generator's dim symbols are >= 1 and a zero-size dim is a
/// different case. A static dim that other parts of the graph depend on (a constant reshape
/// target) gives an invalid candidate, which the predicate rejects. At most `maxTries`
/// predicate calls. Returns the smallest failing model and sets `binding` to its binding.
onnx::ModelProto shrinkDims(const onnx::ModelProto& model, onnxio::DimBinding& binding,
                            const StillFailsOn& stillFailsOn, int maxTries, ShrinkStats* stats = nullptr);

} // namespace dynqual::fuzz
