// The onnxruntime contrib ops of ORT GenAI decoders, written from onnxruntime's
// docs/ContribOperators.md: com.microsoft MatMulNBits, GroupQueryAttention, RotaryEmbedding,
// SkipSimplifiedLayerNormalization, and SimplifiedLayerNormalization (default domain, ORT-only).
// Every value is computed in double and rounded once to the output dtype. Attribute values
// outside what is implemented fail with "unsupported: ..." naming the attribute.
#include "OpFamilies.h"
#include "OpUtil.h"

#include <cmath>
#include <limits>

namespace dynqual::reference {
namespace {

bool isHalfOrFloat(DType t) {
  return t == DType::Float || t == DType::Float16;
}

const Tensor& floatInput(const OpContext& ctx, std::size_t i, const char* name) {
  const Tensor& t = ctx.input(i);
  if (!isHalfOrFloat(t.dtype()))
    ctx.fail(std::string("unsupported: input ") + name + " is " + dtypeName(t.dtype()) + " (float and float16 are)");
  return t;
}

void requireSameDType(const OpContext& ctx, const Tensor& t, const Tensor& like, const char* name) {
  if (t.dtype() != like.dtype())
    ctx.fail(std::string("input ") + name + " is " + dtypeName(t.dtype()) + ", expected " + dtypeName(like.dtype()));
}

void requireCount(const OpContext& ctx, const Tensor& t, int64_t want, const char* name, const std::string& formula) {
  if (t.numel() != want)
    ctx.fail(std::string("input ") + name + " " + shapeToString(t.dims()) + " holds " + std::to_string(t.numel()) +
             " elements, " + formula + " = " + std::to_string(want));
}

//===--- MatMulNBits ---------------------------------------------------------===//

// Y[..., n] = sum_k A[..., k] * W[n, k] + bias[n], W[n, k] = (code - zero) * scale of the block
// k / block_size of row n. Codes are packed low bits first into B [N, k_blocks, blob]; the zero
// point defaults to 2^(bits-1); packed zero points hold ceil(k_blocks * bits / 8) bytes per row.
// accuracy_level only lets a provider quantize A, so it is ignored: A stays unquantized.
std::vector<Tensor> matMulNBits(const OpContext& ctx) {
  const Tensor& a = floatInput(ctx, 0, "A");
  const Tensor& b = ctx.input(1);
  const Tensor& scales = ctx.input(2);
  const int64_t K = ctx.requiredIntAttribute("K"), N = ctx.requiredIntAttribute("N");
  const int64_t block = ctx.requiredIntAttribute("block_size");
  const int64_t bits = ctx.intAttribute("bits", 4);
  if (bits != 2 && bits != 4 && bits != 8)
    ctx.fail("unsupported: attribute bits = " + std::to_string(bits) + " (2, 4 and 8 are)");
  if (block < 16 || (block & (block - 1)) != 0)
    ctx.fail("unsupported: attribute block_size = " + std::to_string(block) + " (a power of two >= 16 is)");
  if (K <= 0 || N <= 0)
    ctx.fail("attributes K and N must be positive");
  if (ctx.hasInput(4))
    ctx.fail("unsupported: input g_idx (act-order)");
  if (a.rank() < 1 || a.dims().back() != K)
    ctx.fail("A " + shapeToString(a.dims()) + " must end in K = " + std::to_string(K));
  if (b.dtype() != DType::Uint8)
    ctx.fail(std::string("input B must be uint8, is ") + dtypeName(b.dtype()));
  const int64_t kBlocks = (K + block - 1) / block, blob = block * bits / 8;
  requireCount(ctx, b, N * kBlocks * blob, "B", "N * ceil(K / block_size) * block_size * bits / 8");
  requireSameDType(ctx, scales, a, "scales");
  requireCount(ctx, scales, N * kBlocks, "scales", "N * ceil(K / block_size)");
  const Tensor* zp = ctx.hasInput(3) ? &ctx.input(3) : nullptr;
  const int64_t zpRowBytes = (kBlocks * bits + 7) / 8;
  if (zp) {
    if (zp->dtype() == DType::Uint8)
      requireCount(ctx, *zp, N * zpRowBytes, "zero_points", "N * ceil(k_blocks * bits / 8)");
    else if (zp->dtype() == a.dtype())
      requireCount(ctx, *zp, N * kBlocks, "zero_points", "N * k_blocks");
    else
      ctx.fail(std::string("unsupported: zero_points of ") + dtypeName(zp->dtype()) + " (uint8 or A's dtype)");
  }
  const Tensor* bias = ctx.hasInput(5) ? &ctx.input(5) : nullptr;
  if (bias) {
    requireSameDType(ctx, *bias, a, "bias");
    requireCount(ctx, *bias, N, "bias", "N");
  }
  const int64_t mask = (int64_t{1} << bits) - 1;
  auto bitsAt = [&](const Tensor& packed, int64_t byteBase, int64_t index) {
    const int64_t bit = index * bits;
    return (packed.getInt(byteBase + bit / 8) >> (bit % 8)) & mask;
  };
  // Dequantized weights, [N, K].
  std::vector<double> w(static_cast<std::size_t>(N * K));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t kb = 0; kb < kBlocks; ++kb) {
      const double scale = scales.getDouble(n * kBlocks + kb);
      double zero = static_cast<double>(int64_t{1} << (bits - 1));
      if (zp && zp->dtype() == DType::Uint8)
        zero = static_cast<double>(bitsAt(*zp, n * zpRowBytes, kb));
      else if (zp)
        zero = zp->getDouble(n * kBlocks + kb);
      for (int64_t i = 0; i < block && kb * block + i < K; ++i) {
        const int64_t code = bitsAt(b, (n * kBlocks + kb) * blob, i);
        w[static_cast<std::size_t>(n * K + kb * block + i)] = (static_cast<double>(code) - zero) * scale;
      }
    }
  std::vector<int64_t> outDims(a.dims().begin(), a.dims().end() - 1);
  outDims.push_back(N);
  Tensor out(a.dtype(), outDims);
  const int64_t rows = a.numel() / K;
  const std::vector<double> av = a.toDoubles();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t n = 0; n < N; ++n) {
      const double* ar = av.data() + r * K;
      const double* wn = w.data() + n * K;
      double sum = 0;
      for (int64_t k = 0; k < K; ++k)
        sum += ar[k] * wn[k];
      out.setDouble(r * N + n, sum + (bias ? bias->getDouble(n) : 0.0));
    }
  return {out};
}

//===--- SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization ------===//

void checkStashType(const OpContext& ctx) {
  const int64_t stash = ctx.intAttribute("stash_type", 1);
  if (stash != 1)
    ctx.fail("unsupported: attribute stash_type = " + std::to_string(stash) + " (1, float, is)");
}

// Y = X / sqrt(mean(X^2 over dims [axis, rank)) + epsilon) * scale; output 1, when declared, is
// the float inv_std_var of each normalized row.
std::vector<Tensor> simplifiedLayerNorm(const OpContext& ctx) {
  const Tensor& x = floatInput(ctx, 0, "X");
  const Tensor& scale = ctx.input(1);
  requireSameDType(ctx, scale, x, "scale");
  checkStashType(ctx);
  if (x.rank() == 0)
    ctx.fail("X must have rank >= 1");
  const int64_t axis = normalizeAxis(ctx, ctx.intAttribute("axis", -1), x.rank());
  const double eps = ctx.floatAttribute("epsilon", 1e-5f);
  const std::vector<int64_t> inner(x.dims().begin() + axis, x.dims().end());
  const int64_t n = shapeNumel(inner), rows = n == 0 ? 0 : x.numel() / n;
  if (broadcastShape(ctx, {scale.dims(), inner}) != inner)
    ctx.fail("scale " + shapeToString(scale.dims()) + " does not broadcast to the normalized dims " +
             shapeToString(inner));
  const std::vector<int64_t> scaleStrides = broadcastStrides(scale.dims(), inner);
  std::vector<int64_t> statDims(x.dims().begin(), x.dims().begin() + axis);
  statDims.resize(x.dims().size(), 1);
  Tensor y(x.dtype(), x.dims()), invStd(DType::Float, statDims);
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t j = 0; j < n; ++j)
      ss += x.getDouble(r * n + j) * x.getDouble(r * n + j);
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    invStd.setDouble(r, inv);
    forEachBroadcast(inner, {scaleStrides}, [&](int64_t j, const std::vector<int64_t>& off) {
      y.setDouble(r * n + j, x.getDouble(r * n + j) * inv * scale.getDouble(off[0]));
    });
  }
  if (ctx.outputCount() > 1)
    return {y, invStd};
  return {y};
}

// s = input + skip (+ bias); output = s / sqrt(mean(s^2) + epsilon) * gamma over the last dim;
// output 3 is s in the input's dtype. The norm reads s before that rounding.
std::vector<Tensor> skipSimplifiedLayerNorm(const OpContext& ctx) {
  const Tensor& x = floatInput(ctx, 0, "input");
  const Tensor& skip = ctx.input(1);
  const Tensor& gamma = ctx.input(2);
  requireSameDType(ctx, skip, x, "skip");
  requireSameDType(ctx, gamma, x, "gamma");
  if (x.rank() < 2)
    ctx.fail("input " + shapeToString(x.dims()) + " must have rank >= 2");
  if (broadcastShape(ctx, {skip.dims(), x.dims()}) != x.dims())
    ctx.fail("skip " + shapeToString(skip.dims()) + " does not broadcast to input " + shapeToString(x.dims()));
  const int64_t hidden = x.dims().back();
  requireCount(ctx, gamma, hidden, "gamma", "hidden size");
  const Tensor* bias = ctx.hasInput(3) ? &ctx.input(3) : nullptr;
  if (bias) {
    requireSameDType(ctx, *bias, x, "beta/bias");
    requireCount(ctx, *bias, hidden, "bias", "hidden size");
  }
  if (ctx.hasInput(4))
    ctx.fail("unsupported: a fifth input");
  if (ctx.outputCount() > 1 && !ctx.node().output(1).empty())
    ctx.fail("unsupported: output mean (a simplified layer norm has none)");
  const double eps = ctx.floatAttribute("epsilon", 1e-5f);
  const std::vector<int64_t> skipStrides = broadcastStrides(skip.dims(), x.dims());
  std::vector<double> s(static_cast<std::size_t>(x.numel()));
  forEachBroadcast(x.dims(), {skipStrides}, [&](int64_t i, const std::vector<int64_t>& off) {
    s[static_cast<std::size_t>(i)] =
        x.getDouble(i) + skip.getDouble(off[0]) + (bias ? bias->getDouble(i % hidden) : 0.0);
  });
  std::vector<int64_t> statDims = x.dims();
  statDims.back() = 1;
  Tensor y(x.dtype(), x.dims()), invStd(DType::Float, statDims), sum(x.dtype(), x.dims());
  const int64_t rows = hidden == 0 ? 0 : x.numel() / hidden;
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t j = 0; j < hidden; ++j)
      ss += s[static_cast<std::size_t>(r * hidden + j)] * s[static_cast<std::size_t>(r * hidden + j)];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(hidden) + eps);
    invStd.setDouble(r, inv);
    for (int64_t j = 0; j < hidden; ++j) {
      const int64_t i = r * hidden + j;
      y.setDouble(i, s[static_cast<std::size_t>(i)] * inv * gamma.getDouble(j));
      sum.setDouble(i, s[static_cast<std::size_t>(i)]);
    }
  }
  return {y, Tensor(DType::Float, statDims), invStd, sum};
}

//===--- rotary ----------------------------------------------------------------===//

/// Rotates the first `rotaryDim` values of one head in place at cache row `pos`: pairs
/// (i, i + rotaryDim/2) when half-split, (2i, 2i + 1) when interleaved:
/// x1' = x1 cos - x2 sin, x2' = x2 cos + x1 sin.
void rotateHead(double* head, int64_t rotaryDim, bool interleaved, const Tensor& cosCache, const Tensor& sinCache,
                int64_t pos) {
  const int64_t half = rotaryDim / 2, cols = cosCache.dims()[1];
  for (int64_t i = 0; i < half; ++i) {
    const double c = cosCache.getDouble(pos * cols + i), s = sinCache.getDouble(pos * cols + i);
    double& x1 = head[interleaved ? 2 * i : i];
    double& x2 = head[interleaved ? 2 * i + 1 : i + half];
    const double a = x1, b = x2;
    x1 = a * c - b * s;
    x2 = b * c + a * s;
  }
}

void checkCaches(const OpContext& ctx, const Tensor& cosCache, const Tensor& sinCache, const Tensor& like) {
  requireSameDType(ctx, cosCache, like, "cos_cache");
  requireSameDType(ctx, sinCache, like, "sin_cache");
  if (cosCache.rank() != 2 || cosCache.dims() != sinCache.dims())
    ctx.fail("cos_cache " + shapeToString(cosCache.dims()) + " and sin_cache " + shapeToString(sinCache.dims()) +
             " must be the same [max_position, rotary_dim / 2]");
}

int64_t cacheRow(const OpContext& ctx, int64_t pos, const Tensor& cosCache) {
  if (pos < 0 || pos >= cosCache.dims()[0])
    ctx.fail("position " + std::to_string(pos) + " is outside the cos/sin cache of " +
             std::to_string(cosCache.dims()[0]) + " positions");
  return pos;
}

// input [B, S, hidden] or [B, heads, S, head]; position_ids [B, S], or [1] holding the first
// position (token s is at position_ids[0] + s).
std::vector<Tensor> rotaryEmbedding(const OpContext& ctx) {
  const Tensor& x = floatInput(ctx, 0, "input");
  const Tensor& posIds = ctx.input(1);
  const Tensor& cosCache = ctx.input(2);
  const Tensor& sinCache = ctx.input(3);
  checkCaches(ctx, cosCache, sinCache, x);
  if (ctx.intAttribute("is_packed_batching", 0) != 0)
    ctx.fail("unsupported: attribute is_packed_batching = 1");
  if (const float sc = ctx.floatAttribute("scale", 1.0f); sc != 1.0f)
    ctx.fail("unsupported: attribute scale = " + std::to_string(sc) + " (1.0 is)");
  const bool interleaved = ctx.intAttribute("interleaved", 0) != 0;
  int64_t heads = ctx.intAttribute("num_heads", 0);
  int64_t rotaryDim = ctx.intAttribute("rotary_embedding_dim", 0);
  const bool bnsh = x.rank() == 4;
  if (x.rank() != 3 && !bnsh)
    ctx.fail("input " + shapeToString(x.dims()) +
             " must be [batch, sequence, hidden] or [batch, heads, sequence, head]");
  const int64_t batch = x.dims()[0], seq = x.dims()[bnsh ? 2 : 1];
  int64_t headSize = 0;
  if (bnsh) {
    heads = x.dims()[1];
    headSize = x.dims()[3];
  } else {
    if (rotaryDim > 0 && heads == 0)
      ctx.fail("attribute rotary_embedding_dim needs num_heads for a 3-D input");
    headSize = heads > 0 ? x.dims()[2] / heads : 2 * cosCache.dims()[1];
    if (headSize == 0 || x.dims()[2] % headSize != 0)
      ctx.fail("hidden size " + std::to_string(x.dims()[2]) + " is not a multiple of the head size " +
               std::to_string(headSize));
    heads = x.dims()[2] / headSize;
  }
  if (rotaryDim == 0)
    rotaryDim = headSize;
  if (rotaryDim % 2 != 0 || rotaryDim > headSize)
    ctx.fail("rotary_embedding_dim " + std::to_string(rotaryDim) + " must be even and at most the head size " +
             std::to_string(headSize));
  if (cosCache.dims()[1] != rotaryDim / 2)
    ctx.fail("cos_cache " + shapeToString(cosCache.dims()) +
             " must have rotary_embedding_dim / 2 = " + std::to_string(rotaryDim / 2) + " columns");
  const bool scalarPos = posIds.numel() == 1 && posIds.rank() == 1;
  if (!scalarPos && posIds.dims() != std::vector<int64_t>{batch, seq})
    ctx.fail("position_ids " + shapeToString(posIds.dims()) + " must be [batch, sequence] or [1]");
  const std::vector<int64_t> pos = intValues(ctx, posIds, "position_ids");
  Tensor out(x.dtype(), x.dims());
  std::vector<double> head(static_cast<std::size_t>(headSize));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t p = cacheRow(ctx, scalarPos ? pos[0] + s : pos[static_cast<std::size_t>(b * seq + s)], cosCache);
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t base =
            bnsh ? ((b * heads + h) * seq + s) * headSize : (b * seq + s) * heads * headSize + h * headSize;
        for (int64_t d = 0; d < headSize; ++d)
          head[static_cast<std::size_t>(d)] = x.getDouble(base + d);
        rotateHead(head.data(), rotaryDim, interleaved, cosCache, sinCache, p);
        for (int64_t d = 0; d < headSize; ++d)
          out.setDouble(base + d, head[static_cast<std::size_t>(d)]);
      }
    }
  return {out};
}

//===--- GroupQueryAttention -------------------------------------------------===//

// For batch row b with T = seqlens_k[b] + 1 tokens: past = 0 on the first prompt (S equal to
// total_sequence_length), else T - S. present_key/value [B, kv_heads, max(total, past length),
// head] holds the past's first `past` rows, then the S new (rotated) keys/values, then zeros.
// Query token s attends causally to present rows [max(0, past + s - window + 1), past + s]: the
// last local_window_size keys, itself included, as onnxruntime 1.30 computes it (the whole prefix
// without a window), scores q.k * scale (1/sqrt(head) by default), softcap *
// tanh(score / softcap) when softcap > 0, softmax; query head h reads kv head h / (heads/kv_heads).
std::vector<Tensor> groupQueryAttention(const OpContext& ctx) {
  const Tensor& q = floatInput(ctx, 0, "query");
  const int64_t heads = ctx.requiredIntAttribute("num_heads"), kvHeads = ctx.requiredIntAttribute("kv_num_heads");
  if (heads <= 0 || kvHeads <= 0 || heads % kvHeads != 0)
    ctx.fail("unsupported: attribute num_heads = " + std::to_string(heads) +
             " is not a multiple of kv_num_heads = " + std::to_string(kvHeads));
  for (std::size_t i = 9; i < ctx.inputCount(); ++i)
    if (ctx.hasInput(i))
      ctx.fail("unsupported: input " + std::to_string(i) + " (position_ids, attention_bias or head_sink)");
  if (ctx.intAttribute("smooth_softmax", 0) > 0)
    ctx.fail("unsupported: attribute smooth_softmax = 1");
  if (ctx.intAttribute("qk_output", 0) != 0)
    ctx.fail("unsupported: attribute qk_output");
  if (q.rank() != 3)
    ctx.fail("query " + shapeToString(q.dims()) + " must be [batch, sequence, hidden]");
  const bool packed = !ctx.hasInput(1);
  if (packed == ctx.hasInput(2))
    ctx.fail("key and value must be both present or both absent (packed QKV)");
  const bool hasPast = ctx.hasInput(3);
  if (hasPast != ctx.hasInput(4))
    ctx.fail("past_key and past_value must be both present or both absent");
  const int64_t B = q.dims()[0], S = q.dims()[1];
  const int64_t width = packed ? heads + 2 * kvHeads : heads;
  if (q.dims()[2] % width != 0)
    ctx.fail("query hidden size " + std::to_string(q.dims()[2]) + " is not a multiple of " + std::to_string(width));
  const int64_t D = q.dims()[2] / width;
  const Tensor* key = packed ? nullptr : &ctx.input(1);
  const Tensor* value = packed ? nullptr : &ctx.input(2);
  for (const Tensor* t : {key, value})
    if (t) {
      requireSameDType(ctx, *t, q, "key/value");
      if (t->dims() != std::vector<int64_t>{B, S, kvHeads * D})
        ctx.fail("key/value " + shapeToString(t->dims()) +
                 " must be [batch, sequence, kv_num_heads * head] = " + shapeToString({B, S, kvHeads * D}));
    }
  int64_t pastLen = 0;
  if (hasPast) {
    for (std::size_t i : {std::size_t{3}, std::size_t{4}}) {
      const Tensor& p = ctx.input(i);
      requireSameDType(ctx, p, q, "past_key/past_value");
      if (p.rank() != 4 || p.dims()[0] != B || p.dims()[1] != kvHeads || p.dims()[3] != D ||
          p.dims()[2] != ctx.input(3).dims()[2])
        ctx.fail("past_key/past_value " + shapeToString(p.dims()) + " must be [batch, kv_num_heads, past, head] = [" +
                 std::to_string(B) + "," + std::to_string(kvHeads) + ",past," + std::to_string(D) + "]");
    }
    pastLen = ctx.input(3).dims()[2];
  }
  const Tensor& seqlensT = ctx.input(5);
  if (seqlensT.dtype() != DType::Int32 || seqlensT.numel() != B)
    ctx.fail("seqlens_k " + shapeToString(seqlensT.dims()) + " must be int32 [batch] or [batch, 1]");
  const std::vector<int64_t> seqlens = intValues(ctx, seqlensT, "seqlens_k");
  const int64_t total = intScalar(ctx, ctx.input(6), "total_sequence_length");
  const bool rotary = ctx.intAttribute("do_rotary", 0) != 0;
  const Tensor* cosCache = nullptr;
  const Tensor* sinCache = nullptr;
  int64_t rotaryDim = 0;
  if (rotary) {
    if (!ctx.hasInput(7) || !ctx.hasInput(8))
      ctx.fail("do_rotary = 1 needs cos_cache and sin_cache");
    cosCache = &ctx.input(7);
    sinCache = &ctx.input(8);
    checkCaches(ctx, *cosCache, *sinCache, q);
    rotaryDim = 2 * cosCache->dims()[1];
    if (rotaryDim > D)
      ctx.fail("cos_cache " + shapeToString(cosCache->dims()) + " rotates more than the head size " +
               std::to_string(D));
  }
  const bool interleaved = ctx.intAttribute("rotary_interleaved", 0) != 0;
  const int64_t window = ctx.intAttribute("local_window_size", -1);
  const double softcap = ctx.floatAttribute("softcap", 0.0f);
  const float scaleAttr = ctx.floatAttribute("scale", 0.0f);
  const double scale = scaleAttr != 0.0f ? scaleAttr : 1.0 / std::sqrt(static_cast<double>(D));
  if (total < S)
    ctx.fail("total_sequence_length " + std::to_string(total) + " is less than the sequence length " +
             std::to_string(S));
  const bool firstPrompt = S == total;
  // onnxruntime accepts a prompt after a past (a "subsequent prompt") at batch 1 only.
  if (!firstPrompt && S > 1 && B != 1)
    ctx.fail("unsupported: sequence length " + std::to_string(S) +
             " > 1 after a past needs batch 1, as in onnxruntime");
  const int64_t presentLen = std::max(total, pastLen);
  const int64_t group = heads / kvHeads;

  // Value of head h of token s of the query (which 0), key (1) or value (2).
  auto newValue = [&](int which, int64_t b, int64_t s, int64_t h, int64_t d) {
    if (packed) {
      const int64_t col = which == 0 ? h : which == 1 ? heads + h : heads + kvHeads + h;
      return q.getDouble((b * S + s) * width * D + col * D + d);
    }
    const Tensor& t = which == 0 ? q : which == 1 ? *key : *value;
    const int64_t rowHeads = which == 0 ? heads : kvHeads;
    return t.getDouble((b * S + s) * rowHeads * D + h * D + d);
  };

  Tensor out(q.dtype(), {B, S, heads * D});
  Tensor presentK(q.dtype(), {B, kvHeads, presentLen, D}), presentV(q.dtype(), {B, kvHeads, presentLen, D});
  // [kv_heads][presentLen][D] for one batch row, in double.
  std::vector<double> ks, vs, qh(static_cast<std::size_t>(D)), scores;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t seqlen = seqlens[static_cast<std::size_t>(b)];
    if (seqlen < 0 || seqlen >= total)
      ctx.fail("unsupported: seqlens_k[" + std::to_string(b) + "] = " + std::to_string(seqlen) +
               " is outside [0, total_sequence_length = " + std::to_string(total) + ")");
    const int64_t past = firstPrompt ? 0 : seqlen + 1 - S;
    if (past < 0 || past > pastLen)
      ctx.fail("seqlens_k[" + std::to_string(b) + "] = " + std::to_string(seqlen) + " puts " + std::to_string(past) +
               " past tokens in a past buffer of " + std::to_string(pastLen));
    if (past + S > presentLen)
      ctx.fail("seqlens_k[" + std::to_string(b) + "] = " + std::to_string(seqlen) + " writes " +
               std::to_string(past + S) + " rows into a present of " + std::to_string(presentLen));
    ks.assign(static_cast<std::size_t>(kvHeads * presentLen * D), 0.0);
    vs.assign(ks.size(), 0.0);
    auto row = [&](int64_t kv, int64_t t) { return static_cast<std::size_t>((kv * presentLen + t) * D); };
    for (int64_t kv = 0; kv < kvHeads; ++kv) {
      for (int64_t t = 0; t < past; ++t)
        for (int64_t d = 0; d < D; ++d) {
          const int64_t src = ((b * kvHeads + kv) * pastLen + t) * D + d;
          ks[row(kv, t) + d] = ctx.input(3).getDouble(src);
          vs[row(kv, t) + d] = ctx.input(4).getDouble(src);
        }
      for (int64_t s = 0; s < S; ++s) {
        for (int64_t d = 0; d < D; ++d) {
          ks[row(kv, past + s) + d] = newValue(1, b, s, kv, d);
          vs[row(kv, past + s) + d] = newValue(2, b, s, kv, d);
        }
        if (rotary)
          rotateHead(&ks[row(kv, past + s)], rotaryDim, interleaved, *cosCache, *sinCache,
                     cacheRow(ctx, past + s, *cosCache));
      }
      for (int64_t t = 0; t < presentLen; ++t)
        for (int64_t d = 0; d < D; ++d) {
          const int64_t dst = ((b * kvHeads + kv) * presentLen + t) * D + d;
          presentK.setDouble(dst, ks[row(kv, t) + d]);
          presentV.setDouble(dst, vs[row(kv, t) + d]);
        }
    }
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t kv = h / group;
      for (int64_t s = 0; s < S; ++s) {
        for (int64_t d = 0; d < D; ++d)
          qh[static_cast<std::size_t>(d)] = newValue(0, b, s, h, d);
        if (rotary)
          rotateHead(qh.data(), rotaryDim, interleaved, *cosCache, *sinCache, cacheRow(ctx, past + s, *cosCache));
        const int64_t last = past + s;
        const int64_t first = window > 0 ? std::max<int64_t>(0, last - window + 1) : 0;
        scores.assign(static_cast<std::size_t>(last - first + 1), 0.0);
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t t = first; t <= last; ++t) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += qh[static_cast<std::size_t>(d)] * ks[row(kv, t) + d];
          double sc = dot * scale;
          if (softcap > 0)
            sc = softcap * std::tanh(sc / softcap);
          scores[static_cast<std::size_t>(t - first)] = sc;
          mx = std::max(mx, sc);
        }
        double denom = 0;
        for (double& sc : scores)
          denom += (sc = std::exp(sc - mx));
        for (int64_t d = 0; d < D; ++d) {
          double acc = 0;
          for (int64_t t = first; t <= last; ++t)
            acc += scores[static_cast<std::size_t>(t - first)] * vs[row(kv, t) + d];
          out.setDouble((b * S + s) * heads * D + h * D + d, acc / denom);
        }
      }
    }
  }
  return {out, presentK, presentV};
}

} // namespace

void registerContribOps(OpRegistry& registry) {
  registry.add("SimplifiedLayerNormalization", simplifiedLayerNorm);
  registry.add("com.microsoft.SimplifiedLayerNormalization", simplifiedLayerNorm);
  registry.add("com.microsoft.SkipSimplifiedLayerNormalization", skipSimplifiedLayerNorm);
  registry.add("com.microsoft.MatMulNBits", matMulNBits);
  registry.add("com.microsoft.RotaryEmbedding", rotaryEmbedding);
  registry.add("com.microsoft.GroupQueryAttention", groupQueryAttention);
}

} // namespace dynqual::reference
