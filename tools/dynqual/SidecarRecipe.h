#pragma once
// Sidecar recipes: how to rebuild a compiled program's constants sidecar (X.dqp.bin) on another
// machine from the model's regenerated external weights, so the large sidecar never travels
// (docs/devices.md, "Large weights").
#include <filesystem>
#include <string>

namespace dynqual::cli {

/// What writeSidecarRecipe wrote.
struct SidecarRecipeSummary {
  uint64_t sidecarBytes = 0; ///< size of X.dqp.bin
  uint64_t fromWeights = 0;  ///< bytes taken from model.onnx.data
  uint64_t inlineBytes = 0;  ///< bytes stored in X.dqp.bin.inline
  size_t constants = 0;
};

/// Reads `program` (X.dqp with X.dqp.bin) and MODEL_DIR/model.onnx.data (with its
/// model.onnx.data.json manifest from `make-model decoder --external-data`). Every constant whose
/// bytes equal a whole tensor of the weights file becomes a segment {"offset", "length",
/// "data_offset"} of X.dqp.bin.recipe.json; the other constants are copied into
/// X.dqp.bin.inline (segments {"offset", "length", "inline_offset"}); bytes between constants
/// are zero. The recipe also records the sidecar size, the weights file name, size and sha256,
/// and the sidecar's FNV-1a-64, which the runtime's loader checks when it reads the rebuilt
/// sidecar. Throws std::runtime_error naming the file; "unsupported: ..." when more than
/// `maxInlineBytes` would have to be inlined (constants the compiler derived from the weights).
SidecarRecipeSummary writeSidecarRecipe(const std::filesystem::path& program, const std::filesystem::path& modelDir,
                                        uint64_t maxInlineBytes = 16ull << 20);

} // namespace dynqual::cli
