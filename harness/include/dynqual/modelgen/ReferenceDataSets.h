#pragma once
// `dynqual make-model data-sets`: test_data_set_K folders for an existing model, inputs seeded
// and outputs from the CPU reference (never from the compiler).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace dynqual::modelgen {

/// Values of a model's dynamic dims by dim_param label, e.g. {"a": 2, "b": 3}.
using LabelBinding = std::map<std::string, int64_t>;

/// Parses "a=2,b=3" into a LabelBinding. An empty string is the empty binding. Throws
/// std::invalid_argument naming the entry when one is not LABEL=N with N >= 0 or a label repeats.
LabelBinding parseLabelBinding(const std::string& text);

/// Writes DIR/test_data_set_K (K = 0, 1, ...) for each binding in `bindings`: inputs from
/// onnxio::generateInputs at the bound shapes with seed `seed + K` (floats uniform in [-1, 1),
/// integers in [0, 9]), outputs from reference::evaluate on DIR/model.onnx. Returns the number of
/// sets written. Throws std::runtime_error naming the folder when DIR already holds a
/// test_data_set_* folder (sets are never overwritten), naming the input and axis when a dynamic
/// dim is left unbound, naming the set when the reference rejects it, or naming the file on an
/// I/O error.
int writeReferenceDataSets(const std::filesystem::path& dir, const std::vector<LabelBinding>& bindings, uint64_t seed);

} // namespace dynqual::modelgen
