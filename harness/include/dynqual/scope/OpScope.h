#pragma once
// Which ONNX models are in scope for the compiler under test, and why others are skipped.
// Shared by `dynqual run` and the reference's own conformance test.
#include <onnx/onnx_pb.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dynqual::scope {

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

/// Ops the compiler under test supports: ONNX op types of the default domain, and "domain.OpType"
/// for the onnxruntime contrib ops (com.microsoft.MatMulNBits).
const std::set<std::string>& supportedOps();

/// Classifies a model by its declared types alone (inputs, outputs, initializers, Cast targets
/// and constant attributes): nullopt when every type is supported. Never throws.
std::optional<SkipReason> classifyTypes(const onnx::ModelProto& model, std::string& detail);

/// Human wording of a reason ("string type", "documented data quirk", ...).
const char* skipReasonText(SkipReason reason);

/// Classifies a model by its declared types and ops: nullopt when it is in scope for `ops`, else
/// the first applicable reason (types are checked before ops), with `detail` naming the op, value
/// or dtype. Data quirks are not decided here (see DataQuirks.h). Never throws.
std::optional<SkipReason> classifyModel(const onnx::ModelProto& model, std::string& detail,
                                        const std::set<std::string>& ops = supportedOps());

/// Every op of the main graph outside `ops`, each named once and sorted: the op type for the
/// default domain, "domain.OpType" for another domain, "Dropout (training)" for a Dropout in
/// training mode. Empty when every op is in scope. What the user would have to add for this
/// model to be tried. Never throws.
std::vector<std::string> missingOps(const onnx::ModelProto& model, const std::set<std::string>& ops = supportedOps());

} // namespace dynqual::scope
