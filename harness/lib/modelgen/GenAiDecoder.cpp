// The builder-layout int4 decoder (GenAiDecoder.h).
#include "dynqual/modelgen/GenAiDecoder.h"

#include "dynqual/modelgen/ContribCases.h"
#include "dynqual/modelgen/GraphBuilder.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fs = std::filesystem;

namespace dynqual::modelgen {
namespace {

constexpr int kI64 = onnx::TensorProto::INT64;
constexpr int kI32 = onnx::TensorProto::INT32;

/// Appends a node named like the builder's ("/model/layers.0/attn/qkv_proj/MatMul") whose
/// outputs are "<name>/output_<i>" unless given; returns the output names.
struct Graph {
  onnx::GraphProto& g;
  std::vector<std::string> add(const std::string& op, const std::string& name, const std::vector<std::string>& inputs,
                               int outputs, const std::vector<onnx::AttributeProto>& attrs = {},
                               const std::string& domain = "", const std::vector<std::string>& outNames = {}) {
    onnx::NodeProto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(name);
    n->set_domain(domain);
    for (const auto& i : inputs)
      n->add_input(i);
    std::vector<std::string> outs;
    for (int i = 0; i < outputs; ++i) {
      outs.push_back(i < static_cast<int>(outNames.size()) ? outNames[static_cast<std::size_t>(i)]
                                                           : name + "/output_" + std::to_string(i));
      n->add_output(outs.back());
    }
    for (const auto& a : attrs)
      *n->add_attribute() = a;
    return outs;
  }
  std::string initializer(const std::string& name, const Tensor& t) {
    GraphBuilder b(g);
    return b.initializer(name, t);
  }
};

/// Blockwise 4-bit round-to-nearest of W [N, K] (row n holds output n's K weights): per block,
/// symmetric scale = max|w| / 7 with the default zero point 8, or asymmetric scale = (max - min) /
/// 15 and zero point round(-min / scale). Returns B [N, k_blocks, block/2], scales and the packed
/// zero points (empty when symmetric).
struct Quantized {
  Tensor b, scales, zeroPoints;
};

Quantized quantize(const std::vector<double>& w, int64_t N, int64_t K, int64_t block, bool asymmetric, DType ft) {
  const int64_t kBlocks = (K + block - 1) / block, blob = block / 2, zpRow = (kBlocks + 1) / 2;
  std::vector<int64_t> bytes(static_cast<std::size_t>(N * kBlocks * blob), 0), zps;
  if (asymmetric)
    zps.assign(static_cast<std::size_t>(N * zpRow), 0);
  std::vector<double> scales;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t kb = 0; kb < kBlocks; ++kb) {
      double lo = 0, hi = 0, amax = 0;
      for (int64_t i = 0; i < block && kb * block + i < K; ++i) {
        const double x = w[static_cast<std::size_t>(n * K + kb * block + i)];
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        amax = std::max(amax, std::fabs(x));
      }
      double scale = asymmetric ? (hi - lo) / 15.0 : amax / 7.0;
      if (scale == 0)
        scale = 1;
      // The scale as stored (fp16 rounds it), so the codes round against the value the kernel reads.
      scale = Tensor::fromDoubles(ft, {1}, {scale}).getDouble(0);
      const int64_t zero = asymmetric ? std::clamp<int64_t>(std::llround(-lo / scale), 0, 15) : 8;
      scales.push_back(scale);
      if (asymmetric)
        zps[static_cast<std::size_t>(n * zpRow + kb / 2)] |= zero << (4 * (kb % 2));
      for (int64_t i = 0; i < block && kb * block + i < K; ++i) {
        const double x = w[static_cast<std::size_t>(n * K + kb * block + i)];
        const int64_t code = std::clamp<int64_t>(std::llround(x / scale) + zero, 0, 15);
        bytes[static_cast<std::size_t>((n * kBlocks + kb) * blob + i / 2)] |= code << (4 * (i % 2));
      }
    }
  Quantized q{Tensor::fromInts(DType::Uint8, {N, kBlocks, blob}, bytes), Tensor::fromDoubles(ft, {N * kBlocks}, scales),
              Tensor()};
  if (asymmetric)
    q.zeroPoints = Tensor::fromInts(DType::Uint8, {N * zpRow}, zps);
  return q;
}

} // namespace

GenAiDecoderSpec genAiDecoderPreset(const std::string& name) {
  if (name == "tiny")
    return GenAiDecoderSpec{};
  throw std::invalid_argument("unknown genai-decoder preset '" + name + "' (tiny)");
}

void validate(const GenAiDecoderSpec& s) {
  for (auto [v, field] : {std::pair<int64_t, const char*>{s.layers, "layers"},
                          {s.hidden, "hidden"},
                          {s.heads, "heads"},
                          {s.kvHeads, "kv-heads"},
                          {s.mlp, "mlp"},
                          {s.vocab, "vocab"},
                          {s.maxPositions, "max positions"},
                          {s.blockSize, "block size"}})
    if (v < 1)
      throw std::invalid_argument(std::string("--") + field + " must be >= 1");
  if (s.hidden % s.heads != 0)
    throw std::invalid_argument("--hidden must be a multiple of --heads");
  if (s.heads % s.kvHeads != 0)
    throw std::invalid_argument("--heads must be a multiple of --kv-heads");
  if ((s.hidden / s.heads) % 2 != 0 || s.hidden % 2 != 0 || s.mlp % 2 != 0)
    throw std::invalid_argument("the head size, --hidden and --mlp must be even");
}

onnx::ModelProto buildGenAiDecoder(const GenAiDecoderSpec& s) {
  validate(s);
  const DType ft = s.float16 ? DType::Float16 : DType::Float;
  const int fe = s.float16 ? onnx::TensorProto::FLOAT16 : onnx::TensorProto::FLOAT;
  const int64_t H = s.hidden, D = s.hidden / s.heads, KV = s.kvHeads * D, F = s.mlp;
  Random rng(s.seed);
  auto weights = [&](int64_t n, int64_t k) {
    std::vector<double> v(static_cast<std::size_t>(n * k));
    const double scale = 1.0 / std::sqrt(static_cast<double>(k));
    for (double& x : v)
      x = rng.symmetric() * scale;
    return v;
  };
  auto gain = [&](int64_t n) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (double& x : v)
      x = 1.0 + 0.25 * rng.symmetric();
    return Tensor::fromDoubles(ft, {n}, v);
  };

  onnx::ModelProto model = newModel("dynqual make-model genai-decoder", 21);
  auto* ms = model.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  onnx::GraphProto& gp = *model.mutable_graph();
  gp.set_name("main_graph");
  Graph g{gp};
  declare(gp.add_input(), "input_ids", kI64, {"batch_size", "sequence_length"}, {0, 0});
  declare(gp.add_input(), "attention_mask", kI64, {"batch_size", "total_sequence_length"}, {0, 0});
  for (int64_t l = 0; l < s.layers; ++l)
    for (const char* kv : {"key", "value"})
      declare(gp.add_input(), "past_key_values." + std::to_string(l) + "." + kv, fe,
              {"batch_size", "", "past_sequence_length", ""}, {0, s.kvHeads, 0, D});
  declare(gp.add_output(), "logits", fe, {"batch_size", "sequence_length", ""}, {0, 0, s.vocab});
  for (int64_t l = 0; l < s.layers; ++l)
    for (const char* kv : {"key", "value"})
      declare(gp.add_output(), "present." + std::to_string(l) + "." + kv, fe,
              {"batch_size", "", "total_sequence_length", ""}, {0, s.kvHeads, 0, D});

  // seqlens_k = ReduceSum(attention_mask, axis 1) - 1 as int32 [batch, 1]; total_sequence_length =
  // Shape(attention_mask)[1] as an int32 scalar: the builder's attn_mask_reformat subgraph.
  const std::string sub = "/model/attn_mask_reformat/attn_mask_subgraph";
  const std::string one = g.initializer(sub + "/One", Tensor::fromInts(DType::Int64, {}, {1}));
  const std::string axes = g.initializer(sub + "/ReduceSum/axes", Tensor::fromInts(DType::Int64, {1}, {1}));
  const std::string sum =
      g.add("ReduceSum", sub + "/ReduceSum", {"attention_mask", axes}, 1, {intAttr("keepdims", 1)})[0];
  const std::string minus = g.add("Sub", sub + "/Sub", {sum, one}, 1)[0];
  const std::string seqlens = g.add("Cast", sub + "/Sub/Cast", {minus}, 1, {intAttr("to", kI32)})[0];
  const std::string shape = g.add("Shape", sub + "/Shape", {"attention_mask"}, 1)[0];
  const std::string totalI64 = g.add("Gather", sub + "/Gather", {shape, one}, 1, {intAttr("axis", 0)})[0];
  const std::string total = g.add("Cast", sub + "/Gather/Cast", {totalI64}, 1, {intAttr("to", kI32)})[0];

  // cos/sin caches of the rotary angles pos * 10000^(-2i/D).
  std::vector<double> c, sn;
  for (int64_t p = 0; p < s.maxPositions; ++p)
    for (int64_t i = 0; i < D / 2; ++i) {
      const double a =
          static_cast<double>(p) * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(D));
      c.push_back(std::cos(a));
      sn.push_back(std::sin(a));
    }
  const std::string cosCache = g.initializer("cos_cache", Tensor::fromDoubles(ft, {s.maxPositions, D / 2}, c));
  const std::string sinCache = g.initializer("sin_cache", Tensor::fromDoubles(ft, {s.maxPositions, D / 2}, sn));

  // A MatMulNBits of `in` by a fresh [N, K] weight, named like the builder's.
  auto linear = [&](const std::string& in, const std::string& prefix, const std::string& weightName, int64_t N,
                    int64_t K, const std::vector<std::string>& outNames = {}) {
    Quantized q = quantize(weights(N, K), N, K, s.blockSize, s.asymmetric, ft);
    std::vector<std::string> ins = {in, g.initializer(weightName + ".weight_Q4", q.b),
                                    g.initializer(weightName + ".scales", q.scales)};
    if (s.asymmetric)
      ins.push_back(g.initializer(weightName + ".qzeros", q.zeroPoints));
    return g.add("MatMulNBits", prefix + "/MatMul", ins, 1,
                 {intAttr("K", K), intAttr("N", N), intAttr("bits", 4), intAttr("block_size", s.blockSize),
                  intAttr("accuracy_level", 4)},
                 "com.microsoft", outNames)[0];
  };

  std::vector<double> embed(static_cast<std::size_t>(s.vocab * H));
  for (double& x : embed)
    x = rng.symmetric();
  std::string x =
      g.add("Gather", "/model/embed_tokens/Gather",
            {g.initializer("model.embed_tokens.weight", Tensor::fromDoubles(ft, {s.vocab, H}, embed)), "input_ids"}, 1,
            {intAttr("axis", 0)})[0];
  std::string residual = x, h;
  const float eps = 1e-5f;
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string L = "/model/layers." + std::to_string(l), W = "model.layers." + std::to_string(l);
    if (l == 0) {
      h = g.add("SimplifiedLayerNormalization", L + "/input_layernorm/LayerNorm",
                {x, g.initializer(W + ".input_layernorm.weight", gain(H))}, 1,
                {intAttr("axis", -1), floatAttr("epsilon", eps), intAttr("stash_type", 1)})[0];
    } else {
      // The builder's order: the residual stream first, the sublayer's output second; the outputs
      // are named after the norm ("/model/layers.1/input_layernorm/output_3").
      auto o =
          g.add("SkipSimplifiedLayerNormalization", L + "/input_layernorm/SkipLayerNorm",
                {residual, x, g.initializer(W + ".input_layernorm.weight", gain(H))}, 4, {floatAttr("epsilon", eps)},
                "com.microsoft", {L + "/input_layernorm/output_0", "", "", L + "/input_layernorm/output_3"});
      h = o[0];
      residual = o[3];
    }
    const std::string qkv = linear(h, L + "/attn/qkv_proj", W + ".attn.qkv_proj", H + 2 * KV, H);
    const std::string past = "past_key_values." + std::to_string(l);
    const std::string present = "present." + std::to_string(l);
    const std::string attn = g.add(
        "GroupQueryAttention", L + "/attn/GroupQueryAttention",
        {qkv, "", "", past + ".key", past + ".value", seqlens, total, cosCache, sinCache}, 3,
        {intAttr("num_heads", s.heads), intAttr("kv_num_heads", s.kvHeads), intAttr("do_rotary", 1),
         intAttr("rotary_interleaved", 0), intAttr("local_window_size", -1),
         floatAttr("scale", static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)))), floatAttr("softcap", 0.0f)},
        "com.microsoft", {L + "/attn/GroupQueryAttention/output_0", present + ".key", present + ".value"})[0];
    const std::string o = linear(attn, L + "/attn/o_proj", W + ".attn.o_proj", H, H);
    auto post = g.add("SkipSimplifiedLayerNormalization", L + "/post_attention_layernorm/SkipLayerNorm",
                      {residual, o, g.initializer(W + ".post_attention_layernorm.weight", gain(H))}, 4,
                      {floatAttr("epsilon", eps)}, "com.microsoft",
                      {L + "/post_attention_layernorm/output_0", "", "", L + "/post_attention_layernorm/output_3"});
    residual = post[3];
    const std::string gate = linear(post[0], L + "/mlp/gate_proj", W + ".mlp.gate_proj", F, H);
    const std::string up = linear(post[0], L + "/mlp/up_proj", W + ".mlp.up_proj", F, H);
    const std::string sig = g.add("Sigmoid", L + "/mlp/act_fn/Sigmoid", {gate}, 1)[0];
    const std::string act = g.add("Mul", L + "/mlp/act_fn/Mul", {gate, sig}, 1)[0];
    const std::string prod = g.add("Mul", L + "/mlp/Mul", {act, up}, 1)[0];
    x = linear(prod, L + "/mlp/down_proj", W + ".mlp.down_proj", H, F);
  }
  // The final norm is numbered as a layer past the last, as the builder numbers it.
  const std::string last = std::to_string(s.layers);
  auto fin =
      g.add("SkipSimplifiedLayerNormalization", "/model/layers." + last + "/final_norm_layernorm/SkipLayerNorm",
            {residual, x, g.initializer("model.layers." + last + ".final_norm_layernorm.weight", gain(H))}, 1,
            {floatAttr("epsilon", eps)}, "com.microsoft", {"/model/layers." + last + "/final_norm_layernorm/output_0"});
  linear(fin[0], "/lm_head", "lm_head", s.vocab, H, {"logits"});
  return model;
}

std::vector<Tensor> genAiDecoderInputs(const GenAiDecoderSpec& s, int64_t batch, int64_t seq, int64_t past,
                                       const std::vector<int64_t>& validTokens, uint64_t seed) {
  validate(s);
  Random rng(seed);
  const DType ft = s.float16 ? DType::Float16 : DType::Float;
  const int64_t D = s.hidden / s.heads, total = past + seq;
  std::vector<int64_t> ids(static_cast<std::size_t>(batch * seq)), mask;
  for (auto& id : ids)
    id = rng.range(0, s.vocab - 1);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t valid =
        b < static_cast<int64_t>(validTokens.size()) ? validTokens[static_cast<std::size_t>(b)] : total;
    for (int64_t t = 0; t < total; ++t)
      mask.push_back(t < valid ? 1 : 0);
  }
  std::vector<Tensor> in = {Tensor::fromInts(DType::Int64, {batch, seq}, ids),
                            Tensor::fromInts(DType::Int64, {batch, total}, mask)};
  for (int64_t l = 0; l < 2 * s.layers; ++l) {
    std::vector<double> v(static_cast<std::size_t>(batch * s.kvHeads * past * D));
    for (double& x : v)
      x = rng.symmetric();
    in.push_back(Tensor::fromDoubles(ft, {batch, s.kvHeads, past, D}, v));
  }
  return in;
}

void writeGenAiDecoder(const GenAiDecoderSpec& s, const fs::path& dir) {
  ContribCase c{dir.filename().string(), "decoder", buildGenAiDecoder(s), {}};
  // A 4-token prompt; a decode step after 4 cached tokens; a padded batch decode step (row 1
  // holds 2 of its 4 positions: seqlens_k 1, its past one row).
  c.inputSets.push_back(genAiDecoderInputs(s, 1, 4, 0, {}, s.seed + 100));
  c.inputSets.push_back(genAiDecoderInputs(s, 1, 1, 4, {}, s.seed + 101));
  c.inputSets.push_back(genAiDecoderInputs(s, 2, 1, 3, {4, 2}, s.seed + 102));
  writeContribCase(c, dir);
}

} // namespace dynqual::modelgen
