#pragma once
// `dynqual make-model genai-decoder`: an int4 decoder laid out the way onnxruntime GenAI's model
// builder writes one (names, opsets {"": 21, com.microsoft: 1}, the attention-mask subgraph, packed
// QKV MatMulNBits, GroupQueryAttention with rotary caches, SkipSimplifiedLayerNormalization), with
// random weights quantized blockwise to 4 bits and data sets from the CPU reference.
#include "dynqual/tensor/Tensor.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace dynqual::modelgen {

/// Size and flavour of the decoder. head size = hidden / heads.
struct GenAiDecoderSpec {
  int64_t layers = 2;
  int64_t hidden = 64;
  int64_t heads = 4;
  int64_t kvHeads = 2;
  int64_t mlp = 128;
  int64_t vocab = 96;
  int64_t maxPositions = 64; ///< rows of cos_cache / sin_cache
  int64_t blockSize = 32;    ///< MatMulNBits block_size
  bool asymmetric = false;   ///< per-block zero points (packed uint8); else symmetric, default zero 8
  bool float16 = false;      ///< fp16 activations, KV cache and logits (the builder's GPU flavour)
  uint64_t seed = 1;
};

/// The preset `name`: "tiny" (2 layers, hidden 64, 4 heads, 2 kv heads, mlp 128, vocab 96).
/// Throws std::invalid_argument naming the presets for another name.
GenAiDecoderSpec genAiDecoderPreset(const std::string& name);

/// Throws std::invalid_argument naming the field when a size is < 1, hidden is not a multiple of
/// heads, heads not a multiple of kvHeads, or hidden, mlp not multiples of 2 (int4 packing).
void validate(const GenAiDecoderSpec& spec);

/// The model: inputs input_ids [batch_size, sequence_length] int64, attention_mask [batch_size,
/// total_sequence_length] int64, past_key_values.{i}.key/value [batch_size, kv_heads,
/// past_sequence_length, head]; outputs logits [batch_size, sequence_length, vocab] and
/// present.{i}.key/value [batch_size, kv_heads, total_sequence_length, head].
onnx::ModelProto buildGenAiDecoder(const GenAiDecoderSpec& spec);

/// One data set's inputs: `batch` rows of `seq` new tokens after `past` cached ones; rows after
/// the first hold `validTokens[b]` tokens in all (right padding; a value < past + seq leaves the
/// mask's tail 0). An empty validTokens means every row is full.
std::vector<Tensor> genAiDecoderInputs(const GenAiDecoderSpec& spec, int64_t batch, int64_t seq, int64_t past,
                                       const std::vector<int64_t>& validTokens, uint64_t seed);

/// Writes DIR/model.onnx and three data sets from the reference: a 4-token prompt, a decode step
/// after 4 cached tokens, and a padded batch decode step (rows of 4 and 2 valid tokens). Throws
/// std::runtime_error naming the folder when it already holds a model or on an I/O error.
void writeGenAiDecoder(const GenAiDecoderSpec& spec, const std::filesystem::path& dir);

} // namespace dynqual::modelgen
