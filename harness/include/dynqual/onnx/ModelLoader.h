#pragma once
// Loading model.onnx with its external data (model.onnx.data etc.) read into memory.

#include <onnx/onnx_pb.h>

#include <filesystem>

namespace dynqual::onnxio {

/// Parses `modelFile` as an onnx::ModelProto and replaces every external-data tensor (graph
/// initializers and Constant node attributes, subgraphs included) by its bytes in raw_data.
///
/// External data rules (each violation throws std::runtime_error naming the model file and the
/// tensor): `location` must be relative, must not escape the model's folder once canonicalized
/// (so `..` and symlinks pointing outside are refused), must name a regular file, and
/// offset + length must lie within that file (length defaults to the rest of the file).
/// Throws std::runtime_error when the file cannot be opened or parsed.
///
/// Unnamed main-graph nodes are named `<OpType>_<index>` (see nameUnnamedNodes), so every error
/// from the reference, the scope check and the compiler names the same node.
onnx::ModelProto loadModel(const std::filesystem::path& modelFile);

/// Names each unnamed main-graph node `<OpType>_<index>` (index in graph order), the label the
/// importer uses. Node names carry no semantics in ONNX. Never throws.
void nameUnnamedNodes(onnx::ModelProto& model);

/// Resolves external data of an already parsed model whose files live in `modelDir`; the rules
/// and errors are the ones of loadModel, with `modelName` naming the model in messages.
void resolveExternalData(onnx::ModelProto& model, const std::filesystem::path& modelDir, const std::string& modelName);

/// Opset version of the default ONNX domain ("" or "ai.onnx"). Throws std::runtime_error when
/// the model imports no default-domain opset.
int64_t defaultOpsetVersion(const onnx::ModelProto& model);

} // namespace dynqual::onnxio
