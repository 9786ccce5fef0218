#pragma once
// Expected outputs of hand-written data sets, computed by the CPU reference.

#include <filesystem>

namespace dynqual::modelgen {

/// For each test_data_set_K of `modelDir` (model.onnx plus input_N.pb files), evaluates the model
/// on the CPU reference and writes output_N.pb, named after the graph's outputs, replacing any
/// present. Returns the number of data sets written. Throws std::runtime_error naming the data set
/// when the model or an input cannot be read or the reference rejects the inputs.
int writeReferenceOutputs(const std::filesystem::path& modelDir);

} // namespace dynqual::modelgen
