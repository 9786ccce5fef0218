// Hand-computed cases of the reference's onnxruntime contrib ops; each expected value is worked
// out in the comment beside it from onnxruntime's docs/ContribOperators.md.
#include "TestModels.h"

#include "dynqual/reference/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>

using namespace dynqual;
using dynqual::test::setFloatAttr;
using dynqual::test::setIntAttr;

namespace {

Tensor f32(std::vector<int64_t> dims, std::vector<double> v) {
  return Tensor::fromDoubles(DType::Float, dims, v);
}
Tensor u8(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return Tensor::fromInts(DType::Uint8, dims, v);
}
Tensor i32(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return Tensor::fromInts(DType::Int32, dims, v);
}
Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return Tensor::fromInts(DType::Int64, dims, v);
}

using Attrs = std::function<void(onnx::NodeProto*)>;

// Runs a one-node model of `domain`.`op`; std::nullopt inputs are omitted (empty names).
std::vector<Tensor> run(const std::string& op, const std::vector<std::optional<Tensor>>& inputs, const Attrs& attrs,
                        int outputs = 1, const std::string& domain = "com.microsoft", int unnamedOutput = -1) {
  std::vector<onnx::ValueInfoProto> ins, outs;
  std::vector<std::string> inNames, outNames;
  std::vector<Tensor> given;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      inNames.emplace_back();
      continue;
    }
    inNames.push_back("x" + std::to_string(i));
    ins.push_back(test::tensorValue(inNames.back(), inputs[i]->dtype(), inputs[i]->dims()));
    given.push_back(*inputs[i]);
  }
  for (int i = 0; i < outputs; ++i) {
    if (i == unnamedOutput) {
      outNames.emplace_back();
      continue;
    }
    outNames.push_back("y" + std::to_string(i));
    onnx::ValueInfoProto v;
    v.set_name(outNames.back());
    outs.push_back(v);
  }
  onnx::ModelProto m = test::emptyModel(21, ins, outs);
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  onnx::NodeProto* n = test::addNode(m, op, inNames, outNames);
  n->set_domain(domain);
  n->set_name(op + "_0");
  if (attrs)
    attrs(n);
  return reference::evaluate(m, given);
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

void expectNear(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

Attrs nbits(int64_t K, int64_t N, int64_t block, int64_t bits = 4) {
  return [=](onnx::NodeProto* n) {
    setIntAttr(n, "K", K);
    setIntAttr(n, "N", N);
    setIntAttr(n, "block_size", block);
    setIntAttr(n, "bits", bits);
  };
}

std::vector<double> ramp(int64_t n, double from = 1) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(from + static_cast<double>(i));
  return v;
}

} // namespace

// One int4 block of 32 per row, N = 2, A = [1, 2, ..., 32], default zero point 8.
// Row 0: every byte 0x99, codes 9, scale 0.5: w = (9 - 8) * 0.5 = 0.5, y0 = 0.5 * 528 = 264.
// Row 1: every byte 0x1F, codes low bits first 15, 1, 15, 1, ...; scale 0.25: w = +1.75 at even
// k, -1.75 at odd k; y1 = 1.75 * sum_i ((2i + 1) - (2i + 2)) = 1.75 * -16 = -28.
TEST(MatMulNBits, Int4BlockOnPaper) {
  std::vector<int64_t> row1(16, 0x1F);
  std::vector<int64_t> bytes(16, 0x99);
  bytes.insert(bytes.end(), row1.begin(), row1.end());
  const Tensor a = f32({1, 32}, ramp(32));
  const auto y = run("MatMulNBits", {a, u8({2, 1, 16}, bytes), f32({2}, {0.5, 0.25})}, nbits(32, 2, 32));
  EXPECT_EQ(y.at(0).dims(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(y.at(0).toDoubles(), (std::vector<double>{264, -28}));
  // Same in float16: every value is exact in half precision.
  const Tensor a16 = Tensor::fromDoubles(DType::Float16, {1, 32}, ramp(32));
  const auto y16 =
      run("MatMulNBits", {a16, u8({2, 1, 16}, bytes), Tensor::fromDoubles(DType::Float16, {2}, {0.5, 0.25})},
          nbits(32, 2, 32));
  EXPECT_EQ(y16.at(0).dtype(), DType::Float16);
  EXPECT_EQ(y16.at(0).toDoubles(), (std::vector<double>{264, -28}));
}

// K = 20 with block 16: two blocks, the last padded (codes 20..31 exist in B but not in K).
// Bytes 0x55: codes 5. Packed zero points, one byte per row: 0x21 = block 0 -> 1, block 1 -> 2.
// Scales 1 and 2: w = 4 for k < 16, (5 - 2) * 2 = 6 for 16 <= k < 20. A = ones, bias 0.5:
// y = 16 * 4 + 4 * 6 + 0.5 = 88.5 (swapped zero points would give 16 * 3 + 4 * 8 + 0.5 = 80.5).
TEST(MatMulNBits, PaddedLastBlockPackedZeroPointsAndBias) {
  const auto y = run("MatMulNBits",
                     {f32({1, 20}, std::vector<double>(20, 1.0)), u8({1, 2, 8}, std::vector<int64_t>(16, 0x55)),
                      f32({1, 2}, {1, 2}), u8({1}, {0x21}), std::nullopt, f32({1}, {0.5})},
                     nbits(20, 1, 16));
  EXPECT_EQ(y.at(0).toDoubles(), (std::vector<double>{88.5}));
}

// Three blocks per row: 12 bits of zero points, so rows are ceil(12 / 8) = 2 bytes apart.
// Row 0 bytes 0x21 0x03 -> zero points 1, 2, 3; row 1 bytes 0x54 0x06 -> 4, 5, 6. Codes 8
// (0x88), scales 1, A = ones [48]: y0 = 16 * (7 + 6 + 5) = 288, y1 = 16 * (4 + 3 + 2) = 144.
TEST(MatMulNBits, PackedZeroPointRowPitchRoundsUp) {
  const auto y = run("MatMulNBits",
                     {f32({48}, std::vector<double>(48, 1.0)), u8({2, 3, 8}, std::vector<int64_t>(48, 0x88)),
                      f32({6}, std::vector<double>(6, 1.0)), u8({4}, {0x21, 0x03, 0x54, 0x06})},
                     nbits(48, 2, 16));
  EXPECT_EQ(y.at(0).dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(y.at(0).toDoubles(), (std::vector<double>{288, 144}));
}

// Zero points in A's dtype: block zero 6.5, codes 8, scale 2: w = 3; A = ones [16]: y = 48.
TEST(MatMulNBits, FloatZeroPoints) {
  const auto y = run("MatMulNBits",
                     {f32({1, 16}, std::vector<double>(16, 1.0)), u8({1, 1, 8}, std::vector<int64_t>(8, 0x88)),
                      f32({1}, {2}), f32({1}, {6.5})},
                     nbits(16, 1, 16));
  EXPECT_EQ(y.at(0).toDoubles(), (std::vector<double>{48}));
}

// 8 bits: byte k holds 128 + k, default zero 128, scale 0.5: w = k / 2; A = ones: y = 60.
// 2 bits: byte 0xE4 holds codes 0, 1, 2, 3 (low first), default zero 2: w = -2, -1, 0, 1 per
// four k; A = [1..16]: per four, -2(4j+1) - (4j+2) + (4j+4) = -8j, summed over j < 4: -48.
TEST(MatMulNBits, EightAndTwoBits) {
  std::vector<int64_t> b8;
  for (int64_t k = 0; k < 16; ++k)
    b8.push_back(128 + k);
  EXPECT_EQ(run("MatMulNBits", {f32({1, 16}, std::vector<double>(16, 1.0)), u8({1, 1, 16}, b8), f32({1}, {0.5})},
                nbits(16, 1, 16, 8))
                .at(0)
                .toDoubles(),
            (std::vector<double>{60}));
  EXPECT_EQ(run("MatMulNBits", {f32({1, 16}, ramp(16)), u8({1, 1, 4}, {0xE4, 0xE4, 0xE4, 0xE4}), f32({1}, {1})},
                nbits(16, 1, 16, 2))
                .at(0)
                .toDoubles(),
            (std::vector<double>{-48}));
}

TEST(MatMulNBits, OutOfRangeIsUnsupportedNamingTheNode) {
  const Tensor a = f32({1, 32}, ramp(32));
  const std::string bits3 = errorOf([&] {
    run("MatMulNBits", {a, u8({1, 1, 12}, std::vector<int64_t>(12, 0)), f32({1}, {1})}, nbits(32, 1, 32, 3));
  });
  EXPECT_NE(bits3.find("node 'MatMulNBits_0'"), std::string::npos) << bits3;
  EXPECT_NE(bits3.find("unsupported: attribute bits = 3"), std::string::npos) << bits3;
  const std::string scales = errorOf([&] {
    run("MatMulNBits", {a, u8({1, 1, 16}, std::vector<int64_t>(16, 0)), f32({2}, {1, 1})}, nbits(32, 1, 32));
  });
  EXPECT_NE(scales.find("input scales [2] holds 2 elements"), std::string::npos) << scales;
}

// X = [2, -2, 2, -2]: mean(X^2) = 4, so X / sqrt(4 + 0) = [1, -1, 1, -1]; times scale [1, 2, 3,
// 4]: [1, -2, 3, -4]; inv_std_var = 0.5.
TEST(SimplifiedLayerNormalization, DefaultDomainOnPaper) {
  const auto y = run(
      "SimplifiedLayerNormalization", {f32({1, 4}, {2, -2, 2, -2}), f32({4}, {1, 2, 3, 4})},
      [](onnx::NodeProto* n) { setFloatAttr(n, "epsilon", 0); }, 2, "");
  EXPECT_EQ(y.at(0).toDoubles(), (std::vector<double>{1, -2, 3, -4}));
  EXPECT_EQ(y.at(1).dims(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(y.at(1).toDoubles(), (std::vector<double>{0.5}));
  // epsilon defaults to 1e-5: 2 / sqrt(4 + 1e-5).
  const auto d = run("SimplifiedLayerNormalization", {f32({1, 2}, {2, -2}), f32({2}, {1, 1})}, nullptr, 1, "");
  expectNear(d.at(0).toDoubles(), {2 / std::sqrt(4 + 1e-5), -2 / std::sqrt(4 + 1e-5)});
  const std::string stash = errorOf([&] {
    run(
        "SimplifiedLayerNormalization", {f32({1, 2}, {2, -2}), f32({2}, {1, 1})},
        [](onnx::NodeProto* n) { setIntAttr(n, "stash_type", 10); }, 1, "");
  });
  EXPECT_NE(stash.find("unsupported: attribute stash_type = 10"), std::string::npos) << stash;
}

// input + skip + bias = [0.5 + 1 + 0.5, -1 - 1 + 0, 3 - 1 + 0, -1.5 + 0 - 0.5] = [2, -2, 2, -2];
// normalized as above with gamma [1, 2, 3, 4]: [1, -2, 3, -4]; output 3 is the sum itself.
TEST(SkipSimplifiedLayerNormalization, OutputsZeroAndThree) {
  const auto y = run(
      "SkipSimplifiedLayerNormalization",
      {f32({1, 1, 4}, {0.5, -1, 3, -1.5}), f32({1, 1, 4}, {1, -1, -1, 0}), f32({4}, {1, 2, 3, 4}),
       f32({4}, {0.5, 0, 0, -0.5})},
      [](onnx::NodeProto* n) { setFloatAttr(n, "epsilon", 0); }, 4, "com.microsoft", /*unnamedOutput=*/1);
  // Graph outputs y0, y2, y3 (mean is left unnamed).
  EXPECT_EQ(y.at(0).toDoubles(), (std::vector<double>{1, -2, 3, -4}));
  EXPECT_EQ(y.at(1).toDoubles(), (std::vector<double>{0.5}));
  EXPECT_EQ(y.at(2).toDoubles(), (std::vector<double>{2, -2, 2, -2}));
  const std::string mean = errorOf([] {
    run("SkipSimplifiedLayerNormalization", {f32({1, 1, 2}, {1, 1}), f32({1, 1, 2}, {1, 1}), f32({2}, {1, 1})}, nullptr,
        2);
  });
  EXPECT_NE(mean.find("unsupported: output mean"), std::string::npos) << mean;
}

// Head [1, 2, 3, 4] at position 1 of a cache whose row 1 is cos [0, 0], sin [1, 1]: every pair
// turns 90 degrees (x1' = -x2, x2' = x1). Half-split pairs (0, 2), (1, 3): [-3, -4, 1, 2].
// Interleaved pairs (0, 1), (2, 3): [-2, 1, -4, 3].
TEST(RotaryEmbedding, HalfSplitInterleavedAndPartial) {
  const Tensor cosC = f32({2, 2}, {1, 1, 0, 0}), sinC = f32({2, 2}, {0, 0, 1, 1});
  const Tensor x = f32({1, 1, 4}, {1, 2, 3, 4});
  const Attrs heads1 = [](onnx::NodeProto* n) { setIntAttr(n, "num_heads", 1); };
  EXPECT_EQ(run("RotaryEmbedding", {x, i64({1, 1}, {1}), cosC, sinC}, heads1).at(0).toDoubles(),
            (std::vector<double>{-3, -4, 1, 2}));
  // position_ids [1] = 1 is the position of token 0.
  EXPECT_EQ(run("RotaryEmbedding", {x, i64({1}, {1}), cosC, sinC},
                [](onnx::NodeProto* n) {
                  setIntAttr(n, "num_heads", 1);
                  setIntAttr(n, "interleaved", 1);
                })
                .at(0)
                .toDoubles(),
            (std::vector<double>{-2, 1, -4, 3}));
  // rotary_embedding_dim 2: only (0, 1) turns, with cache column 0 (cos 0, sin 1): [-2, 1, 3, 4].
  EXPECT_EQ(run("RotaryEmbedding", {x, i64({1, 1}, {1}), f32({2, 1}, {1, 0}), f32({2, 1}, {0, 1})},
                [](onnx::NodeProto* n) {
                  setIntAttr(n, "num_heads", 1);
                  setIntAttr(n, "rotary_embedding_dim", 2);
                })
                .at(0)
                .toDoubles(),
            (std::vector<double>{-2, 1, 3, 4}));
  // The 4-D [B, heads, S, head] layout gives the same rotation.
  EXPECT_EQ(run("RotaryEmbedding", {f32({1, 1, 1, 4}, {1, 2, 3, 4}), i64({1, 1}, {1}), cosC, sinC}, nullptr)
                .at(0)
                .toDoubles(),
            (std::vector<double>{-3, -4, 1, 2}));
  const std::string outside = errorOf([&] { run("RotaryEmbedding", {x, i64({1, 1}, {2}), cosC, sinC}, heads1); });
  EXPECT_NE(outside.find("position 2 is outside the cos/sin cache of 2 positions"), std::string::npos) << outside;
}

namespace {

Attrs gqa(int64_t heads, int64_t kvHeads, const Attrs& more = nullptr) {
  return [=](onnx::NodeProto* n) {
    setIntAttr(n, "num_heads", heads);
    setIntAttr(n, "kv_num_heads", kvHeads);
    if (more)
      more(n);
  };
}

} // namespace

// One head, D = 2, decode step: past keys k0 = [1, 0], k1 = [0, 1], values v0 = [4, 0], v1 =
// [0, 4]; new key [0, 0], value [8, 8]; seqlens_k = 2, total 3, so past = 3 - 1 = 2.
// scale 1, q = [ln 2, 0]: scores [ln 2, 0, 0], softmax [2, 1, 1] / 4 = [0.5, 0.25, 0.25];
// output = 0.5 [4, 0] + 0.25 [0, 4] + 0.25 [8, 8] = [4, 3]. present_key = [k0, k1, new].
TEST(GroupQueryAttention, OneHeadSoftmaxOnPaper) {
  const double ln2 = std::log(2.0);
  const Tensor q = f32({1, 1, 2}, {ln2, 0}), k = f32({1, 1, 2}, {0, 0}), v = f32({1, 1, 2}, {8, 8});
  const Tensor pk = f32({1, 1, 2, 2}, {1, 0, 0, 1}), pv = f32({1, 1, 2, 2}, {4, 0, 0, 4});
  const auto r = run("GroupQueryAttention", {q, k, v, pk, pv, i32({1}, {2}), i32({}, {3})},
                     gqa(1, 1, [](onnx::NodeProto* n) { setFloatAttr(n, "scale", 1); }), 3);
  expectNear(r.at(0).toDoubles(), {4, 3});
  EXPECT_EQ(r.at(1).dims(), (std::vector<int64_t>{1, 1, 3, 2}));
  EXPECT_EQ(r.at(1).toDoubles(), (std::vector<double>{1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(r.at(2).toDoubles(), (std::vector<double>{4, 0, 0, 4, 8, 8}));
  // The default scale 1/sqrt(2) with q = [sqrt(2) ln 2, 0] gives the same scores.
  const Tensor q2 = f32({1, 1, 2}, {std::sqrt(2.0) * ln2, 0});
  expectNear(
      run("GroupQueryAttention", {q2, k, v, pk, pv, i32({1}, {2}), i32({}, {3})}, gqa(1, 1), 3).at(0).toDoubles(),
      {4, 3});
  // local_window_size 2: the last two keys, itself included (rows 1, 2), scores [0, 0]:
  // 0.5 [0, 4] + 0.5 [8, 8] = [4, 6]; local_window_size 1: only itself, [8, 8].
  for (auto [w, want] : {std::pair<int64_t, std::vector<double>>{2, {4, 6}}, {1, {8, 8}}})
    expectNear(run("GroupQueryAttention", {q, k, v, pk, pv, i32({1}, {2}), i32({}, {3})},
                   gqa(1, 1,
                       [w = w](onnx::NodeProto* n) {
                         setFloatAttr(n, "scale", 1);
                         setIntAttr(n, "local_window_size", w);
                       }),
                   3)
                   .at(0)
                   .toDoubles(),
               want);
  // softcap 1: scores tanh(ln 2) = (2 - 1/2) / (2 + 1/2) = 0.6, 0, 0; weights e^0.6, 1, 1.
  const double e = std::exp(0.6), z = e + 2;
  expectNear(run("GroupQueryAttention", {q, k, v, pk, pv, i32({1}, {2}), i32({}, {3})},
                 gqa(1, 1,
                     [](onnx::NodeProto* n) {
                       setFloatAttr(n, "scale", 1);
                       setFloatAttr(n, "softcap", 1);
                     }),
                 3)
                 .at(0)
                 .toDoubles(),
             {(4 * e + 8) / z, (4 + 8) / z});
}

// Two query heads share one kv head. Head 1's query [0, 0] weighs the three keys equally:
// ([4, 0] + [0, 4] + [8, 8]) / 3 = [4, 4]. Packed QKV [q0, q1, k, v] gives the same outputs.
TEST(GroupQueryAttention, GroupedHeadsAndPackedQkv) {
  const double ln2 = std::log(2.0);
  const Tensor pk = f32({1, 1, 2, 2}, {1, 0, 0, 1}), pv = f32({1, 1, 2, 2}, {4, 0, 0, 4});
  const Attrs attrs = gqa(2, 1, [](onnx::NodeProto* n) { setFloatAttr(n, "scale", 1); });
  const auto r = run("GroupQueryAttention",
                     {f32({1, 1, 4}, {ln2, 0, 0, 0}), f32({1, 1, 2}, {0, 0}), f32({1, 1, 2}, {8, 8}), pk, pv,
                      i32({1, 1}, {2}), i32({}, {3})},
                     attrs, 3);
  expectNear(r.at(0).toDoubles(), {4, 3, 4, 4});
  const auto p =
      run("GroupQueryAttention",
          {f32({1, 1, 8}, {ln2, 0, 0, 0, 0, 0, 8, 8}), std::nullopt, std::nullopt, pk, pv, i32({1}, {2}), i32({}, {3})},
          attrs, 3);
  expectNear(p.at(0).toDoubles(), {4, 3, 4, 4});
  EXPECT_EQ(p.at(2).toDoubles(), r.at(2).toDoubles());
}

// A padded batch: row 0 has 3 tokens (seqlens_k 2), row 1 only 2 (seqlens_k 1), total 3.
// Row 1's past is 2 - 1 = 1 row: keys k0 = [1, 0] and the new [0, 0] at row 1; scores [ln 2, 0]
// -> [2/3, 1/3]; output 2/3 [4, 0] + 1/3 [8, 8] = [16/3, 8/3]; its present row 2 is zero.
TEST(GroupQueryAttention, PaddedRowReadsOnlyItsOwnTokens) {
  const double ln2 = std::log(2.0);
  const Tensor q = f32({2, 1, 2}, {ln2, 0, ln2, 0}), k = f32({2, 1, 2}, {0, 0, 0, 0}), v = f32({2, 1, 2}, {8, 8, 8, 8});
  const Tensor pk = f32({2, 1, 2, 2}, {1, 0, 0, 1, 1, 0, 9, 9}), pv = f32({2, 1, 2, 2}, {4, 0, 0, 4, 4, 0, 9, 9});
  const auto r = run("GroupQueryAttention", {q, k, v, pk, pv, i32({2}, {2, 1}), i32({}, {3})},
                     gqa(1, 1, [](onnx::NodeProto* n) { setFloatAttr(n, "scale", 1); }), 3);
  expectNear(r.at(0).toDoubles(), {4, 3, 16.0 / 3, 8.0 / 3});
  EXPECT_EQ(r.at(1).toDoubles(), (std::vector<double>{1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(r.at(2).toDoubles(), (std::vector<double>{4, 0, 0, 4, 8, 8, 4, 0, 8, 8, 0, 0}));
}

// First prompt (S = total = 2, no past), with rotary at positions 0 and 1 (row 1: cos 0, sin 1,
// a 90-degree turn of the pair (0, 1)): key 1 [1, 0] becomes [0, 1]; query 1 [0, 1] becomes
// [-1, 0]. Scores of query 1 (scale 1) against key 0 [0, 0] and key 1 [0, 1]: [0, 0]; output
// 1 = ([2, 0] + [0, 2]) / 2 = [1, 1]; query 0 sees only key 0: output 0 = [2, 0].
TEST(GroupQueryAttention, FirstPromptWithRotary) {
  const auto r =
      run("GroupQueryAttention",
          {f32({1, 2, 2}, {1, 0, 0, 1}), f32({1, 2, 2}, {0, 0, 1, 0}), f32({1, 2, 2}, {2, 0, 0, 2}), std::nullopt,
           std::nullopt, i32({1}, {1}), i32({}, {2}), f32({2, 1}, {1, 0}), f32({2, 1}, {0, 1})},
          gqa(1, 1,
              [](onnx::NodeProto* n) {
                setFloatAttr(n, "scale", 1);
                setIntAttr(n, "do_rotary", 1);
              }),
          3);
  expectNear(r.at(0).toDoubles(), {2, 0, 1, 1});
  expectNear(r.at(1).toDoubles(), {0, 0, 0, 1});
}

TEST(GroupQueryAttention, OutOfRangeIsUnsupportedNamingTheNode) {
  const std::string heads = errorOf([&] {
    run("GroupQueryAttention",
        {f32({1, 1, 10}, std::vector<double>(10, 0)), f32({1, 1, 4}, std::vector<double>(4, 0)),
         f32({1, 1, 4}, std::vector<double>(4, 0)), std::nullopt, std::nullopt, i32({1}, {0}), i32({}, {1})},
        gqa(5, 2), 3);
  });
  EXPECT_NE(heads.find("node 'GroupQueryAttention_0'"), std::string::npos) << heads;
  EXPECT_NE(heads.find("unsupported: attribute num_heads = 5 is not a multiple of kv_num_heads = 2"), std::string::npos)
      << heads;
  const std::string seqlens = errorOf([&] {
    run("GroupQueryAttention",
        {f32({1, 1, 2}, {0, 0}), f32({1, 1, 2}, {0, 0}), f32({1, 1, 2}, {0, 0}), std::nullopt, std::nullopt,
         i32({1}, {1}), i32({}, {1})},
        gqa(1, 1), 3);
  });
  EXPECT_NE(seqlens.find("seqlens_k[0] = 1 is outside [0, total_sequence_length = 1)"), std::string::npos) << seqlens;
}

TEST(ContribOps, OtherDomainsStayUnsupported) {
  const std::string e =
      errorOf([&] { run("MatMulNBits", {f32({1, 16}, std::vector<double>(16, 1.0))}, nullptr, 1, "com.example"); });
  EXPECT_NE(e.find("unsupported op 'com.example.MatMulNBits'"), std::string::npos) << e;
}
