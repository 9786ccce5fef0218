#pragma once
// Classifies graphs whose float outputs can only be copies of input or constant elements.

#include <onnx/onnx_pb.h>

#include <set>
#include <string>

namespace dynqual::compare {

/// The ops that copy elements without computing on them: Reshape, Slice, Expand, Unsqueeze,
/// Squeeze, Flatten, Concat, Transpose, Gather, GatherElements, Identity, Shape, Constant,
/// ConstantOfShape, Where (selects X or Y). Shape/Constant/ConstantOfShape create values, but
/// never from arithmetic on floats.
const std::set<std::string>& dataMovementOps();

/// True when every node of the main graph is a default-domain op in dataMovementOps(); then
/// float outputs must be compared bit for bit. A graph with any other op (Cast and arithmetic
/// included, even on integer shape values) is not data-movement-only.
bool isDataMovementOnly(const onnx::ModelProto& model);

} // namespace dynqual::compare
