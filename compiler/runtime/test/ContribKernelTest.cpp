// Sim kernels of the onnxruntime contrib ops against hand-computed values (each expectation states
// its calculation): matmul_nbits, the simplified layer norms, rotary_embedding and
// group_query_attention.
#include "DeviceTestUtil.h"
#include "dq/runtime/SimDevice.h"

#include <cmath>

using namespace dq::rt;
using dq::rt::test::blank;
using dq::rt::test::errorOf;
using dq::rt::test::get;
using dq::rt::test::in;
using dq::rt::test::run;

namespace {

void expectNear(const std::vector<float> &got, const std::vector<double> &want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

std::vector<float> iota(int n, float from) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = from + static_cast<float>(i);
  return v;
}

/// B of N rows of one 32-wide int4 block: row 0 all codes 9 (bytes 0x99), row 1 codes 0 at even k
/// and 15 at odd k (bytes 0xF0: low nibble first).
std::vector<uint8_t> twoRowBlock() {
  std::vector<uint8_t> b(32, 0x99);
  std::fill(b.begin() + 16, b.end(), 0xF0);
  return b;
}

} // namespace

TEST(ContribKernels, MatMulNBitsInt4OneBlockByHand) {
  SimDevice d;
  // A = [[1..32], [1 x 32]]; K = 32, N = 2, block 32, default zero point 8; scales [0.5, 0.25].
  std::vector<float> a = iota(32, 1);
  a.insert(a.end(), 32, 1.0f);
  const auto A = in<float>(d, DType::F32, {2, 32}, a);
  const auto B = in<uint8_t>(d, DType::U8, {2, 1, 16}, twoRowBlock());
  const auto S = in<float>(d, DType::F32, {2}, {0.5f, 0.25f});
  // Row 0 of W: (9 - 8) * 0.5 = 0.5 everywhere. Row 1: (0 - 8) * 0.25 = -2 at even k, (15 - 8) *
  // 0.25 = 1.75 at odd k. A row 0: the even k hold 1, 3, ..., 31 (sum 256), the odd k 2, ..., 32
  // (sum 272). out[0] = [0.5 * 528, -2 * 256 + 1.75 * 272] = [264, -36];
  // out[1] = [0.5 * 32, -2 * 16 + 1.75 * 16] = [16, -4].
  KernelArgs args{{32, 2, 4, 32, 0, 0, 0}, {}, {}};
  expectNear(run<float>(d, "matmul_nbits", {A, B, S}, DType::F32, {2, 2}, args), {264, -36, 16, -4}, 1e-4);
  // Packed zero points, one byte per row (ceil(1 block * 4 bits / 8)): 9 and 0. Row 0 becomes 0;
  // row 1 is 0 at even k and 15 * 0.25 = 3.75 at odd k: [3.75 * 272, 3.75 * 16] = [1020, 60].
  const auto Z = in<uint8_t>(d, DType::U8, {2}, {0x09, 0x00});
  KernelArgs packed{{32, 2, 4, 32, 1, 0, 1}, {}, {}};
  expectNear(run<float>(d, "matmul_nbits", {A, B, S, Z}, DType::F32, {2, 2}, packed), {0, 1020, 0, 60}, 1e-4);
  // Float zero points (A's dtype) 8.5 and 7.5 with a bias [10, 20]: row 0 w = 0.5 * 0.5 = 0.25,
  // row 1 w = -7.5 * 0.25 = -1.875 (even), 7.5 * 0.25 = 1.875 (odd).
  // out[0] = [0.25 * 528 + 10, -1.875 * 256 + 1.875 * 272 + 20] = [142, 50]; out[1] = [18, 20].
  const auto Zf = in<float>(d, DType::F32, {2}, {8.5f, 7.5f});
  const auto bias = in<float>(d, DType::F32, {2}, {10, 20});
  KernelArgs floatZp{{32, 2, 4, 32, 2, 1, 1}, {}, {}};
  expectNear(run<float>(d, "matmul_nbits", {A, B, S, Zf, bias}, DType::F32, {2, 2}, floatZp), {142, 50, 18, 20}, 1e-4);
}

TEST(ContribKernels, MatMulNBitsPaddedLastBlockAndOtherWidths) {
  SimDevice d;
  // K = 20, block 16: two blocks, the second holds 4 codes and 12 padding codes that are never
  // read. Codes 9 (bytes 0x99), scales [1, 2] per block, A = ones: 16 * 1 + 4 * 2 = 24.
  const auto A = in<float>(d, DType::F32, {1, 20}, std::vector<float>(20, 1.0f));
  const auto B = in<uint8_t>(d, DType::U8, {1, 2, 8}, std::vector<uint8_t>(16, 0x99));
  const auto S = in<float>(d, DType::F32, {2}, {1, 2});
  expectNear(run<float>(d, "matmul_nbits", {A, B, S}, DType::F32, {1, 1}, KernelArgs{{20, 1, 4, 16, 0, 0, 0}, {}, {}}),
             {24}, 1e-5);
  // bits 8, block 16: one byte per code, default zero point 128; codes 130 -> (130 - 128) * 0.5 = 1
  // for all 16; A = 1..16: out = 136.
  const auto A8 = in<float>(d, DType::F32, {1, 16}, iota(16, 1));
  const auto B8 = in<uint8_t>(d, DType::U8, {1, 1, 16}, std::vector<uint8_t>(16, 130));
  const auto S8 = in<float>(d, DType::F32, {1}, {0.5f});
  expectNear(
      run<float>(d, "matmul_nbits", {A8, B8, S8}, DType::F32, {1, 1}, KernelArgs{{16, 1, 8, 16, 0, 0, 0}, {}, {}}),
      {136}, 1e-5);
  // bits 2, block 16: four codes per byte, low bits first; default zero point 2. Byte 0b11100100
  // = 0xE4 holds codes 0, 1, 2, 3 -> w = -2, -1, 0, 1 (scale 1), four times: A = ones, out = -8.
  const auto B2 = in<uint8_t>(d, DType::U8, {1, 1, 4}, std::vector<uint8_t>(4, 0xE4));
  const auto S2 = in<float>(d, DType::F32, {1}, {1.0f});
  const auto A2 = in<float>(d, DType::F32, {1, 16}, std::vector<float>(16, 1.0f));
  expectNear(
      run<float>(d, "matmul_nbits", {A2, B2, S2}, DType::F32, {1, 1}, KernelArgs{{16, 1, 2, 16, 0, 0, 0}, {}, {}}),
      {-8}, 1e-5);
}

TEST(ContribKernels, MatMulNBitsRefusesWhatItDoesNotImplement) {
  SimDevice d;
  const auto A = in<float>(d, DType::F32, {1, 32}, std::vector<float>(32, 1.0f));
  const auto B = in<uint8_t>(d, DType::U8, {1, 1, 12}, std::vector<uint8_t>(12, 0));
  const auto S = in<float>(d, DType::F32, {1}, {1.0f});
  EXPECT_EQ(errorOf([&] {
              run<float>(d, "matmul_nbits", {A, B, S}, DType::F32, {1, 1}, KernelArgs{{32, 1, 3, 32, 0, 0, 0}, {}, {}});
            }),
            "kernel 'matmul_nbits': unsupported: bits 3 (2, 4 and 8 are)");
  const auto B4 = in<uint8_t>(d, DType::U8, {1, 1, 16}, std::vector<uint8_t>(16, 0));
  const auto S3 = in<float>(d, DType::F32, {3}, {1, 1, 1});
  EXPECT_TRUE(contains(errorOf([&] {
                         run<float>(d, "matmul_nbits", {A, B4, S3}, DType::F32, {1, 1},
                                    KernelArgs{{32, 1, 4, 32, 0, 0, 0}, {}, {}});
                       }),
                       "scales [3] must hold N * k_blocks = 1 elements"));
}

TEST(ContribKernels, SimplifiedLayerNormsByHand) {
  SimDevice d;
  // X = [3, 4]: mean(x^2) = 12.5, rms = sqrt(12.5) = 3.5355339; scale [2, 1]:
  // [2 * 3 / 3.5355339, 4 / 3.5355339] = [1.6970563, 1.1313708] (epsilon 0).
  expectNear(run<float>(d, "simplified_layer_norm",
                        {in<float>(d, DType::F32, {1, 2}, {3, 4}), in<float>(d, DType::F32, {2}, {2, 1})}, DType::F32,
                        {1, 2}, KernelArgs{{-1}, {0.0}, {}}),
             {1.6970563, 1.1313708}, 1e-6);
  // Skip: S = [1, 2] + [2, 2] + bias [0, -1] = [3, 3]; mean(S^2) = 9, rms 3; gamma [1, 2]:
  // Y = [1, 2].
  BufferView y = blank(d, DType::F32, {1, 2}), s = blank(d, DType::F32, {1, 2});
  d.launch("skip_simplified_layer_norm",
           {in<float>(d, DType::F32, {1, 2}, {1, 2}), in<float>(d, DType::F32, {1, 2}, {2, 2}),
            in<float>(d, DType::F32, {2}, {1, 2}), in<float>(d, DType::F32, {2}, {0, -1})},
           {y, s}, KernelArgs{{1}, {0.0}, {}});
  expectNear(get<float>(d, y), {1, 2}, 1e-6);
  expectNear(get<float>(d, s), {3, 3}, 0);
}

TEST(ContribKernels, RotaryHalfSplitAndInterleavedByHand) {
  SimDevice d;
  // One head of 4 at position p[0] + 0 = 2; cache row 2: cos [0, 1], sin [1, 0] (a quarter turn
  // for pair 0, none for pair 1).
  const auto x = in<float>(d, DType::F32, {1, 1, 4}, {1, 2, 3, 4});
  const auto pos = in<int64_t>(d, DType::I64, {1}, {2});
  const auto c = in<float>(d, DType::F32, {3, 2}, {9, 9, 9, 9, 0, 1});
  const auto s = in<float>(d, DType::F32, {3, 2}, {9, 9, 9, 9, 1, 0});
  // Half-split pairs (0, 2), (1, 3): [1 * 0 - 3 * 1, 2, 3 * 0 + 1 * 1, 4] = [-3, 2, 1, 4].
  expectNear(run<float>(d, "rotary_embedding", {x, pos, c, s}, DType::F32, {1, 1, 4}, KernelArgs{{0, 1, 0}, {}, {}}),
             {-3, 2, 1, 4}, 1e-6);
  // Interleaved pairs (0, 1), (2, 3): [1 * 0 - 2 * 1, 2 * 0 + 1 * 1, 3, 4] = [-2, 1, 3, 4].
  expectNear(run<float>(d, "rotary_embedding", {x, pos, c, s}, DType::F32, {1, 1, 4}, KernelArgs{{1, 1, 0}, {}, {}}),
             {-2, 1, 3, 4}, 1e-6);
  // position 3 is outside the 3-row cache.
  const auto far = in<int64_t>(d, DType::I64, {1}, {3});
  EXPECT_TRUE(contains(errorOf([&] {
                         run<float>(d, "rotary_embedding", {x, far, c, s}, DType::F32, {1, 1, 4},
                                    KernelArgs{{0, 1, 0}, {}, {}});
                       }),
                       "position 3 is outside the cos/sin cache of 3 positions"));
}

TEST(ContribKernels, GroupQueryAttentionDecodeWithPaddedRowByHand) {
  SimDevice d;
  // Two batch rows, one head of 2, one new token, past buffer of 2, total_sequence_length 2.
  // Row 0: seqlens_k 1, so one past token (key [1, 0], value [10, 0]) and the new one at
  // position 1. Row 1: seqlens_k 0 (padded): no past; the new token goes to position 0 and attends
  // only to itself. Past row 1 of each batch (99s) lies beyond the valid past and is never read.
  const auto q = in<float>(d, DType::F32, {2, 1, 2}, {1, 0, 1, 0});
  const auto k = in<float>(d, DType::F32, {2, 1, 2}, {0, 1, 0, 1});
  const auto v = in<float>(d, DType::F32, {2, 1, 2}, {0, 10, 3, 4});
  const auto pk = in<float>(d, DType::F32, {2, 1, 2, 2}, {1, 0, 99, 99, 99, 99, 99, 99});
  const auto pv = in<float>(d, DType::F32, {2, 1, 2, 2}, {10, 0, 99, 99, 99, 99, 99, 99});
  const auto seqlens = in<int32_t>(d, DType::I32, {2}, {1, 0});
  BufferView out = blank(d, DType::F32, {2, 1, 2}), presK = blank(d, DType::F32, {2, 1, 2, 2}),
             presV = blank(d, DType::F32, {2, 1, 2, 2});
  KernelArgs args{{1, 1, 0, 1, 0, 0, -1}, {0.0, 0.0}, {2}};
  d.launch("group_query_attention", {q, k, v, pk, pv, seqlens}, {out, presK, presV}, args);
  // Row 0: scores q.k / sqrt(2) = [1 / sqrt 2, 0]; p = [e^0.70710678, 1] / (e^0.70710678 + 1) =
  // [0.66976155, 0.33023845]; out = p0 * [10, 0] + p1 * [0, 10] = [6.6976155, 3.3023845].
  // Row 1: out = its own value [3, 4].
  const double e = std::exp(1.0 / std::sqrt(2.0)), p0 = e / (e + 1), p1 = 1 / (e + 1);
  expectNear(get<float>(d, out), {10 * p0, 10 * p1, 3, 4}, 1e-6);
  // Present: row 0 = past [1, 0] then new [0, 1]; row 1 = new [0, 1] at position 0, zeros after.
  expectNear(get<float>(d, presK), {1, 0, 0, 1, 0, 1, 0, 0}, 0);
  expectNear(get<float>(d, presV), {10, 0, 0, 10, 3, 4, 0, 0}, 0);
  // seqlens_k outside [0, total) is refused.
  const auto bad = in<int32_t>(d, DType::I32, {2}, {2, 0});
  EXPECT_TRUE(
      contains(errorOf([&] { d.launch("group_query_attention", {q, k, v, pk, pv, bad}, {out, presK, presV}, args); }),
               "seqlens_k[0] = 2 is outside [0, total_sequence_length = 2)"));
}

TEST(ContribKernels, GroupQueryAttentionPromptIsCausalAndSharesKvHeads) {
  SimDevice d;
  // Prompt of 2 tokens (S == total 2), two query heads sharing one kv head of size 1, scale 1.
  // Keys [0, ln 3], values [1, 5]. Token 0 sees only key 0: out = 1 for both heads. Token 1 of
  // head 0 (q = 1): scores [0, ln 3] -> p = [1/4, 3/4], out = 0.25 + 3.75 = 4. Head 1 (q = 0):
  // scores [0, 0] -> out = (1 + 5) / 2 = 3.
  const auto q = in<float>(d, DType::F32, {1, 2, 2}, {7, 7, 1, 0});
  const auto k = in<float>(d, DType::F32, {1, 2, 1}, {0, static_cast<float>(std::log(3.0))});
  const auto v = in<float>(d, DType::F32, {1, 2, 1}, {1, 5});
  const auto seqlens = in<int32_t>(d, DType::I32, {1}, {1});
  BufferView out = blank(d, DType::F32, {1, 2, 2}), presK = blank(d, DType::F32, {1, 1, 2, 1}),
             presV = blank(d, DType::F32, {1, 1, 2, 1});
  d.launch("group_query_attention", {q, k, v, seqlens}, {out, presK, presV},
           KernelArgs{{2, 1, 0, 0, 0, 0, -1}, {1.0, 0.0}, {2}});
  expectNear(get<float>(d, out), {1, 1, 4, 3}, 1e-6);
}
