#pragma once
// `dynqual make-model decoder`: a decoder step model (token embedding, RMSNorm, grouped-query
// causal self-attention with explicit past/present KV, SiLU-gated MLP, LM head) written through
// libonnx, with random weights drawn from a seed and data sets whose outputs come from the CPU
// reference.
#include "dynqual/tensor/Tensor.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace dynqual::modelgen {

/// Size of the generated decoder. head_dim = hidden / heads.
struct DecoderSpec {
  int64_t layers = 1;
  int64_t hidden = 16;
  int64_t heads = 2;
  int64_t kvHeads = 1;  ///< heads share K/V in groups of heads / kvHeads
  int64_t vocab = 32;
  uint64_t seed = 1;
};

/// Throws std::invalid_argument naming the option when a size is < 1, hidden is not a multiple
/// of heads, or heads is not a multiple of kvHeads.
void validate(const DecoderSpec& spec);

/// Builds the model (opset 17). Inputs: input_ids int64 [batch, seq], then past_key_L and
/// past_value_L float [batch, kv_heads, past, head_dim] per layer L. Outputs: logits float
/// [batch, seq, vocab], then present_key_L / present_value_L [batch, kv_heads, total, head_dim]
/// with total = past + seq. Query position i attends to key positions j <= past + i. Weights are
/// uniform in [-1, 1) / sqrt(fan_in) from a SplitMix64 stream of `seed`, so the bytes are the same
/// on every platform. Throws like validate().
onnx::ModelProto buildDecoder(const DecoderSpec& spec);

/// Inputs of a data set of shape (batch, seq, past): token ids uniform in [0, vocab), past K/V
/// uniform in [-1, 1), from `seed`.
std::vector<Tensor> decoderInputs(const DecoderSpec& spec, int64_t batch, int64_t seq, int64_t past, uint64_t seed);

/// The (batch, seq, past) shapes of test_data_set_0..2: a prompt without cache, a batched
/// one-token step on a cache, and a short chunk on a longer cache.
std::vector<std::vector<int64_t>> decoderDataSetShapes();

/// Writes DIR/model.onnx (deterministic serialization) and DIR/test_data_set_K/{input,output}_N.pb
/// for each shape of decoderDataSetShapes(), outputs from reference::evaluate. Creates DIR.
/// Throws std::runtime_error naming the file on an I/O failure or the reference's error.
void writeDecoder(const DecoderSpec& spec, const std::filesystem::path& dir);

} // namespace dynqual::modelgen
