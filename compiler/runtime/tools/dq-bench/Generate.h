// The decode loop of `dq-bench generate`: a prefill, then one step per generated token, with the
// next token chosen by arg_max on the device and the present KV of a step fed as the past KV of
// the next without leaving the device. The only host round trip per step is the token id.
#pragma once

#include "GenerateMetrics.h"
#include "dq/runtime/Device.h"
#include "dq/runtime/Program.h"
#include "dq/runtime/Resident.h"

#include <cstdint>
#include <vector>

namespace dq::bench {

/// Where a decoder step program keeps its tensors. The program must take input 0 = token ids
/// i64 [batch, seq] followed by past K/V tensors (or by `attention_mask` i64 [batch, total] and
/// then the past K/V tensors, as onnxruntime GenAI's builder writes decoders), and return output 0 = logits [batch,
/// seq, vocab] (vocab static) followed by the present K/V in the same order as the past inputs. A past tensor has any
/// float dtype and two dynamic dims, the first the batch and the second the past length (make-model's [batch, kv_heads,
/// past, head_dim], or a stacked [layers, batch, kv_heads, past, head_dim]), or one, the past length, when the batch is
/// static; every other dim is static. Its present has the same dtype, rank and static dims.
struct DecoderLayout {
  int64_t vocab = 0;
  /// onnxruntime GenAI's builder layout: input 1 is `attention_mask` i64 [batch, total], the pasts
  /// follow from input 2 (their presents still from output 1). generate() feeds a mask of ones.
  bool attentionMask = false;
  rt::DType logitsType = rt::DType::F32;
  std::vector<rt::TensorSpec> past; ///< program inputs 1..n
  /// The empty past cache of each past input: batch 1, past length 0.
  std::vector<std::vector<int64_t>> emptyPastDims;
};

/// Reads the layout; throws RuntimeError "unsupported: generate needs a decoder step program:
/// ..." naming the input or output that does not fit.
DecoderLayout decoderLayout(const rt::Program &program);

/// Prompt token ids: id_k = SplitMix64 output k of `seed` modulo vocab, k = 0..len-1.
std::vector<int64_t> promptTokens(int64_t vocab, int len, uint64_t seed);

/// One generation and what it measured.
struct GenerationRun {
  GenerationTimes times;
  std::vector<int64_t> tokens;            ///< the generated ids, first one from the prefill
  rt::Counters prefillCounters;           ///< the prefill run (program only)
  std::vector<rt::Counters> stepCounters; ///< each decode step (program only)
  uint64_t peakDeviceBytes = 0;           ///< max over the runs of Counters::peakDeviceBytes
};

/// Runs the prefill on `prompt` (batch 1, empty past), then genTokens - 1 decode steps. After
/// each run, arg_max (first maximum) over the last position's logits runs on the device into an
/// i64 [1, 1] device buffer, which is read back (one synchronizing 8-byte readback) and is the
/// next step's input as it stands. Present K/V buffers become the next past K/V; the previous
/// ones are freed. Times are steady-clock ms. Throws RuntimeError from the runtime; genTokens
/// must be >= 1 and the prompt non-empty (std::invalid_argument otherwise).
GenerationRun generate(rt::ResidentProgram &program, rt::Device &device, const DecoderLayout &layout,
                       const std::vector<int64_t> &prompt, int genTokens);

} // namespace dq::bench
