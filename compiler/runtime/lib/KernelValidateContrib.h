// The kernel contract of the onnxruntime contrib kernels (internal to dq_runtime):
// matmul_nbits, simplified_layer_norm, skip_simplified_layer_norm, rotary_embedding and
// group_query_attention. As KernelValidate.h: the operand and attribute checks each device runs
// before it computes, with their messages; each returns what the kernel needs afterwards.
#pragma once

#include "KernelValidate.h"

namespace dq::rt::kernel {

/// The decoded attributes of matmul_nbits (Program.h).
struct MatMulNBits {
  int64_t K = 0, N = 0, bits = 4, blockSize = 0;
  int64_t kBlocks = 0;   ///< ceil(K / blockSize)
  int64_t blobBytes = 0; ///< blockSize * bits / 8
  int64_t rows = 0;      ///< product of A's leading dims
  int zeroPointKind = 0; ///< 0 none (2^(bits-1)), 1 packed uint8, 2 A's dtype
  bool hasBias = false;
  int64_t zeroPointPitch = 0; ///< zero-point elements per row of B (bytes when packed)
};

/// matmul_nbits(A[..., K], B u8 [N, kBlocks, blob], scales [N*kBlocks] of A's dtype, [zero
/// points], [bias [N]]) -> out[..., N]; imm = K, N, bits, block_size, zero-point kind, has bias,
/// zero-point row pitch.
template <typename O>
MatMulNBits validateMatMulNBits(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  const std::string k = "matmul_nbits";
  if (args.attrs.size() != 7)
    fail(k, "expects 7 immediates (K, N, bits, block_size, zero-point kind, has bias, zero-point pitch)");
  MatMulNBits m;
  m.K = args.attrs[0];
  m.N = args.attrs[1];
  m.bits = args.attrs[2];
  m.blockSize = args.attrs[3];
  m.zeroPointKind = static_cast<int>(args.attrs[4]);
  m.hasBias = args.attrs[5] != 0;
  m.zeroPointPitch = args.attrs[6];
  if (m.bits != 2 && m.bits != 4 && m.bits != 8)
    fail(k, "unsupported: bits " + std::to_string(m.bits) + " (2, 4 and 8 are)");
  if (m.blockSize < 16 || (m.blockSize & (m.blockSize - 1)) != 0)
    fail(k, "unsupported: block_size " + std::to_string(m.blockSize) + " (a power of two >= 16 is)");
  if (m.K <= 0 || m.N <= 0) fail(k, "K and N must be positive");
  if (m.zeroPointKind < 0 || m.zeroPointKind > 2) fail(k, "zero-point kind must be 0, 1 or 2");
  const size_t want = 3 + (m.zeroPointKind != 0 ? 1 : 0) + (m.hasBias ? 1 : 0);
  if (ins.size() != want || outs.size() != 1)
    fail(k, "expects " + std::to_string(want) + " inputs and 1 output, got " + std::to_string(ins.size()) + " and " +
                std::to_string(outs.size()));
  m.kBlocks = (m.K + m.blockSize - 1) / m.blockSize;
  m.blobBytes = m.blockSize * m.bits / 8;
  const O &a = ins[0], &b = ins[1], &scales = ins[2], &out = outs[0];
  checkAdmits(k, a, bit(DType::F32) | bit(DType::F16));
  checkSameDType(k, a, out);
  if (a.sizes.empty() || a.sizes.back() != m.K)
    fail(k, operandLabel(a) + " " + formatDims(a.sizes) + " must have K = " + std::to_string(m.K) + " as its last dim");
  std::vector<int64_t> outShape = a.sizes;
  outShape.back() = m.N;
  checkShape(k, out, outShape);
  m.rows = elementCount(a.sizes) / m.K;
  checkDType(k, b, DType::U8);
  checkShape(k, b, {m.N, m.kBlocks, m.blobBytes});
  checkSameDType(k, scales, a);
  if (elementCount(scales.sizes) != m.N * m.kBlocks)
    fail(k, "scales " + formatDims(scales.sizes) + " must hold N * k_blocks = " + std::to_string(m.N * m.kBlocks) +
                " elements");
  size_t next = 3;
  if (m.zeroPointKind != 0) {
    const O &zp = ins[next++];
    if (m.zeroPointKind == 1) {
      checkDType(k, zp, DType::U8);
      const int64_t perRow = (m.kBlocks * m.bits + 7) / 8;
      if (m.zeroPointPitch <= 0 || m.zeroPointPitch > perRow)
        fail(k, "packed zero-point pitch " + std::to_string(m.zeroPointPitch) + " must lie in [1, " +
                    std::to_string(perRow) + "]");
      if (elementCount(zp.sizes) != m.N * perRow)
        fail(k, "packed zero_points " + formatDims(zp.sizes) +
                    " must hold N * ceil(k_blocks * bits / 8) = " + std::to_string(m.N * perRow) + " bytes");
    } else {
      checkSameDType(k, zp, a);
      if (m.zeroPointPitch != m.kBlocks) fail(k, "zero-point pitch must be k_blocks for zero points in A's dtype");
      if (elementCount(zp.sizes) != m.N * m.kBlocks)
        fail(k, "zero_points " + formatDims(zp.sizes) + " must hold N * k_blocks = " + std::to_string(m.N * m.kBlocks) +
                    " elements");
    }
  }
  if (m.hasBias) {
    const O &bias = ins[next];
    checkSameDType(k, bias, a);
    if (elementCount(bias.sizes) != m.N) fail(k, "bias " + formatDims(bias.sizes) + " must hold N elements");
  }
  return m;
}

/// simplified_layer_norm(X, scale) -> Y; imm = first normalized axis (wraps); fimm = epsilon.
/// Returns the axis.
template <typename O>
size_t validateSimplifiedLayerNorm(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  const std::string k = "simplified_layer_norm";
  checkArity(k, ins, outs, 2);
  const O &x = ins[0], &out = outs[0];
  checkAdmits(k, x, kFloatTypes);
  checkSameDType(k, ins[1], x);
  checkSameDType(k, x, out);
  checkShape(k, out, x.sizes);
  checkBroadcast(k, ins[1], out);
  const size_t axis = axisAttr(k, args, 0, x.sizes.size(), true);
  if (args.fattrs.empty()) fail(k, "missing epsilon (fimm[0])");
  return axis;
}

/// skip_simplified_layer_norm(X, skip, gamma[, bias]) -> Y, S (S = X + skip + bias) over the last
/// axis; imm = has bias; fimm = epsilon.
template <typename O>
bool validateSkipSimplifiedLayerNorm(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  const std::string k = "skip_simplified_layer_norm";
  if (args.attrs.size() != 1 || args.fattrs.empty()) fail(k, "expects imm = has bias and fimm = epsilon");
  const bool hasBias = args.attrs[0] != 0;
  const size_t want = hasBias ? 4 : 3;
  if (ins.size() != want || outs.size() != 2)
    fail(k, "expects " + std::to_string(want) + " inputs and 2 outputs, got " + std::to_string(ins.size()) + " and " +
                std::to_string(outs.size()));
  const O &x = ins[0];
  if (x.sizes.empty()) fail(k, operandLabel(x) + " must have rank >= 1");
  checkAdmits(k, x, kFloatTypes);
  for (size_t i = 1; i < ins.size(); ++i) {
    checkSameDType(k, ins[i], x);
    checkBroadcast(k, ins[i], outs[0]);
  }
  for (const O &o : outs) {
    checkSameDType(k, o, x);
    checkShape(k, o, x.sizes);
  }
  return hasBias;
}

/// The decoded attributes of rotary_embedding.
struct Rotary {
  bool interleaved = false;
  int64_t batch = 0, seq = 0, heads = 0, headSize = 0, rotaryDim = 0;
  bool bnsh = false;      ///< X is [B, heads, S, head] (rank 4); else [B, S, heads * head]
  bool scalarPos = false; ///< position_ids is [1]: position = position_ids[0] + s
};

/// rotary_embedding(X, position_ids i64, cos_cache, sin_cache) -> out (X's shape); imm =
/// interleaved, num_heads (0: from the cache width), rotary_embedding_dim (0: the head size).
template <typename O>
Rotary validateRotaryEmbedding(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  const std::string k = "rotary_embedding";
  checkArity(k, ins, outs, 4);
  if (args.attrs.size() != 3) fail(k, "expects 3 immediates (interleaved, num_heads, rotary_embedding_dim)");
  const O &x = ins[0], &pos = ins[1], &cosC = ins[2], &sinC = ins[3];
  checkAdmits(k, x, kFloatTypes);
  checkSameDType(k, outs[0], x);
  checkShape(k, outs[0], x.sizes);
  checkDType(k, pos, DType::I64);
  checkSameDType(k, cosC, x);
  checkSameDType(k, sinC, x);
  if (cosC.sizes.size() != 2 || cosC.sizes != sinC.sizes)
    fail(k, "cos_cache and sin_cache must be 2-D and of one shape, got " + formatDims(cosC.sizes) + " and " +
                formatDims(sinC.sizes));
  Rotary r;
  r.interleaved = args.attrs[0] != 0;
  const int64_t numHeads = args.attrs[1], rotAttr = args.attrs[2];
  if (x.sizes.size() == 4) {
    r.bnsh = true;
    r.batch = x.sizes[0];
    r.heads = x.sizes[1];
    r.seq = x.sizes[2];
    r.headSize = x.sizes[3];
  } else if (x.sizes.size() == 3) {
    r.batch = x.sizes[0];
    r.seq = x.sizes[1];
    const int64_t hidden = x.sizes[2];
    r.heads = numHeads > 0 ? numHeads : (cosC.sizes[1] > 0 ? hidden / (2 * cosC.sizes[1]) : 0);
    if (r.heads <= 0 || hidden % r.heads != 0)
      fail(k, "hidden size " + std::to_string(hidden) + " is not a multiple of num_heads " + std::to_string(r.heads));
    r.headSize = hidden / r.heads;
  } else {
    fail(k, operandLabel(x) + " must have rank 3 or 4, got " + formatDims(x.sizes));
  }
  r.rotaryDim = rotAttr > 0 ? rotAttr : r.headSize;
  if (r.rotaryDim % 2 != 0 || r.rotaryDim > r.headSize)
    fail(k, "rotary_embedding_dim " + std::to_string(r.rotaryDim) + " must be even and at most the head size " +
                std::to_string(r.headSize));
  if (cosC.sizes[1] != r.rotaryDim / 2)
    fail(k, "cos_cache " + formatDims(cosC.sizes) +
                " must have rotary_embedding_dim / 2 = " + std::to_string(r.rotaryDim / 2) + " columns");
  if (pos.sizes == std::vector<int64_t>{1})
    r.scalarPos = true;
  else if (pos.sizes != std::vector<int64_t>{r.batch, r.seq})
    fail(k, "position_ids " + formatDims(pos.sizes) +
                " must be [1] or [batch, sequence] = " + formatDims({r.batch, r.seq}));
  return r;
}

/// The decoded attributes and shapes of group_query_attention.
struct Gqa {
  int64_t batch = 0, seq = 0, heads = 0, kvHeads = 0, headSize = 0;
  int64_t pastLen = 0;    ///< past buffer length (0 without past)
  int64_t presentLen = 0; ///< max(total_sequence_length, pastLen)
  int64_t total = 0;      ///< total_sequence_length
  bool packed = false, hasPast = false, rotary = false, interleaved = false;
  int64_t localWindow = -1;
  double scale = 0, softcap = 0;
  bool firstPrompt = false; ///< S == total_sequence_length: every batch starts at position 0
};

/// group_query_attention(query, [key, value], [past_key, past_value], seqlens_k i32 [B],
/// [cos_cache, sin_cache]) -> output, present_key, present_value; imm = num_heads, kv_num_heads,
/// packed (no key/value), has past, do_rotary, rotary_interleaved, local_window_size; fimm =
/// scale (0: 1/sqrt(head)), softcap; s[0] = total_sequence_length.
template <typename O>
Gqa validateGroupQueryAttention(const std::vector<O> &ins, const std::vector<O> &outs, const KernelArgs &args) {
  const std::string k = "group_query_attention";
  if (args.attrs.size() != 7 || args.fattrs.size() != 2 || args.scalars.size() != 1)
    fail(k, "expects 7 immediates, 2 float immediates and 1 scalar (total_sequence_length)");
  Gqa g;
  g.heads = args.attrs[0];
  g.kvHeads = args.attrs[1];
  g.packed = args.attrs[2] != 0;
  g.hasPast = args.attrs[3] != 0;
  g.rotary = args.attrs[4] != 0;
  g.interleaved = args.attrs[5] != 0;
  g.localWindow = args.attrs[6];
  g.scale = args.fattrs[0];
  g.softcap = args.fattrs[1];
  g.total = args.scalars[0];
  if (g.heads <= 0 || g.kvHeads <= 0 || g.heads % g.kvHeads != 0)
    fail(k, "unsupported: num_heads " + std::to_string(g.heads) + " is not a positive multiple of kv_num_heads " +
                std::to_string(g.kvHeads));
  const size_t want = 2 + (g.packed ? 0 : 2) + (g.hasPast ? 2 : 0) + (g.rotary ? 2 : 0);
  if (ins.size() != want || outs.size() != 3)
    fail(k, "expects " + std::to_string(want) + " inputs and 3 outputs, got " + std::to_string(ins.size()) + " and " +
                std::to_string(outs.size()));
  const O &q = ins[0];
  checkAdmits(k, q, bit(DType::F32) | bit(DType::F16));
  if (q.sizes.size() != 3) fail(k, "query must be [batch, sequence, hidden], got " + formatDims(q.sizes));
  g.batch = q.sizes[0];
  g.seq = q.sizes[1];
  const int64_t width = g.packed ? g.heads + 2 * g.kvHeads : g.heads;
  if (q.sizes[2] % width != 0)
    fail(k, "query hidden size " + std::to_string(q.sizes[2]) + " is not a multiple of " + std::to_string(width));
  g.headSize = q.sizes[2] / width;
  size_t next = 1;
  if (!g.packed) {
    for (int i = 0; i < 2; ++i) {
      const O &kv = ins[next++];
      checkSameDType(k, kv, q);
      checkShape(k, kv, {g.batch, g.seq, g.kvHeads * g.headSize});
    }
  }
  if (g.hasPast) {
    const O &pk = ins[next++], &pv = ins[next++];
    checkSameDType(k, pk, q);
    checkSameDType(k, pv, q);
    if (pk.sizes.size() != 4)
      fail(k, "past_key must be [batch, kv_num_heads, past, head], got " + formatDims(pk.sizes));
    g.pastLen = pk.sizes[2];
    checkShape(k, pk, {g.batch, g.kvHeads, g.pastLen, g.headSize});
    checkShape(k, pv, {g.batch, g.kvHeads, g.pastLen, g.headSize});
  }
  const O &seqlens = ins[next++];
  checkDType(k, seqlens, DType::I32);
  if (elementCount(seqlens.sizes) != g.batch)
    fail(k, "seqlens_k " + formatDims(seqlens.sizes) + " must hold batch = " + std::to_string(g.batch) + " values");
  if (g.rotary) {
    const O &c = ins[next++], &s = ins[next++];
    checkSameDType(k, c, q);
    checkSameDType(k, s, q);
    if (c.sizes.size() != 2 || c.sizes != s.sizes || c.sizes[1] * 2 > g.headSize)
      fail(k, "cos_cache and sin_cache must be one 2-D shape [positions, <= head / 2], got " + formatDims(c.sizes) +
                  " and " + formatDims(s.sizes));
    if (c.sizes[0] < g.total)
      fail(k, "cos_cache has " + std::to_string(c.sizes[0]) + " positions, fewer than total_sequence_length " +
                  std::to_string(g.total));
  }
  if (g.total < g.seq)
    fail(k, "total_sequence_length " + std::to_string(g.total) + " is less than the sequence length " +
                std::to_string(g.seq));
  g.presentLen = std::max(g.total, g.pastLen);
  g.firstPrompt = g.seq == g.total;
  if (!g.firstPrompt && g.seq != 1 && g.batch != 1)
    fail(k, "unsupported: sequence length " + std::to_string(g.seq) +
                " > 1 with past context needs batch 1 (onnxruntime's subsequent prompt)");
  checkSameDType(k, outs[0], q);
  checkShape(k, outs[0], {g.batch, g.seq, g.heads * g.headSize});
  for (size_t i = 1; i < 3; ++i) {
    checkSameDType(k, outs[i], q);
    checkShape(k, outs[i], {g.batch, g.kvHeads, g.presentLen, g.headSize});
  }
  return g;
}

} // namespace dq::rt::kernel
