// The contrib-op conformance table and hip-ep's single-op L2 models (ContribCases.h).
#include "dynqual/modelgen/ContribCases.h"

#include "dynqual/modelgen/GraphBuilder.h"
#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/reference/Interpreter.h"

#include <cmath>
#include <functional>
#include <stdexcept>

namespace fs = std::filesystem;

namespace dynqual::modelgen {
namespace {

constexpr int kF32 = onnx::TensorProto::FLOAT;
constexpr int kF16 = onnx::TensorProto::FLOAT16;
constexpr int kI32 = onnx::TensorProto::INT32;
constexpr int kI64 = onnx::TensorProto::INT64;

/// A model with opsets {"": 21, com.microsoft: 1}, as ORT GenAI's builder writes them.
onnx::ModelProto contribModel() {
  onnx::ModelProto m = newModel("dynqual make-model contrib-cases", 21);
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  return m;
}

/// Appends the case's one node (named after the op) in `domain`.
void addOpNode(onnx::GraphProto& g, const std::string& op, const std::string& domain,
               const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
               const std::vector<onnx::AttributeProto>& attrs) {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  n->set_domain(domain);
  n->set_name(op + "_0");
  for (const auto& i : inputs)
    n->add_input(i);
  for (const auto& o : outputs)
    n->add_output(o);
  for (const auto& a : attrs)
    *n->add_attribute() = a;
}

Tensor randomFloats(Random& r, DType t, const std::vector<int64_t>& dims, double amplitude = 1.0) {
  std::vector<double> v(static_cast<std::size_t>(shapeNumel(dims)));
  for (double& x : v)
    x = amplitude * r.symmetric();
  return Tensor::fromDoubles(t, dims, v);
}

Tensor randomBytes(Random& r, const std::vector<int64_t>& dims) {
  std::vector<int64_t> v(static_cast<std::size_t>(shapeNumel(dims)));
  for (int64_t& x : v)
    x = r.range(0, 255);
  return Tensor::fromInts(DType::Uint8, dims, v);
}

/// cos/sin caches [positions, rotaryDim / 2] of the usual rotary angles pos * 10000^(-2i/d).
std::pair<Tensor, Tensor> rotaryCaches(DType t, int64_t positions, int64_t rotaryDim) {
  const int64_t half = rotaryDim / 2;
  std::vector<double> c, s;
  for (int64_t p = 0; p < positions; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(p) * std::pow(10000.0, -2.0 * static_cast<double>(i) / rotaryDim);
      c.push_back(std::cos(angle));
      s.push_back(std::sin(angle));
    }
  return {Tensor::fromDoubles(t, {positions, half}, c), Tensor::fromDoubles(t, {positions, half}, s)};
}

//===--- MatMulNBits ---------------------------------------------------------===//

struct NBitsShape {
  int64_t bits, block, K, N;
  int zp; ///< 0 none, 1 packed uint8, 2 A's dtype
  bool f16, bias, rank2;
};

std::string nbitsName(const NBitsShape& s) {
  static const char* zp[] = {"zp-none", "zp-packed", "zp-float"};
  return "MatMulNBits_b" + std::to_string(s.bits) + "_blk" + std::to_string(s.block) + "_K" + std::to_string(s.K) +
         "_N" + std::to_string(s.N) + "_" + zp[s.zp] + (s.f16 ? "_f16" : "_f32") + (s.bias ? "_bias" : "") +
         (s.rank2 ? "_rank2" : "");
}

ContribCase nbitsCase(const NBitsShape& s, uint64_t seed, const std::string& name,
                      const std::vector<std::vector<int64_t>>& rowShapes) {
  Random r(seed);
  const DType ft = s.f16 ? DType::Float16 : DType::Float;
  const int fe = s.f16 ? kF16 : kF32;
  const int64_t kBlocks = (s.K + s.block - 1) / s.block, blob = s.block * s.bits / 8;
  ContribCase c{name, "MatMulNBits", contribModel(), {}};
  onnx::GraphProto& g = *c.model.mutable_graph();
  GraphBuilder gb(g);
  const std::vector<std::string> aDims =
      s.rank2 ? std::vector<std::string>{"rows", ""} : std::vector<std::string>{"batch", "seq", ""};
  std::vector<int64_t> aSizes(aDims.size(), 0);
  aSizes.back() = s.K;
  declare(g.add_input(), "A", fe, aDims, aSizes);
  std::vector<int64_t> ySizes = aSizes;
  ySizes.back() = s.N;
  declare(g.add_output(), "Y", fe, aDims, ySizes);
  // Random codes (the padded tail of the last block included: it must never be read) and
  // scales small enough that a dot of K terms stays in fp16's range.
  std::vector<std::string> ins = {gb.initializer("B", randomBytes(r, {s.N, kBlocks, blob}))};
  const double scaleAmp = 1.0 / std::sqrt(static_cast<double>(s.K)) / static_cast<double>(1 << (s.bits - 1));
  std::vector<double> scales;
  for (int64_t i = 0; i < s.N * kBlocks; ++i)
    scales.push_back(scaleAmp * (0.5 + 0.5 * std::fabs(r.symmetric())));
  ins.push_back(gb.initializer("scales", Tensor::fromDoubles(ft, {s.N * kBlocks}, scales)));
  if (s.zp == 1) {
    ins.push_back(gb.initializer("zero_points", randomBytes(r, {s.N * ((kBlocks * s.bits + 7) / 8)})));
  } else if (s.zp == 2) {
    std::vector<double> z;
    for (int64_t i = 0; i < s.N * kBlocks; ++i)
      z.push_back(static_cast<double>(r.range(0, (1 << s.bits) - 1)) + 0.5 * r.symmetric());
    ins.push_back(gb.initializer("zero_points", Tensor::fromDoubles(ft, {s.N, kBlocks}, z)));
  } else if (s.bias) {
    ins.push_back("");
  }
  if (s.bias) {
    ins.push_back("");
    ins.push_back(gb.initializer("bias", randomFloats(r, ft, {s.N}, 0.5)));
  }
  ins.insert(ins.begin(), "A");
  addOpNode(g, "MatMulNBits", "com.microsoft", ins, {"Y"},
            {intAttr("K", s.K), intAttr("N", s.N), intAttr("bits", s.bits), intAttr("block_size", s.block),
             intAttr("accuracy_level", 4)});
  for (std::vector<int64_t> rows : rowShapes) {
    if (s.rank2)
      rows = {shapeNumel(rows)};
    rows.push_back(s.K);
    c.inputSets.push_back({randomFloats(r, ft, rows)});
  }
  return c;
}

void addNBitsCases(std::vector<ContribCase>& out, uint64_t seed) {
  int i = 0;
  for (int64_t bits : {2, 4, 8})
    for (int64_t block : {16, 32, 64, 128})
      for (bool padded : {false, true})
        for (int zp : {0, 1, 2})
          for (bool f16 : {false, true}) {
            if (bits == 8 && zp == 2)
              continue; // onnxruntime's CPU kernel takes float zero points at 2 and 4 bits only
            NBitsShape s{bits,       block,     padded ? block + 7 : 2 * block, 12 + 4 * (i % 3), zp, f16,
                         i % 3 == 1, i % 4 == 0};
            out.push_back(nbitsCase(s, seed + static_cast<uint64_t>(i), nbitsName(s), {{1, 1}, {2, 3}}));
            ++i;
          }
}

//===--- GroupQueryAttention -------------------------------------------------===//

enum class GqaMode { Prompt, Decode, SharedBuffer, ContinuedPrompt };

struct GqaShape {
  int64_t heads, kvHeads, D;
  bool packed;
  int rotary; ///< 0 none, 1 half-split, 2 interleaved
  GqaMode mode;
  int64_t window = -1;
  float softcap = 0, scale = 0;
  bool f16 = false;
};

/// One input set's sizes: batch, new tokens S, past buffer length, and seqlens_k per row.
struct GqaBinding {
  int64_t batch, seq, pastLen;
  std::vector<int64_t> seqlens;
  int64_t total;
};

std::vector<GqaBinding> gqaBindings(GqaMode mode) {
  switch (mode) {
  case GqaMode::Prompt: // S == total; row 1 of the second set is padded (2 of 3 tokens)
    return {{1, 5, 0, {4}, 5}, {2, 3, 0, {2, 1}, 3}};
  case GqaMode::Decode: // past exactly the valid tokens; a padded row; an empty past
    return {{1, 1, 4, {4}, 5}, {2, 1, 3, {3, 1}, 4}, {1, 1, 0, {0}, 1}};
  case GqaMode::SharedBuffer: // the builder's fixed-size past/present buffer of 8 rows
    return {{1, 1, 8, {3}, 4}, {2, 1, 8, {5, 2}, 6}};
  case GqaMode::ContinuedPrompt: // S > 1 new tokens after a past; onnxruntime allows it at batch 1 only
    return {{1, 3, 2, {4}, 5}, {1, 2, 3, {3}, 5}};
  }
  return {};
}

const char* gqaModeName(GqaMode m) {
  switch (m) {
  case GqaMode::Prompt:
    return "prompt";
  case GqaMode::Decode:
    return "decode";
  case GqaMode::SharedBuffer:
    return "shared-buffer";
  case GqaMode::ContinuedPrompt:
    return "continued-prompt";
  }
  return "?";
}

ContribCase gqaCase(const GqaShape& s, uint64_t seed, const std::string& name, const std::vector<GqaBinding>& sets,
                    int64_t cachePositions = 16) {
  Random r(seed);
  const DType ft = s.f16 ? DType::Float16 : DType::Float;
  const int fe = s.f16 ? kF16 : kF32;
  const bool hasPast = s.mode != GqaMode::Prompt;
  ContribCase c{name, "GroupQueryAttention", contribModel(), {}};
  onnx::GraphProto& g = *c.model.mutable_graph();
  GraphBuilder gb(g);
  const int64_t qWidth = (s.packed ? s.heads + 2 * s.kvHeads : s.heads) * s.D;
  declare(g.add_input(), "query", fe, {"batch", "seq", ""}, {0, 0, qWidth});
  std::vector<std::string> ins = {"query"};
  if (s.packed) {
    ins.insert(ins.end(), {"", ""});
  } else {
    declare(g.add_input(), "key", fe, {"batch", "seq", ""}, {0, 0, s.kvHeads * s.D});
    declare(g.add_input(), "value", fe, {"batch", "seq", ""}, {0, 0, s.kvHeads * s.D});
    ins.insert(ins.end(), {"key", "value"});
  }
  if (hasPast) {
    declare(g.add_input(), "past_key", fe, {"batch", "", "past", ""}, {0, s.kvHeads, 0, s.D});
    declare(g.add_input(), "past_value", fe, {"batch", "", "past", ""}, {0, s.kvHeads, 0, s.D});
    ins.insert(ins.end(), {"past_key", "past_value"});
  } else {
    ins.insert(ins.end(), {"", ""});
  }
  declare(g.add_input(), "seqlens_k", kI32, {"batch"}, {0});
  declare(g.add_input(), "total_sequence_length", kI32, {}, {});
  ins.insert(ins.end(), {"seqlens_k", "total_sequence_length"});
  if (s.rotary != 0) {
    auto [cosC, sinC] = rotaryCaches(ft, cachePositions, s.D);
    ins.push_back(gb.initializer("cos_cache", cosC));
    ins.push_back(gb.initializer("sin_cache", sinC));
  }
  declare(g.add_output(), "output", fe, {"batch", "seq", ""}, {0, 0, s.heads * s.D});
  declare(g.add_output(), "present_key", fe, {"batch", "", "present", ""}, {0, s.kvHeads, 0, s.D});
  declare(g.add_output(), "present_value", fe, {"batch", "", "present", ""}, {0, s.kvHeads, 0, s.D});
  std::vector<onnx::AttributeProto> attrs = {intAttr("num_heads", s.heads), intAttr("kv_num_heads", s.kvHeads)};
  if (s.rotary != 0) {
    attrs.push_back(intAttr("do_rotary", 1));
    attrs.push_back(intAttr("rotary_interleaved", s.rotary == 2 ? 1 : 0));
  }
  if (s.window > 0)
    attrs.push_back(intAttr("local_window_size", s.window));
  if (s.softcap > 0)
    attrs.push_back(floatAttr("softcap", s.softcap));
  if (s.scale > 0)
    attrs.push_back(floatAttr("scale", s.scale));
  addOpNode(g, "GroupQueryAttention", "com.microsoft", ins, {"output", "present_key", "present_value"}, attrs);
  for (const GqaBinding& b : sets) {
    std::vector<Tensor> in = {randomFloats(r, ft, {b.batch, b.seq, qWidth})};
    if (!s.packed) {
      in.push_back(randomFloats(r, ft, {b.batch, b.seq, s.kvHeads * s.D}));
      in.push_back(randomFloats(r, ft, {b.batch, b.seq, s.kvHeads * s.D}));
    }
    if (hasPast) {
      in.push_back(randomFloats(r, ft, {b.batch, s.kvHeads, b.pastLen, s.D}));
      in.push_back(randomFloats(r, ft, {b.batch, s.kvHeads, b.pastLen, s.D}));
    }
    in.push_back(Tensor::fromInts(DType::Int32, {b.batch}, b.seqlens));
    in.push_back(Tensor::fromInts(DType::Int32, {}, {b.total}));
    c.inputSets.push_back(std::move(in));
  }
  return c;
}

void addGqaCases(std::vector<ContribCase>& out, uint64_t seed) {
  struct Heads {
    int64_t heads, kv, D;
  };
  int i = 0;
  // Head sizes are multiples of 16: onnxruntime's CPU rotary requires it.
  for (Heads h : {Heads{2, 1, 16}, Heads{4, 2, 16}, Heads{2, 2, 32}})
    for (bool packed : {false, true})
      for (int rotary : {0, 1, 2})
        for (GqaMode mode : {GqaMode::Prompt, GqaMode::Decode, GqaMode::SharedBuffer, GqaMode::ContinuedPrompt}) {
          GqaShape s{h.heads, h.kv, h.D, packed, rotary, mode};
          s.window = i % 5 == 1 ? 2 : -1;
          s.softcap = i % 7 == 3 ? 5.0f : 0.0f;
          s.scale = i % 4 == 1 ? 0.25f : 0.0f;
          s.f16 = i % 3 == 2;
          const std::string name = "GroupQueryAttention_h" + std::to_string(h.heads) + "kv" + std::to_string(h.kv) +
                                   "d" + std::to_string(h.D) + (packed ? "_packed" : "") +
                                   (rotary == 1   ? "_rotary"
                                    : rotary == 2 ? "_rotary-interleaved"
                                                  : "") +
                                   "_" + gqaModeName(mode) + (s.window > 0 ? "_window2" : "") +
                                   (s.softcap > 0 ? "_softcap5" : "") + (s.scale > 0 ? "_scale" : "") +
                                   (s.f16 ? "_f16" : "_f32");
          out.push_back(gqaCase(s, seed + 1000 + static_cast<uint64_t>(i), name, gqaBindings(mode)));
          ++i;
        }
}

//===--- RotaryEmbedding -----------------------------------------------------===//

void addRotaryCases(std::vector<ContribCase>& out, uint64_t seed) {
  const int64_t heads = 2, D = 8, positions = 16;
  int i = 0;
  for (int layout : {0, 1, 2}) // 0 [B,S,hidden] with num_heads, 1 without, 2 [B,heads,S,head]
    for (bool interleaved : {false, true})
      for (bool partial : {false, true})
        for (bool scalarPos : {false, true})
          for (bool f16 : {false, true}) {
            if (partial && layout == 1)
              continue; // rotary_embedding_dim needs num_heads for a 3-D input
            Random r(seed + 2000 + static_cast<uint64_t>(i));
            const DType ft = f16 ? DType::Float16 : DType::Float;
            const int fe = f16 ? kF16 : kF32;
            const int64_t rot = partial ? D / 2 : D;
            const std::string name = std::string("RotaryEmbedding_") +
                                     (layout == 0   ? "bsh"
                                      : layout == 1 ? "bsh-no-heads"
                                                    : "bnsh") +
                                     (interleaved ? "_interleaved" : "_half") + (partial ? "_partial" : "") +
                                     (scalarPos ? "_pos1" : "_posBS") + (f16 ? "_f16" : "_f32");
            ContribCase c{name, "RotaryEmbedding", contribModel(), {}};
            onnx::GraphProto& g = *c.model.mutable_graph();
            GraphBuilder gb(g);
            const std::vector<std::string> xd = layout == 2 ? std::vector<std::string>{"batch", "", "seq", ""}
                                                            : std::vector<std::string>{"batch", "seq", ""};
            const std::vector<int64_t> xs =
                layout == 2 ? std::vector<int64_t>{0, heads, 0, D} : std::vector<int64_t>{0, 0, heads * D};
            declare(g.add_input(), "input", fe, xd, xs);
            if (scalarPos)
              declare(g.add_input(), "position_ids", kI64, {""}, {1});
            else
              declare(g.add_input(), "position_ids", kI64, {"batch", "seq"}, {0, 0});
            declare(g.add_output(), "output", fe, xd, xs);
            auto [cosC, sinC] = rotaryCaches(ft, positions, rot);
            std::vector<onnx::AttributeProto> attrs = {intAttr("interleaved", interleaved ? 1 : 0)};
            if (layout == 0)
              attrs.push_back(intAttr("num_heads", heads));
            if (partial)
              attrs.push_back(intAttr("rotary_embedding_dim", rot));
            if (partial && layout == 2)
              attrs.push_back(intAttr("num_heads", heads));
            addOpNode(g, "RotaryEmbedding", "com.microsoft",
                      {"input", "position_ids", gb.initializer("cos_cache", cosC), gb.initializer("sin_cache", sinC)},
                      {"output"}, attrs);
            for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 3}, {2, 4}}) {
              std::vector<int64_t> dims = layout == 2 ? std::vector<int64_t>{batch, heads, seq, D}
                                                      : std::vector<int64_t>{batch, seq, heads * D};
              std::vector<int64_t> pos;
              if (scalarPos)
                pos = {5};
              else
                for (int64_t b = 0; b < batch; ++b)
                  for (int64_t s = 0; s < seq; ++s)
                    pos.push_back(3 * b + s);
              c.inputSets.push_back(
                  {randomFloats(r, ft, dims), scalarPos ? Tensor::fromInts(DType::Int64, {1}, pos)
                                                        : Tensor::fromInts(DType::Int64, {batch, seq}, pos)});
            }
            out.push_back(std::move(c));
            ++i;
          }
}

//===--- simplified layer norms ------------------------------------------------===//

void addLayerNormCases(std::vector<ContribCase>& out, uint64_t seed) {
  const int64_t H = 24, fixedSeq = 4;
  int i = 0;
  // onnxruntime registers SimplifiedLayerNormalization in the default domain only.
  for (bool rank2 : {false, true})
    for (bool lastTwo : {false, true})
      for (bool f16 : {false, true})
        for (float eps : {1e-5f, 1e-3f}) {
          Random r(seed + 3000 + static_cast<uint64_t>(i++));
          const DType ft = f16 ? DType::Float16 : DType::Float;
          const int fe = f16 ? kF16 : kF32;
          const std::string name = std::string("SimplifiedLayerNormalization_") + (rank2 ? "rank2" : "rank3") +
                                   (lastTwo ? "_axis-2" : "_axis-1") + (eps > 1e-4f ? "_eps1e-3" : "_eps1e-5") +
                                   (f16 ? "_f16" : "_f32");
          ContribCase c{name, "SimplifiedLayerNormalization", contribModel(), {}};
          onnx::GraphProto& g = *c.model.mutable_graph();
          GraphBuilder gb(g);
          // Normalizing over two dims needs the first of them static: the scale is an initializer.
          std::vector<std::string> xd = {"batch", lastTwo ? "" : "seq", ""};
          std::vector<int64_t> xs = {0, lastTwo ? fixedSeq : 0, H};
          if (rank2) {
            xd = {lastTwo ? "" : "rows", ""};
            xs = {lastTwo ? fixedSeq : 0, H};
          }
          declare(g.add_input(), "X", fe, xd, xs);
          declare(g.add_output(), "Y", fe, xd, xs);
          const std::vector<int64_t> scaleDims = lastTwo ? std::vector<int64_t>{fixedSeq, H} : std::vector<int64_t>{H};
          addOpNode(g, "SimplifiedLayerNormalization", "",
                    {"X", gb.initializer("scale", randomFloats(r, ft, scaleDims))}, {"Y"},
                    {intAttr("axis", lastTwo ? -2 : -1), floatAttr("epsilon", eps)});
          for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 3}, {2, 5}}) {
            std::vector<int64_t> dims = {batch, lastTwo ? fixedSeq : seq, H};
            if (rank2)
              dims = {lastTwo ? fixedSeq : batch * seq, H};
            c.inputSets.push_back({randomFloats(r, ft, dims, 2.0)});
          }
          out.push_back(std::move(c));
        }
  i = 0;
  for (bool bias : {false, true})
    for (bool sumOut : {false, true})
      for (bool f16 : {false, true})
        for (float eps : {1e-5f, 1e-6f}) {
          Random r(seed + 4000 + static_cast<uint64_t>(i++));
          const DType ft = f16 ? DType::Float16 : DType::Float;
          const int fe = f16 ? kF16 : kF32;
          const std::string name = std::string("SkipSimplifiedLayerNormalization") + (bias ? "_bias" : "") +
                                   (sumOut ? "_sum-output" : "") + (eps > 5e-6f ? "_eps1e-5" : "_eps1e-6") +
                                   (f16 ? "_f16" : "_f32");
          ContribCase c{name, "SkipSimplifiedLayerNormalization", contribModel(), {}};
          onnx::GraphProto& g = *c.model.mutable_graph();
          GraphBuilder gb(g);
          for (const char* n : {"input", "skip"})
            declare(g.add_input(), n, fe, {"batch", "seq", ""}, {0, 0, H});
          declare(g.add_output(), "output", fe, {"batch", "seq", ""}, {0, 0, H});
          std::vector<std::string> outs = {"output"};
          if (sumOut) {
            declare(g.add_output(), "input_skip_bias_sum", fe, {"batch", "seq", ""}, {0, 0, H});
            outs.insert(outs.end(), {"", "", "input_skip_bias_sum"});
          }
          std::vector<std::string> ins = {"input", "skip", gb.initializer("gamma", randomFloats(r, ft, {H}))};
          if (bias)
            ins.push_back(gb.initializer("bias", randomFloats(r, ft, {H}, 0.5)));
          addOpNode(g, "SkipSimplifiedLayerNormalization", "com.microsoft", ins, outs, {floatAttr("epsilon", eps)});
          for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 3}, {2, 5}})
            c.inputSets.push_back({randomFloats(r, ft, {batch, seq, H}), randomFloats(r, ft, {batch, seq, H})});
          out.push_back(std::move(c));
        }
}

} // namespace

std::vector<ContribCase> contribConformanceCases(uint64_t seed, const std::string& op) {
  using Adder = std::function<void(std::vector<ContribCase>&, uint64_t)>;
  const std::vector<std::pair<std::string, Adder>> families = {
      {"MatMulNBits", addNBitsCases},
      {"GroupQueryAttention", addGqaCases},
      {"RotaryEmbedding", addRotaryCases},
      {"SimplifiedLayerNormalization", addLayerNormCases}, // and SkipSimplifiedLayerNormalization
  };
  std::vector<ContribCase> out;
  bool known = op.empty();
  for (const auto& [name, add] : families) {
    std::vector<ContribCase> cases;
    add(cases, seed);
    for (auto& c : cases)
      if (op.empty() || c.op == op) {
        known = true;
        out.push_back(std::move(c));
      }
  }
  if (!known)
    throw std::invalid_argument("no contrib-op cases for op '" + op +
                                "' (MatMulNBits, GroupQueryAttention, RotaryEmbedding, "
                                "SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization)");
  return out;
}

std::vector<std::string> hipEpL2Names() {
  return {"GroupQueryAttention_seq256", "MatMulNBits_o_seq128"};
}

ContribCase hipEpL2Case(const std::string& name, uint64_t seed) {
  if (name == "GroupQueryAttention_seq256") {
    GqaShape s{32, 8, 128, false, 1, GqaMode::Prompt};
    s.f16 = true;
    return gqaCase(s, seed, name, {{1, 256, 0, {255}, 256}}, 256);
  }
  if (name == "MatMulNBits_o_seq128") {
    NBitsShape s{4, 128, 4096, 4096, 1, true, false, false};
    return nbitsCase(s, seed, name, {{1, 128}});
  }
  throw std::invalid_argument("unknown hip-ep L2 model '" + name +
                              "' (GroupQueryAttention_seq256, MatMulNBits_o_seq128)");
}

void writeContribCase(const ContribCase& c, const fs::path& dir) {
  if (fs::exists(dir / "model.onnx"))
    throw std::runtime_error(dir.string() + " already holds a model.onnx; generated cases are never overwritten");
  fs::create_directories(dir);
  writeModel(c.model, dir / "model.onnx");
  const auto inSpecs = onnxio::describeInputs(c.model);
  const auto outSpecs = onnxio::describeOutputs(c.model);
  for (std::size_t k = 0; k < c.inputSets.size(); ++k) {
    const fs::path set = dir / ("test_data_set_" + std::to_string(k));
    std::vector<Tensor> outputs;
    try {
      outputs = reference::evaluate(c.model, c.inputSets[k]);
    } catch (const std::exception& e) {
      throw std::runtime_error(set.string() + ": " + e.what());
    }
    fs::create_directories(set);
    for (std::size_t i = 0; i < c.inputSets[k].size(); ++i)
      onnxio::writeTensorFile(set / ("input_" + std::to_string(i) + ".pb"), c.inputSets[k][i], inSpecs[i].name);
    for (std::size_t i = 0; i < outputs.size(); ++i)
      onnxio::writeTensorFile(set / ("output_" + std::to_string(i) + ".pb"), outputs[i], outSpecs[i].name);
  }
}

} // namespace dynqual::modelgen
