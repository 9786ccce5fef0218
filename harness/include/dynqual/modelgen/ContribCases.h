#pragma once
// `dynqual make-model contrib-cases` and `make-model hipep-l2`: one-op models of the onnxruntime
// contrib ops (docs/contrib-ops.md) over a table of shapes, attributes and dtypes, each with
// hand-built input sets (valid seqlens_k and positions) whose outputs come from the CPU reference.
#include "dynqual/tensor/Tensor.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace dynqual::modelgen {

/// One conformance case: a one-node model with dynamic dims and the input sets to run it on
/// (each in graph-input order, at a different binding of the dynamic dims).
struct ContribCase {
  std::string name; ///< folder name, e.g. "MatMulNBits_b4_blk32_K39_zp-packed_f16"
  std::string op;   ///< the op type, e.g. "MatMulNBits"
  onnx::ModelProto model;
  std::vector<std::vector<Tensor>> inputSets;
};

/// The conformance table: MatMulNBits (bits 2/4/8 x block 16..128 x K a multiple of the block or
/// not x zero points none/packed/float (float at 2 and 4 bits, as onnxruntime's CPU kernel takes them) x
/// fp32/fp16, bias on a third), GroupQueryAttention (3 head
/// layouts x packed QKV or not x no/half-split/interleaved rotary x prompt, decode, shared past
/// buffer, continued prompt; windows, softcap, scale and fp16 on a rotation), RotaryEmbedding,
/// SimplifiedLayerNormalization and SkipSimplifiedLayerNormalization. `op` empty = all ops, else
/// only that op's cases. Deterministic in `seed`. Throws std::invalid_argument for an unknown op.
std::vector<ContribCase> contribConformanceCases(uint64_t seed, const std::string& op = "");

/// The names hipEpL2Case accepts: GroupQueryAttention_seq256, MatMulNBits_o_seq128.
std::vector<std::string> hipEpL2Names();

/// hip-ep's single-op L2 rows at the shapes of a Llama-3-8B layer (hidden 4096, 32 query heads,
/// 8 kv heads, head 128, fp16): GroupQueryAttention_seq256 is a 256-token first prompt with
/// rotary; MatMulNBits_o_seq128 is the o-projection (K = N = 4096, 4 bits, block 128, packed zero
/// points) on 128 tokens. One input set each. Throws std::invalid_argument for another name.
ContribCase hipEpL2Case(const std::string& name, uint64_t seed);

/// Writes DIR/model.onnx and DIR/test_data_set_K (inputs, outputs from reference::evaluate) for
/// each input set. Throws std::runtime_error naming the folder when DIR already holds a model or
/// the reference rejects a set.
void writeContribCase(const ContribCase& c, const std::filesystem::path& dir);

} // namespace dynqual::modelgen
