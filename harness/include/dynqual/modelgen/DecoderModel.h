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
  int64_t kvHeads = 1; ///< heads share K/V in groups of heads / kvHeads
  int64_t vocab = 32;
  uint64_t seed = 1;
  int64_t mlp = 0;      ///< MLP width (gate/up output, down input); 0 = 2 * hidden
  bool float16 = false; ///< weights, KV cache, logits and every float tensor in f16 (else f32)
  /// The MLP width in effect: mlp, or 2 * hidden when mlp is 0.
  int64_t mlpWidth() const { return mlp > 0 ? mlp : 2 * hidden; }
};

/// Parameters of the decoder: embedding, per layer 2 gains + wq, wk, wv, wo + 3 MLP matrices,
/// final gain and LM head.
int64_t decoderParameterCount(const DecoderSpec& spec);

/// Throws std::invalid_argument naming the option when a size is < 1 (mlp may be 0, the
/// default), hidden is not a multiple of heads, or heads is not a multiple of kvHeads.
void validate(const DecoderSpec& spec);

/// Builds the model (opset 17). Inputs: input_ids int64 [batch, seq], then past_key_L and
/// past_value_L [batch, kv_heads, past, head_dim] per layer L. Outputs: logits [batch, seq,
/// vocab], then present_key_L / present_value_L [batch, kv_heads, total, head_dim] with total =
/// past + seq. Float tensors are f32, or f16 with spec.float16 (the mask fill is then -65504,
/// the lowest finite f16, instead of -1e9). Query position i attends to key positions
/// j <= past + i. Weights are uniform in [-1, 1) / sqrt(fan_in) (gains 1 + [-0.25, 0.25)) from
/// one SplitMix64 stream of `seed` drawn in a fixed order, rounded once to the element type, so
/// the bytes are the same on every platform (decoderWeightRecipe lists the order). Throws like
/// validate().
onnx::ModelProto buildDecoder(const DecoderSpec& spec);

/// How every generated weight is drawn, so that another program (scripts/decoder_weights.py)
/// regenerates the same bytes: {"generator": "splitmix64-symmetric-v1", "seed", "dtype":
/// "float32"|"float16", "tensors": [{"name", "draw" (index of its first value in the stream),
/// "dims", "kind": "matrix" (u / sqrt(dims[0])) or "gain" (1 + 0.25 u)}]} where value k of the
/// stream is u = (SplitMix64 output k >> 40) * 2^-23 - 1, computed in double and rounded once.
std::string decoderWeightRecipe(const DecoderSpec& spec);

/// Inputs of a data set of shape (batch, seq, past): token ids uniform in [0, vocab), past K/V
/// uniform in [-1, 1), from `seed`.
std::vector<Tensor> decoderInputs(const DecoderSpec& spec, int64_t batch, int64_t seq, int64_t past, uint64_t seed);

/// The (batch, seq, past) shapes of test_data_set_0..2: a prompt without cache, a batched
/// one-token step on a cache, and a short chunk on a longer cache.
std::vector<std::vector<int64_t>> decoderDataSetShapes();

/// How writeDecoder writes the folder.
struct DecoderWriteOptions {
  bool dataSets = true; ///< write test_data_set_0..2 (the CPU reference computes outputs)
  /// Store the generated weights as ONNX external data in DIR/model.onnx.data (the tensors
  /// concatenated in draw order, each at a 64-byte aligned offset) and record
  /// decoderWeightRecipe and the file's sha256 in the model's metadata_props
  /// ("dynqual.weights.recipe", "dynqual.weights.sha256"), so the large file need not travel.
  bool externalData = false;
};

/// Writes DIR/model.onnx (deterministic serialization) and DIR/test_data_set_K/{input,output}_N.pb
/// for each shape of decoderDataSetShapes(), outputs from reference::evaluate. Creates DIR.
/// Throws std::runtime_error naming the file on an I/O failure or the reference's error.
void writeDecoder(const DecoderSpec& spec, const std::filesystem::path& dir, const DecoderWriteOptions& options = {});

} // namespace dynqual::modelgen
