#pragma once
// Buckets: one per bug. A bucket key is built from what stays the same while the minimizer's
// result varies (docs/fuzz/buckets.md): the symptom, the attributed pass, the op kind of the node
// where the failure originates in the minimized graph (the trapping instruction's source node, or
// the producer of the first output that differs), and the error message with numbers, shapes,
// names and paths normalized away.
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

/// The graph as text for a report: one line per graph input ("input x: float[N0,3]"), per node
/// ("Slice_3 = Slice(x, starts, ends) -> y", attributes in braces) and per output. Initializers
/// are named, not printed.
std::string graphText(const onnx::ModelProto& model);

} // namespace dynqual::fuzz
