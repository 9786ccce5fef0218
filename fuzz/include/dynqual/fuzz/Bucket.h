#pragma once
// Buckets: one per bug. A bucket key is built from what stays the same while the minimizer's
// result varies (docs/fuzz/buckets.md): the symptom, the attributed pass, the op kind of the node
// where the failure originates in the minimized graph (the trapping instruction's source node, or
// the producer of the first output that differs), and the error message with numbers, shapes,
// names and paths normalized away.
#include "dynqual/fuzz/OriginTrace.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace dynqual::fuzz {

/// The parts of a bucket key.
struct BucketKey {
  std::string symptom; ///< e.g. run-trap, wrong-shape
  std::string pass;    ///< the attributed pass, or "unattributed"
  std::string origin;  ///< op kind of the originating node ("Slice"), or "-" when none is named
  std::string message; ///< normalizeMessage of the minimized case's detail

  /// "symptom|pass|origin|message": the key itself, stored in fuzz_buckets.
  std::string text() const;
  /// 16 hex digits of FNV-1a 64 over text(): the bucket's id in commands and reports.
  std::string hash() const;
};

/// The error text without what varies between two cases of one bug: the variant and stage
/// prefix ("v0 case: run: "), the program path and instruction context before the trap
/// ("PATH: instruction 12 (Kernel 'slice') at Slice_3: "), quoted names ('x' -> '_'), bracketed lists ([2, 3] -> [_]),
/// paths, and every token holding a digit (-> #); whitespace collapsed, at most 120 characters. A pure function of its
/// argument.
std::string normalizeMessage(const std::string& detail);

/// Where the failure of `detail` originates. A trap in a runtime instruction that is not a kernel
/// ("instruction 8 (AllocOutput) at Concat_11: ...") gives that instruction's opcode: the bug is
/// in how the program allocates, reads back or views, whichever node the value belongs to.
/// Otherwise the op kind of the node `detail` names in `model`: the node whose name occurs first
/// in the text as a whole word (a kernel's source node, an MLIR diagnostic's location); else, for
/// "output 'NAME': ..." (a comparison), the op kind of the node producing graph output NAME;
/// else "-".
std::string originOp(const onnx::ModelProto& model, const std::string& detail);

/// The bucket of a finding from its parts (see BucketKey).
BucketKey makeBucketKey(const std::string& symptom, const std::string& pass, const onnx::ModelProto& minimized,
                        const std::string& minimizedDetail);

/// The message part of a key traced to its origin: the same for every finding whose first
/// differing node has one op kind and one kind of difference, whatever the later op trapped on.
inline constexpr const char* kTracedMessage = "first node output that differs from the reference";

/// The message part of a key whose first failing cut traps in the node's own instructions.
inline constexpr const char* kTracedTrapMessage = "trap in the first failing node's own instructions";

/// True for the runtime opcodes that lower one node's computation (Kernel, View, CheckShape,
/// Dim, Assert, ScalarBinary, Select, ConstIndex), false for allocation and host-device
/// transfers (AllocOutput, ReadbackScalar, StoreScalar, HostCopy, ...), which serve every node.
bool nodeOwnOpcode(const std::string& opcode);

/// The key of a finding whose minimized graph was traced (traceOrigin), so that one bug is one
/// key whichever later op the minimizer kept:
/// - a node's output is the first to differ (OriginTrace::Result::Difference): `{trace.kind
///   (wrong-shape or mismatch), today.pass, trace.op, kTracedMessage}`: the wrong extent a bug
///   makes in a Reshape is one bucket whether a later View, kernel or shape check trapped on it;
/// - the first cut that fails traps (Result::Trap, symptom run-trap) before any output differs,
///   in one of the node's own instructions (nodeOwnOpcode) or in none named (an output
///   readback): `{run-trap, today.pass, trace.op, kTracedTrapMessage}`, the op kind of the node
///   cut after, whether its view overran, its shape check failed or its kernel trapped;
/// - the same in an allocation or transfer instruction: `{run-trap, today.pass, OPCODE,
///   "traced: " + headline}`, the headline being the normalized message up to its first ':'
///   (an output allocation that does not match is one bucket whichever node's output it is);
/// - otherwise (a cut that crashes, hangs or does not compile, nothing fails, the trace could
///   not run): `today`, the key of makeBucketKey, unchanged.
BucketKey tracedBucketKey(const BucketKey& today, const OriginTrace& trace);

/// The graph as text for a report: one line per graph input ("input x: float[N0,3]"), per node
/// ("Slice_3 = Slice(x, starts, ends) -> y", attributes in braces) and per output. Initializers
/// are named, not printed.
std::string graphText(const onnx::ModelProto& model);

} // namespace dynqual::fuzz
