#pragma once
// Documented quirks of the ONNX 1.12 node-test data (docs/quirks.md), each verified on the data
// before a model is excused: a mismatch that does not follow its quirk stays a failure.
#include "dynqual/onnx/TestDataSets.h"
#include "dynqual/tensor/Tensor.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace dynqual::scope {

/// Reads one stored tensor. ONNX 1.12 writes bf16 test tensors with data_type UINT16: such a
/// tensor is read as bf16 when `declaredType` (the model's ONNX element type for that value) is
/// BFLOAT16; anything else is read as stored. Throws std::runtime_error naming the file.
Tensor readStoredTensor(const std::filesystem::path& file, int32_t declaredType);

/// The inputs and expected outputs of one data set, read against the model's declarations.
struct StoredDataSet {
  std::vector<Tensor> inputs;
  std::vector<Tensor> expected;
};

/// Reads every input_N.pb and output_N.pb of `set` with readStoredTensor. Throws
/// std::runtime_error naming the file.
StoredDataSet readStoredDataSet(const onnx::ModelProto& model, const onnxio::TestDataSet& set);

/// True when a stored input contradicts a static declared dim or rank of the model (the bf16
/// CastLike tests declare [3, 4] and store [1]). Such data cannot be run as declared.
bool storedShapeContradictsDeclaration(const onnx::ModelProto& model, const std::vector<Tensor>& inputs);

/// The documented quirk that explains a disagreement between `expected` (stored) and a correct
/// evaluation, verified on this data; nullopt when none applies. Checks, by folder name:
///  - bf16 truncation: every stored bf16 output is the truncation of its f32 input;
///  - window pi: the graph evaluated by the reference with its Tau constant set to 2 x 3.1415
///    reproduces the stored outputs (relative L2 <= 1e-5);
///  - declared-shape contradiction (storedShapeContradictsDeclaration).
/// Never throws (a failing check means the quirk does not apply).
std::optional<std::string> verifiedQuirk(const std::string& folderName, const onnx::ModelProto& model,
                                         const std::vector<Tensor>& inputs, const std::vector<Tensor>& expected);

} // namespace dynqual::scope
