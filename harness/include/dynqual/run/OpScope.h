#pragma once
// Which ONNX models are in scope for the compiler under test, and why others are skipped.
#include <onnx/onnx_pb.h>

#include <optional>
#include <set>
#include <string>

namespace dynqual::run {

/// The fixed list of reasons a model may be skipped rather than tried. Anything else that goes
/// wrong is a failure, never a skip.
enum class SkipReason {
  OpOutsideSupportedSet,  ///< uses an op the compiler does not claim to support
  StringType,             ///< a string tensor anywhere in the graph signature or initializers
  OptionalOrSequenceType, ///< an optional or sequence typed input or output
  DTypeOutsideList,       ///< an element type outside f32 f16 bf16 f64 i8 u8 i32 i64 bool
  DocumentedDataQuirk,    ///< stored data follows a quirk listed in docs/quirks.md
};

/// Stable snake_case name of a reason ("op_outside_supported_set", ...), used in JSON and in
/// the checked-in node-test counts file.
const char* skipReasonName(SkipReason reason);

/// ONNX op types (default domain) the compiler under test supports.
const std::set<std::string>& supportedOps();

/// Model folders (by folder name) whose stored data follows a documented quirk, with the quirk.
/// Every entry is explained in docs/quirks.md.
const std::set<std::string>& documentedQuirkModels();

/// Classifies a loaded model: nullopt when it is in scope, else the first applicable reason,
/// with `detail` naming the op, value or dtype. Never throws.
std::optional<SkipReason> classifyModel(const onnx::ModelProto& model, const std::string& folderName,
                                        std::string& detail);

} // namespace dynqual::run
