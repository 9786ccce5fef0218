// Generator steps for onnxruntime's com.microsoft contrib ops (docs/fuzz/generator.md,
// shapegen-7): MatMulNBits, RotaryEmbedding and GroupQueryAttention on a float pool value, its
// dynamic dims kept.
#include "GeneratorImpl.h"

#include <cmath>

namespace dynqual::fuzz::gen_detail {

std::vector<std::string> Gen::contribNode(const std::string& op, const std::vector<std::string>& inputs,
                                          const std::vector<onnx::AttributeProto>& attrs, int outputs) {
  if (!contribOpset_) {
    auto* ms = model_.add_opset_import();
    ms->set_domain("com.microsoft");
    ms->set_version(1);
    contribOpset_ = true;
  }
  std::vector<std::string> out = g_.nodeN(op, inputs, outputs, attrs);
  model_.mutable_graph()->mutable_node(model_.graph().node_size() - 1)->set_domain("com.microsoft");
  return out;
}

std::vector<double> Gen::randomFloats(int64_t n, double amplitude) {
  std::vector<double> w(static_cast<size_t>(n));
  for (double& v : w)
    v = amplitude * rng_.symmetric();
  return w;
}

void Gen::rotaryCaches(int64_t positions, int64_t rotaryDim, std::string& cosName, std::string& sinName) {
  const int64_t half = rotaryDim / 2;
  std::vector<double> c, s;
  for (int64_t p = 0; p < positions; ++p)
    for (int64_t k = 0; k < half; ++k) {
      const double angle =
          static_cast<double>(p) * std::pow(10000.0, -2.0 * static_cast<double>(k) / static_cast<double>(rotaryDim));
      c.push_back(std::cos(angle));
      s.push_back(std::sin(angle));
    }
  cosName = floatInit({positions, half}, c);
  sinName = floatInit({positions, half}, s);
}

std::string Gen::floatInit(const std::vector<int64_t>& dims, const std::vector<double>& values) {
  return g_.initializer("w" + std::to_string(consts_++), Tensor::fromDoubles(DType::Float, dims, values));
}

std::optional<Val> Gen::widened(const Val& x, int64_t width, size_t rank) {
  // x itself when it already ends in `width`; else [..., 1] (ReduceSum over the last axis, or an
  // Unsqueeze that adds it) times a constant [width]: the leading (dynamic) dims are x's.
  if (x.dims.size() == rank && x.dims.back().isConstant() && x.dims.back().constantValue() == width)
    return x;
  std::vector<Poly> dims = x.dims;
  std::string ones;
  if (x.dims.size() + 1 == rank) {
    ones = g_.node("Unsqueeze", {x.name, constInts({static_cast<int64_t>(x.dims.size())})});
    dims.push_back(Poly::constant(width));
  } else if (x.dims.size() == rank) {
    ones = g_.node("ReduceSum", {x.name, constInts({-1})}, {intAttr("keepdims", 1)});
    dims.back() = Poly::constant(width);
  } else {
    return std::nullopt;
  }
  if (!fits(dims))
    return std::nullopt;
  return Val{g_.node("Mul", {ones, floatInit({width}, randomFloats(width))}), dims, false, false};
}

bool Gen::matMulNBits(size_t i) {
  const Val x = pool_[i];
  if (x.dims.empty())
    return false;
  // int4, block 16 or 32, K odd with a padded last block (1 to 3 blocks; an odd block count ends
  // a row of packed zero points mid-byte).
  const int64_t bits = 4, block = rng_.chance(0.5) ? 16 : 32;
  const int64_t kBlocks = rng_.range(1, 3);
  const int64_t K = (kBlocks - 1) * block + 2 * rng_.range(0, block / 2 - 1) + 1;
  const int64_t N = rng_.range(2, 8), blob = block * bits / 8;
  const size_t rank = x.dims.size() >= 2 ? x.dims.size() : 2;
  std::optional<Val> a = widened(x, K, rank);
  if (!a)
    return false;
  std::vector<Poly> dims = a->dims;
  dims.back() = Poly::constant(N);
  if (!fits(dims))
    return false;
  std::vector<int64_t> codes(static_cast<size_t>(N * kBlocks * blob));
  for (int64_t& c : codes)
    c = rng_.range(0, 255);
  std::vector<std::string> ins = {a->name, g_.initializer("w" + std::to_string(consts_++),
                                                          Tensor::fromInts(DType::Uint8, {N, kBlocks, blob}, codes))};
  // Scales small enough that a dot of K terms of codes up to 15 stays near 1.
  std::vector<double> scales;
  const double amp = 1.0 / std::sqrt(static_cast<double>(K)) / 8.0;
  for (int64_t k = 0; k < N * kBlocks; ++k)
    scales.push_back(amp * (0.5 + 0.5 * std::fabs(rng_.symmetric())));
  ins.push_back(floatInit({N * kBlocks}, scales));
  const int64_t zp = rng_.range(0, 9); // 0-3 none (default 8), 4-7 packed uint8, 8-9 float
  if (zp >= 4 && zp <= 7) {
    std::vector<int64_t> z(static_cast<size_t>(N * ((kBlocks * bits + 7) / 8)));
    for (int64_t& v : z)
      v = rng_.range(0, 255);
    ins.push_back(g_.initializer("w" + std::to_string(consts_++),
                                 Tensor::fromInts(DType::Uint8, {static_cast<int64_t>(z.size())}, z)));
  } else if (zp >= 8) {
    std::vector<double> z;
    for (int64_t k = 0; k < N * kBlocks; ++k)
      z.push_back(static_cast<double>(rng_.range(0, 15)) + 0.5 * rng_.symmetric());
    ins.push_back(floatInit({N, kBlocks}, z));
  }
  std::string name = contribNode(
      "MatMulNBits", ins, {intAttr("K", K), intAttr("N", N), intAttr("bits", bits), intAttr("block_size", block)})[0];
  use(i);
  add(name, dims);
  return true;
}

bool Gen::rotaryEmbedding(size_t i) {
  const Val x = pool_[i];
  if (x.dims.size() != 2 && x.dims.size() != 3)
    return false;
  // [batch, sequence, heads * head]: head 4 or 8, 1 or 2 heads, sometimes a partial rotary dim.
  const int64_t head = rng_.chance(0.5) ? 4 : 8, heads = rng_.range(1, 2), hidden = head * heads;
  std::optional<Val> in = widened(x, hidden, 3);
  if (!in)
    return false;
  const int64_t rotaryDim = head == 8 && rng_.chance(0.5) ? 4 : head;
  const bool withHeads = rotaryDim != head || rng_.chance(0.5);
  // position_ids [1] (token s at p0 + s); the caches hold every position a binding can reach.
  const int64_t p0 = rng_.range(0, 3), maxSeq = in->dims[1].maxValue(atoms_);
  if (maxSeq > 4096)
    return false;
  std::string cosC, sinC;
  rotaryCaches(p0 + std::max<int64_t>(maxSeq, 1), rotaryDim, cosC, sinC);
  std::vector<onnx::AttributeProto> attrs = {intAttr("interleaved", rng_.chance(0.5) ? 1 : 0)};
  if (withHeads)
    attrs.push_back(intAttr("num_heads", heads));
  if (rotaryDim != head)
    attrs.push_back(intAttr("rotary_embedding_dim", rotaryDim));
  std::string name = contribNode("RotaryEmbedding", {in->name, constInts({p0}), cosC, sinC}, attrs)[0];
  use(i);
  add(name, in->dims);
  return true;
}

bool Gen::groupQueryAttention(size_t i) {
  const Val x = pool_[i];
  if (x.dims.size() != 2)
    return false;
  // x [B, a]: batch B, and a is the prompt length (S = total = a), the past length of a decode
  // (S = 1, total = a + 1), or the length of the builder's shared past/present buffer (S = 1,
  // total = a: the valid tokens end before the buffer does). Prompt and shared buffer need a >= 1
  // on every binding. kv_num_heads 1 or 2, num_heads 1 or 2 times that, head 4 or 8.
  enum Mode { Prompt, Decode, Shared };
  const bool dynamicLen = !x.dims[1].isConstant(), lenAtLeast1 = x.dims[1].minValue(atoms_) >= 1;
  const int64_t draw = rng_.range(0, 19);
  Mode mode = !dynamicLen ? Prompt : draw < 7 ? Prompt : draw < 15 ? Decode : Shared;
  if (mode == Shared && !lenAtLeast1)
    mode = Decode;
  if (mode == Prompt && !lenAtLeast1)
    return false;
  const int64_t kv = rng_.range(1, 2), heads = kv * rng_.range(1, 2), head = rng_.chance(0.5) ? 4 : 8;
  const bool packed = rng_.chance(0.5), rotary = rng_.chance(0.5);
  const int64_t maxLen = x.dims[1].maxValue(atoms_) + 1;
  if (maxLen > 4096)
    return false;
  const Poly total = mode == Decode ? x.dims[1] + Poly::constant(1) : x.dims[1];
  std::vector<Poly> qDims = {x.dims[0], mode == Prompt ? x.dims[1] : Poly::constant(1), Poly::constant(heads * head)};
  // present: [B, kv, max(total, past), head]; past is a (or none) and total >= a but in Shared.
  std::vector<Poly> cacheDims = {x.dims[0], Poly::constant(kv), total, Poly::constant(head)};
  if (!fits(cacheDims) || !fits({x.dims[0], qDims[1], Poly::constant((heads + 2 * kv) * head)}))
    return false;
  // [B, S, 1]: the row sums (one new token) or x itself (prompt), widened by constant rows.
  std::string col =
      mode != Prompt ? g_.node("Unsqueeze", {g_.node("ReduceSum", {x.name, constInts({1})}, {intAttr("keepdims", 1)}),
                                             constInts({2})})
                     : g_.node("Unsqueeze", {x.name, constInts({2})});
  auto widen = [&](int64_t width) { return g_.node("Mul", {col, floatInit({width}, randomFloats(width))}); };
  std::vector<std::string> ins;
  if (packed)
    ins = {widen((heads + 2 * kv) * head), "", ""};
  else
    ins = {widen(heads * head), widen(kv * head), widen(kv * head)};
  if (mode != Prompt) {
    // past_key [B, kv, a, head]: x's rows [B, 1, a, 1] times a constant [kv, 1, head];
    // past_value past_key times another. Computed from past_key (not from x a second time), so
    // the minimizer can promote past_key and keep past_value's dims equal to it (two promoted
    // inputs would get independent dims, which GQA rejects).
    std::string rows = g_.node("Unsqueeze", {x.name, constInts({1, 3})});
    std::string pastK = g_.node("Mul", {rows, floatInit({kv, 1, head}, randomFloats(kv * head))});
    ins.push_back(pastK);
    ins.push_back(g_.node("Mul", {pastK, floatInit({kv, 1, head}, randomFloats(kv * head))}));
  } else {
    ins.insert(ins.end(), {"", ""});
  }
  // total_sequence_length from Shape; seqlens_k[b] = total - 1 - pad[b], at least 0, where
  // pad[b] = (sum of x's row b > 0) from data: padded rows beside full ones. In [0, total), and
  // the past it implies (seqlens_k + 1 - S after a past) fits the past buffer a.
  std::string a = gatherDim(x, 1);
  std::string totalI64 = mode == Decode ? g_.node("Add", {a, constInts({1})}) : a;
  std::string rowSum = g_.node("ReduceSum", {x.name, constInts({1})}, {intAttr("keepdims", 0)});
  std::string pad =
      g_.node("Cast", {g_.node("Greater", {rowSum, g_.floatScalar("w" + std::to_string(consts_++), 0.0)})},
              {intAttr("to", onnx::TensorProto::INT64)});
  std::string last = g_.node("Sub", {totalI64, constInts({1})});
  std::string seqlens = g_.node("Max", {g_.node("Sub", {last, pad}), constInts({0})});
  ins.push_back(g_.node("Cast", {seqlens}, {intAttr("to", onnx::TensorProto::INT32)}));
  ins.push_back(
      g_.node("Cast", {g_.node("Squeeze", {totalI64, constInts({0})})}, {intAttr("to", onnx::TensorProto::INT32)}));
  std::vector<onnx::AttributeProto> attrs = {intAttr("num_heads", heads), intAttr("kv_num_heads", kv)};
  if (rotary) {
    std::string cosC, sinC;
    rotaryCaches(maxLen, head, cosC, sinC);
    ins.push_back(cosC);
    ins.push_back(sinC);
    attrs.push_back(intAttr("do_rotary", 1));
    attrs.push_back(intAttr("rotary_interleaved", rng_.chance(0.5) ? 1 : 0));
  }
  std::vector<std::string> outs = contribNode("GroupQueryAttention", ins, attrs, 3);
  use(i);
  add(outs[0], qDims);
  add(outs[1], cacheDims);
  return true;
}

} // namespace dynqual::fuzz::gen_detail
