#pragma once
// Tracing a minimized finding to its origin: the earliest node of the minimized graph whose output
// already differs from the CPU reference (docs/fuzz/buckets.md#origin-trace). One bug that makes a
// wrong extent early in the graph traps or differs in whichever later op the minimizer kept; the
// node that first computes the wrong value is the same for all of them, and the bucket is keyed on
// it.
#include "dynqual/fuzz/Oracle.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>

namespace dynqual::fuzz {

/// What the trace of one minimized finding saw.
struct OriginTrace {
  enum class Result {
    Difference, ///< the cut after `node` is the first whose output differs (shape or values)
    Trap,       ///< the cut after `node` failed otherwise first (trap, crash, hang)
    Clean,      ///< no cut showed anything
    Error,      ///< the trace could not run (an exception, an invalid cut); `detail` says why
  };
  Result result = Result::Error;
  std::string node;   ///< name of the node (`#k` when unnamed), "" unless Difference or Trap
  std::string op;     ///< its op kind
  std::string kind;   ///< Difference: "wrong-shape" or "mismatch"; Trap: the cut's symptom
  std::string detail; ///< the cut's finding detail, or the error
  /// Trap: originOp of the cut and its detail (the runtime opcode of a trap outside a kernel,
  /// else the op kind of the node the message names); "" otherwise.
  std::string trapOrigin;
  int cuts = 0;    ///< cut graphs compiled and run
  int skipped = 0; ///< of them, cuts that did not compile (skipped: the whole graph compiles)
  double ms = 0;   ///< wall ms of the whole trace

  /// One line for the bucket's detail: "origin: Reshape_2 (Reshape) gives wrong-shape first
  /// (cut 2 of 3): output 'r': ...", "origin not traced: the cut after Split_1 (Split) gives
  /// run-trap before any output differs: ...", "origin not traced: ...error...".
  std::string note() const;
};

/// The graph cut after node `k` of `model` (node order is topological, as ONNX requires): every
/// output of node `k` whose rank is known (ONNX shape inference with data propagation, then the
/// minimizer's rank completion) becomes a graph output of that rank with every dim unknown (no
/// dim_value, no dim_param), so the compiled program has no declared dim to check at its
/// boundary and a wrong extent comes back as a wrong shape rather than a boundary trap. Nodes
/// that no longer reach an output, and inputs no node uses, are removed. False when no output
/// of node `k` has a known rank.
bool cutAfterNode(const onnx::ModelProto& model, int k, onnx::ModelProto& out);

/// Runs the cut after each node of `minimized.model` in order on the finding's variant
/// (`config.variants` is replaced by `variant`; no control, no ORT) and binding
/// (`minimized.bindings[0]` with `minimized.inputs[0]`: the cut's inputs are the same tensors,
/// picked by name, so data-dependent bounds keep their values), compares each with the CPU
/// reference of the cut (`reference::evaluate` within `limits`) and stops at the first cut with
/// a finding: a wrong-shape or mismatch is the origin (Result::Difference); a run that traps,
/// crashes or hangs (Result::Trap) means the program fails before any exposed value differs. A
/// cut that does not compile is skipped (the finding's whole graph compiled, so the failure is
/// the cut's own, e.g. a guessed output rank) and counted in `skipped`. Never throws: an
/// exception (the reference rejecting a cut, an infrastructure error) gives Result::Error with
/// its message. Costs one compile and one run per node up to the origin, each under
/// `config`'s time limits; work files go under `workDir` and are removed.
OriginTrace traceOrigin(const PreparedCase& minimized, const OracleConfig& config, const std::string& variant,
                        const std::filesystem::path& workDir,
                        const reference::EvaluateLimits& limits = defaultReferenceLimits());

/// True for the symptoms a trace can explain: a run that traps, crashes or gives a wrong shape
/// or values on one variant. Compile failures have no values to compare; disagreements between
/// variants or with ORT are not against the reference alone; a hang would cost a run timeout
/// per cut.
bool traceableSymptom(const std::string& symptom);

} // namespace dynqual::fuzz
