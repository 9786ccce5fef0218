#include "dynqual/compare/MovementGraph.h"

namespace dynqual::compare {

const std::set<std::string>& dataMovementOps() {
  static const std::set<std::string> ops = {"Concat", "Constant",       "ConstantOfShape", "Expand",    "Flatten",
                                            "Gather", "GatherElements", "Identity",        "Reshape",   "Shape",
                                            "Slice",  "Squeeze",        "Transpose",       "Unsqueeze", "Where"};
  return ops;
}

bool isDataMovementOnly(const onnx::ModelProto& model) {
  for (const auto& node : model.graph().node()) {
    const bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (!defaultDomain || !dataMovementOps().count(node.op_type()))
      return false;
  }
  return true;
}

} // namespace dynqual::compare
