// The onnxruntime contrib kernels of the sim device (Program.h): matmul_nbits (weights stay
// packed; each code is decoded as it is used), the two simplified (RMS) layer norms,
// rotary_embedding and group_query_attention. Floats compute in double and round once to the
// output dtype, as the other sim kernels do; in the ElementType precision mode every accumulation
// step is rounded to fp32 (step()).
#include "KernelValidateContrib.h"
#include "SimKernelSupport.h"

namespace dq::rt::sim {
namespace {

/// Element offset of `o` at row-major linear index `linear` of its own shape.
int64_t linearAt(const Operand &o, int64_t linear) {
  int64_t off = o.offset;
  for (size_t d = o.sizes.size(); d-- > 0;) {
    const int64_t i = linear % o.sizes[d];
    linear /= o.sizes[d];
    off += i * o.strides[d];
  }
  return off;
}

/// Element offset of row `row` (over the leading dims) of `o` at position `k` of its last dim.
int64_t rowAt(const Operand &o, int64_t row, int64_t k) {
  int64_t off = o.offset + k * o.strides.back();
  for (size_t d = o.sizes.size() - 1; d-- > 0;) {
    off += (row % o.sizes[d]) * o.strides[d];
    row /= o.sizes[d];
  }
  return off;
}

//===--- matmul_nbits -----------------------------------------------------===//

void kMatMulNBits(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const kernel::MatMulNBits m = kernel::validateMatMulNBits(ins, outs, args);
  const Operand &a = ins[0], &b = ins[1], &scales = ins[2];
  const Operand *zp = m.zeroPointKind != 0 ? &ins[3] : nullptr;
  const Operand *bias = m.hasBias ? &ins[m.zeroPointKind != 0 ? 4 : 3] : nullptr;
  Operand &out = outs[0];
  const int64_t mask = (int64_t{1} << m.bits) - 1, zpRow = m.zeroPointPitch;
  const bool f32 = fp32Steps(a.dtype);
  // A read once into double rows: the offset arithmetic of rowAt per multiply would dominate.
  std::vector<double> av(static_cast<size_t>(m.rows * m.K));
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t kk = 0; kk < m.K; ++kk)
      av[static_cast<size_t>(r * m.K + kk)] = loadF(a, rowAt(a, r, kk));
  // Row n of B dequantized into dst[0, K): codes are read from the packed bytes, never expanded in
  // device memory.
  auto dequantizeRow = [&](int64_t n, double *dst) {
    for (int64_t kb = 0; kb < m.kBlocks; ++kb) {
      const double scale = loadF(scales, linearAt(scales, n * m.kBlocks + kb));
      double zero = static_cast<double>(int64_t{1} << (m.bits - 1));
      if (m.zeroPointKind == 1) {
        const int64_t bitPos = kb * m.bits;
        const int64_t byte = loadI(*zp, linearAt(*zp, n * zpRow + bitPos / 8));
        zero = static_cast<double>((byte >> (bitPos % 8)) & mask);
      } else if (m.zeroPointKind == 2) {
        zero = loadF(*zp, linearAt(*zp, n * m.kBlocks + kb));
      }
      for (int64_t i = 0; i < m.blockSize; ++i) {
        const int64_t kk = kb * m.blockSize + i;
        if (kk >= m.K) break; // the padded tail of the last block is never read
        const int64_t bitPos = i * m.bits;
        const int64_t byte = loadI(b, at(b, {n, kb, bitPos / 8}));
        const int64_t code = (byte >> (bitPos % 8)) & mask;
        dst[kk] = step(f32, (static_cast<double>(code) - zero) * scale);
      }
    }
  };
  // Four output columns at a time, each one running sum in k order as the reference sums (the
  // fuzz oracle compares bit for bit); four independent sums keep the adds from waiting on one
  // another. Rows of w past N stay zero and are never stored.
  constexpr int64_t kCols = 4;
  std::vector<double> w(static_cast<size_t>(kCols * m.K));
  for (int64_t n0 = 0; n0 < m.N; n0 += kCols) {
    const int64_t cols = std::min(kCols, m.N - n0);
    std::fill(w.begin(), w.end(), 0.0);
    for (int64_t j = 0; j < cols; ++j)
      dequantizeRow(n0 + j, w.data() + j * m.K);
    for (int64_t r = 0; r < m.rows; ++r) {
      const double *ar = av.data() + r * m.K;
      double acc[kCols] = {0, 0, 0, 0};
      const double *w0 = w.data(), *w1 = w0 + m.K, *w2 = w1 + m.K, *w3 = w2 + m.K;
      if (f32)
        for (int64_t kk = 0; kk < m.K; ++kk)
          for (int64_t j = 0; j < kCols; ++j)
            acc[j] = step(true, acc[j] + ar[kk] * w[static_cast<size_t>(j * m.K + kk)]);
      else
        for (int64_t kk = 0; kk < m.K; ++kk) {
          const double x = ar[kk];
          acc[0] += x * w0[kk];
          acc[1] += x * w1[kk];
          acc[2] += x * w2[kk];
          acc[3] += x * w3[kk];
        }
      for (int64_t j = 0; j < cols; ++j) {
        const double bn = bias ? loadF(*bias, linearAt(*bias, n0 + j)) : 0.0;
        storeF(out, rowAt(out, r, n0 + j), acc[j] + bn);
      }
    }
  }
}

//===--- simplified (RMS) layer norms ---------------------------------------===//

/// 1 / sqrt(mean(v^2) + eps), accumulated in order.
double inverseRms(const std::vector<double> &v, double eps, bool f32) {
  double ss = 0;
  for (double x : v)
    ss = step(f32, ss + step(f32, x * x));
  const double mean = step(f32, ss / static_cast<double>(v.size()));
  return step(f32, 1.0 / step(f32, std::sqrt(step(f32, mean + eps))));
}

void kSimplifiedLayerNorm(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const size_t axis = kernel::validateSimplifiedLayerNorm(ins, outs, args);
  const Operand &x = ins[0], &scale = ins[1];
  Operand &out = outs[0];
  const double eps = args.fattrs[0];
  const bool f32 = fp32Steps(x.dtype);
  std::vector<int64_t> outer = x.sizes, inner(x.sizes.begin() + static_cast<long>(axis), x.sizes.end());
  std::fill(outer.begin() + static_cast<long>(axis), outer.end(), 1);
  if (numElements(inner) == 0) return;
  std::vector<double> v;
  forEachIndex(outer, [&](const std::vector<int64_t> &o) {
    std::vector<int64_t> idx = o;
    auto full = [&](const std::vector<int64_t> &ii) {
      std::copy(ii.begin(), ii.end(), idx.begin() + static_cast<long>(axis));
      return idx;
    };
    v.clear();
    forEachIndex(inner, [&](const std::vector<int64_t> &ii) { v.push_back(loadF(x, at(x, full(ii)))); });
    const double inv = inverseRms(v, eps, f32);
    size_t k = 0;
    forEachIndex(inner, [&](const std::vector<int64_t> &ii) {
      const std::vector<int64_t> &f = full(ii);
      storeF(out, at(out, f), step(f32, v[k++] * inv) * loadF(scale, at(scale, f)));
    });
  });
}

void kSkipSimplifiedLayerNorm(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const bool hasBias = kernel::validateSkipSimplifiedLayerNorm(ins, outs, args);
  const Operand &x = ins[0], &skip = ins[1], &gamma = ins[2];
  Operand &y = outs[0], &sum = outs[1];
  const double eps = args.fattrs[0];
  const bool f32 = fp32Steps(x.dtype);
  const size_t axis = x.sizes.size() - 1;
  const int64_t n = x.sizes[axis];
  if (n == 0) return;
  std::vector<double> v(static_cast<size_t>(n));
  forEachLine(x.sizes, axis, [&](const std::vector<int64_t> &idx) {
    for (int64_t j = 0; j < n; ++j) {
      std::vector<int64_t> e = idx;
      e[axis] = j;
      double s = step(f32, loadF(x, at(x, e)) + loadF(skip, at(skip, e)));
      if (hasBias) s = step(f32, s + loadF(ins[3], at(ins[3], e)));
      // The norm reads the sum before it is rounded to the output dtype, as onnxruntime's kernel
      // does (it accumulates in float and stores the fp16 sum separately).
      storeF(sum, at(sum, e), s);
      v[static_cast<size_t>(j)] = s;
    }
    const double inv = inverseRms(v, eps, f32);
    for (int64_t j = 0; j < n; ++j) {
      std::vector<int64_t> e = idx;
      e[axis] = j;
      storeF(y, at(y, e), step(f32, v[static_cast<size_t>(j)] * inv) * loadF(gamma, at(gamma, e)));
    }
  });
}

//===--- rotary -------------------------------------------------------------===//

/// Rotates the first `rotaryDim` of `head` (one head's values, in double) at position `pos` with
/// the caches: half-split pairs (i, i + d/2), or interleaved pairs (2i, 2i + 1).
void rotate(std::vector<double> &head, int64_t rotaryDim, bool interleaved, const Operand &cosC, const Operand &sinC,
            int64_t pos, bool f32) {
  const int64_t half = rotaryDim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double c = loadF(cosC, at(cosC, {pos, i})), s = loadF(sinC, at(sinC, {pos, i}));
    const size_t i1 = static_cast<size_t>(interleaved ? 2 * i : i);
    const size_t i2 = static_cast<size_t>(interleaved ? 2 * i + 1 : i + half);
    const double x1 = head[i1], x2 = head[i2];
    head[i1] = step(f32, step(f32, x1 * c) - step(f32, x2 * s));
    head[i2] = step(f32, step(f32, x2 * c) + step(f32, x1 * s));
  }
}

/// The cache row of a position, checked against the cache's extent.
int64_t checkedPosition(const char *kernelName, int64_t pos, const Operand &cache) {
  if (pos < 0 || pos >= cache.sizes[0])
    fail(kernelName, "position " + std::to_string(pos) + " is outside the cos/sin cache of " +
                         std::to_string(cache.sizes[0]) + " positions");
  return pos;
}

void kRotaryEmbedding(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const kernel::Rotary r = kernel::validateRotaryEmbedding(ins, outs, args);
  const Operand &x = ins[0], &posIds = ins[1], &cosC = ins[2], &sinC = ins[3];
  Operand &out = outs[0];
  const bool f32 = fp32Steps(x.dtype);
  std::vector<double> head(static_cast<size_t>(r.headSize));
  for (int64_t b = 0; b < r.batch; ++b)
    for (int64_t s = 0; s < r.seq; ++s) {
      const int64_t raw = r.scalarPos ? loadI(posIds, at(posIds, {0})) + s : loadI(posIds, at(posIds, {b, s}));
      const int64_t pos = checkedPosition("rotary_embedding", raw, cosC);
      for (int64_t h = 0; h < r.heads; ++h) {
        auto offset = [&](const Operand &o, int64_t d) {
          return r.bnsh ? at(o, {b, h, s, d}) : at(o, {b, s, h * r.headSize + d});
        };
        for (int64_t d = 0; d < r.headSize; ++d)
          head[static_cast<size_t>(d)] = loadF(x, offset(x, d));
        rotate(head, r.rotaryDim, r.interleaved, cosC, sinC, pos, f32);
        for (int64_t d = 0; d < r.headSize; ++d)
          storeF(out, offset(out, d), head[static_cast<size_t>(d)]);
      }
    }
}

//===--- group_query_attention ------------------------------------------------===//

void kGroupQueryAttention(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const kernel::Gqa g = kernel::validateGroupQueryAttention(ins, outs, args);
  const char *k = "group_query_attention";
  const Operand &q = ins[0];
  size_t next = 1;
  const Operand *key = nullptr, *value = nullptr, *pastK = nullptr, *pastV = nullptr, *cosC = nullptr, *sinC = nullptr;
  if (!g.packed) {
    key = &ins[next++];
    value = &ins[next++];
  }
  if (g.hasPast) {
    pastK = &ins[next++];
    pastV = &ins[next++];
  }
  const Operand &seqlens = ins[next++];
  if (g.rotary) {
    cosC = &ins[next++];
    sinC = &ins[next++];
  }
  Operand &out = outs[0], &presentK = outs[1], &presentV = outs[2];
  const int64_t D = g.headSize, group = g.heads / g.kvHeads;
  const int64_t rotaryDim = g.rotary ? 2 * cosC->sizes[1] : 0;
  const bool f32 = fp32Steps(q.dtype);
  const double scale = g.scale != 0 ? g.scale : 1.0 / std::sqrt(static_cast<double>(D));

  // One head's values of token s of the new query/key/value, from the separate or packed inputs.
  auto newHead = [&](int which, int64_t b, int64_t s, int64_t h, std::vector<double> &dst) {
    dst.resize(static_cast<size_t>(D));
    for (int64_t d = 0; d < D; ++d) {
      int64_t e;
      if (which == 0)
        e = at(q, {b, s, h * D + d});
      else if (g.packed)
        e = at(q, {b, s, (g.heads + (which == 1 ? 0 : g.kvHeads) + h) * D + d});
      else
        e = which == 1 ? at(*key, {b, s, h * D + d}) : at(*value, {b, s, h * D + d});
      dst[static_cast<size_t>(d)] = loadF(which == 0 || g.packed ? q : which == 1 ? *key : *value, e);
    }
  };

  std::vector<double> head, scores;
  std::vector<std::vector<double>> keys(static_cast<size_t>(g.presentLen)), values(keys.size());
  for (int64_t b = 0; b < g.batch; ++b) {
    const int64_t seqlen = loadI(seqlens, linearAt(seqlens, b));
    if (seqlen < 0 || seqlen >= g.total)
      fail(k, "unsupported: seqlens_k[" + std::to_string(b) + "] = " + std::to_string(seqlen) +
                  " is outside [0, total_sequence_length = " + std::to_string(g.total) + ")");
    const int64_t totalB = seqlen + 1;
    const int64_t pastB = g.firstPrompt ? 0 : totalB - g.seq;
    if (pastB < 0 || pastB > g.pastLen)
      fail(k, "seqlens_k[" + std::to_string(b) + "] = " + std::to_string(seqlen) + " puts " + std::to_string(pastB) +
                  " past tokens in a past buffer of " + std::to_string(g.pastLen));
    for (int64_t kv = 0; kv < g.kvHeads; ++kv) {
      // The present cache of this head: the valid past, then the new tokens at pastB (rotated
      // keys), zeros after (onnxruntime's present when it does not share the past's buffer).
      for (int64_t t = 0; t < g.presentLen; ++t) {
        auto &kt = keys[static_cast<size_t>(t)], &vt = values[static_cast<size_t>(t)];
        kt.assign(static_cast<size_t>(D), 0.0);
        vt.assign(static_cast<size_t>(D), 0.0);
        if (t < pastB)
          for (int64_t d = 0; d < D; ++d) {
            kt[static_cast<size_t>(d)] = loadF(*pastK, at(*pastK, {b, kv, t, d}));
            vt[static_cast<size_t>(d)] = loadF(*pastV, at(*pastV, {b, kv, t, d}));
          }
      }
      for (int64_t s = 0; s < g.seq; ++s) {
        newHead(1, b, s, kv, head);
        if (g.rotary) rotate(head, rotaryDim, g.interleaved, *cosC, *sinC, checkedPosition(k, pastB + s, *cosC), f32);
        keys[static_cast<size_t>(pastB + s)] = head;
        newHead(2, b, s, kv, values[static_cast<size_t>(pastB + s)]);
      }
      for (int64_t t = 0; t < g.presentLen; ++t)
        for (int64_t d = 0; d < D; ++d) {
          storeF(presentK, at(presentK, {b, kv, t, d}), keys[static_cast<size_t>(t)][static_cast<size_t>(d)]);
          storeF(presentV, at(presentV, {b, kv, t, d}), values[static_cast<size_t>(t)][static_cast<size_t>(d)]);
        }
      // Attention of each query head of this group: causal over [0, pastB + s], over its last
      // local_window_size keys (itself included) when a window is set, as onnxruntime 1.30 does.
      for (int64_t h = kv * group; h < (kv + 1) * group; ++h)
        for (int64_t s = 0; s < g.seq; ++s) {
          newHead(0, b, s, h, head);
          if (g.rotary) rotate(head, rotaryDim, g.interleaved, *cosC, *sinC, checkedPosition(k, pastB + s, *cosC), f32);
          const int64_t end = pastB + s + 1;
          const int64_t begin = g.localWindow > 0 ? std::max<int64_t>(0, end - g.localWindow) : 0;
          scores.assign(static_cast<size_t>(end - begin), 0.0);
          double mx = -std::numeric_limits<double>::infinity();
          for (int64_t t = begin; t < end; ++t) {
            double dot = 0;
            for (int64_t d = 0; d < D; ++d)
              dot =
                  step(f32, dot + head[static_cast<size_t>(d)] * keys[static_cast<size_t>(t)][static_cast<size_t>(d)]);
            double sc = step(f32, dot * scale);
            if (g.softcap > 0) sc = step(f32, g.softcap * std::tanh(sc / g.softcap));
            scores[static_cast<size_t>(t - begin)] = sc;
            mx = std::max(mx, sc);
          }
          double sum = 0;
          for (double &sc : scores)
            sum = step(f32, sum + (sc = step(f32, std::exp(step(f32, sc - mx)))));
          for (int64_t d = 0; d < D; ++d) {
            double acc = 0;
            for (int64_t t = begin; t < end; ++t)
              acc = step(f32, acc + scores[static_cast<size_t>(t - begin)] *
                                        values[static_cast<size_t>(t)][static_cast<size_t>(d)]);
            storeF(out, at(out, {b, s, h * D + d}), acc / sum);
          }
        }
    }
  }
}

} // namespace

void addContribKernels(KernelTable &table) {
  table["matmul_nbits"] = kMatMulNBits;
  table["simplified_layer_norm"] = kSimplifiedLayerNorm;
  table["skip_simplified_layer_norm"] = kSkipSimplifiedLayerNorm;
  table["rotary_embedding"] = kRotaryEmbedding;
  table["group_query_attention"] = kGroupQueryAttention;
}

} // namespace dq::rt::sim
