// Feature coverage: each feature is recognized on a small hand-built graph where its presence
// (or absence) follows from the graph and the binding, and the generator reaches every tracked
// feature the graph alone decides in at least 1 % of its valid cases.
#include "dynqual/fuzz/Coverage.h"
#include "dynqual/fuzz/Generator.h"
#include "dynqual/modelgen/GraphBuilder.h"

#include <gtest/gtest.h>

#include <limits>

namespace dynqual::fuzz {
namespace {

constexpr int kF = onnx::TensorProto::FLOAT;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

struct Model {
  onnx::ModelProto m = modelgen::newModel("test", 17);
  modelgen::GraphBuilder g{*m.mutable_graph()};
  Model() { m.mutable_graph()->set_name("coverage"); }
  void input(const std::string& name, const std::vector<std::string>& params, const std::vector<int64_t>& sizes) {
    modelgen::declare(m.mutable_graph()->add_input(), name, kF, params, sizes);
  }
  void output(const std::string& name, size_t rank, int type = kF) {
    modelgen::declare(m.mutable_graph()->add_output(), name, type, std::vector<std::string>(rank),
                      std::vector<int64_t>(rank, -1));
  }
  std::set<FeatureKey> on(const std::map<std::string, int64_t>& dims,
                          const std::map<std::string, uint64_t>& counters = {}) {
    onnxio::DimBinding b;
    b.byLabel = dims;
    return caseFeatures(prepareCaseOn(m, b, 1, 0), counters);
  }
};

TEST(Coverage, AViewChainIntoConcat) {
  // X[N, 4]; S = X[0:1, :] (a subview), T = S^T (its only consumer is an Unsqueeze: a view),
  // U = Unsqueeze(T, 0) (a view of a view), C = Concat(U, U): Slice + 2 links into Concat.
  Model t;
  t.input("X", {"N", ""}, {0, 4});
  std::string s =
      t.g.node("Slice", {"X", t.g.ints("s0", {0}), t.g.ints("e0", {1}), t.g.ints("a0", {0}), t.g.ints("p0", {1})});
  std::string tr = t.g.node("Transpose", {s}, {modelgen::intsAttr("perm", {1, 0})});
  std::string u = t.g.node("Unsqueeze", {tr, t.g.ints("ax", {0})});
  std::string c = t.g.node("Concat", {u, u}, {modelgen::intAttr("axis", 0)});
  t.output(c, 3);
  auto f = t.on({{"N", 3}});
  EXPECT_TRUE(f.count("Slice|view: subview (positive constant steps)"));
  EXPECT_TRUE(f.count("Transpose|view: permuted strides (strided consumers only)"));
  EXPECT_TRUE(f.count("Unsqueeze|view of a strided view"));
  EXPECT_TRUE(
      f.count("view chain|Slice + 2 or more of Transpose/Unsqueeze/Squeeze/Reshape, into Concat/Gather/Transpose"));
  EXPECT_TRUE(f.count("Concat|present"));
  EXPECT_FALSE(f.count("Slice|negative steps"));
  // Two inputs only, so not the n-ary form.
  EXPECT_FALSE(f.count("Concat|3+ data inputs on a dynamic axis, extents differ at run time"));
}

TEST(Coverage, ATransposeIntoConcatIsNoViewAndOneLinkIsNoChain) {
  Model t;
  t.input("X", {"N", ""}, {0, 4});
  std::string s = t.g.node("Slice", {"X", t.g.ints("s0", {0}), t.g.ints("e0", {1}), t.g.ints("a0", {0})});
  std::string tr = t.g.node("Transpose", {s}, {modelgen::intsAttr("perm", {1, 0})});
  std::string c = t.g.node("Concat", {tr, tr}, {modelgen::intAttr("axis", 0)});
  t.output(c, 2);
  auto f = t.on({{"N", 3}});
  EXPECT_TRUE(f.count("Slice|view: subview (positive constant steps)")); // steps default to 1
  EXPECT_FALSE(f.count("Transpose|view: permuted strides (strided consumers only)"));
  EXPECT_FALSE(
      f.count("view chain|Slice + 2 or more of Transpose/Unsqueeze/Squeeze/Reshape, into Concat/Gather/Transpose"));
}

TEST(Coverage, BroadcastOfARuntimeOneDimOnlyOnTheBindingThatMakesIt1) {
  // X[N, M]; e = N == 1 ? 1 : M; Y = X[:, :e]; Z = X + Y. On N=1, M=7 Y is [1, 1] against
  // X's [1, 7]: Y's axis 1 (dynamic, e is computed) is 1 and the output's is 7. On N=M=7 Y is X.
  Model t;
  t.input("X", {"N", "M"}, {0, 0});
  std::string shape = t.g.node("Shape", {"X"});
  std::string n = t.g.node("Gather", {shape, t.g.ints("i0", {0})}, {modelgen::intAttr("axis", 0)});
  std::string m = t.g.node("Gather", {shape, t.g.ints("i1", {1})}, {modelgen::intAttr("axis", 0)});
  std::string one = t.g.ints("one", {1});
  std::string e = t.g.node("Where", {t.g.node("Equal", {n, one}), one, m});
  std::string y = t.g.node("Slice", {"X", t.g.ints("z", {0}), e, t.g.ints("a1", {1})});
  std::string z = t.g.node("Add", {"X", y});
  t.output(z, 2);
  EXPECT_TRUE(t.on({{"N", 1}, {"M", 7}}).count("Add|broadcast of a runtime-1 dynamic dim"));
  EXPECT_FALSE(t.on({{"N", 7}, {"M", 7}}).count("Add|broadcast of a runtime-1 dynamic dim"));
  // N=1, M=1: Y's axis 1 is 1, but so is the output's: no broadcast.
  EXPECT_FALSE(t.on({{"N", 1}, {"M", 1}}).count("Add|broadcast of a runtime-1 dynamic dim"));
}

TEST(Coverage, NaryConcatNeedsExtentsThatDiffer) {
  // Concat(X, X[1:], X[::2]) on N=3: extents 3, 2, 2. Concat(X, X, X): 3, 3, 3.
  Model t;
  t.input("X", {"N"}, {0});
  std::string a = t.g.node("Slice", {"X", t.g.ints("s1", {1}), t.g.ints("e1", {kMax}), t.g.ints("a1", {0})});
  std::string b =
      t.g.node("Slice", {"X", t.g.ints("s2", {0}), t.g.ints("e2", {kMax}), t.g.ints("a2", {0}), t.g.ints("p2", {2})});
  t.output(t.g.node("Concat", {"X", a, b}, {modelgen::intAttr("axis", 0)}), 1);
  EXPECT_TRUE(t.on({{"N", 3}}).count("Concat|3+ data inputs on a dynamic axis, extents differ at run time"));
  Model same;
  same.input("X", {"N"}, {0});
  same.output(same.g.node("Concat", {"X", "X", "X"}, {modelgen::intAttr("axis", 0)}), 1);
  EXPECT_FALSE(same.on({{"N", 3}}).count("Concat|3+ data inputs on a dynamic axis, extents differ at run time"));
}

TEST(Coverage, RankZeroShapeOutputsNegativeStepsAndCopies) {
  // D = Shape(X)[0] (scalar index: rank 0, from Shape alone); R = X[::-1].
  Model t;
  t.input("X", {"N"}, {0});
  std::string d =
      t.g.node("Gather", {t.g.node("Shape", {"X"}), t.g.ints("k", {0}, true)}, {modelgen::intAttr("axis", 0)});
  std::string r = t.g.node("Slice", {"X", t.g.ints("s", {-1}), t.g.ints("e", {std::numeric_limits<int64_t>::min()}),
                                     t.g.ints("a", {0}), t.g.ints("p", {-1})});
  t.output(d, 0, onnx::TensorProto::INT64);
  t.output(r, 1);
  auto f = t.on({{"N", 3}}, {{"strided_copies", 2}, {"memcpy_copies", 0}});
  EXPECT_TRUE(f.count("any|rank-0 value"));
  EXPECT_TRUE(f.count("Gather|rank-0 output"));
  EXPECT_TRUE(f.count("output|computed from Shape alone"));
  EXPECT_TRUE(f.count("Slice|negative steps"));
  EXPECT_FALSE(f.count("Slice|view: subview (positive constant steps)"));
  EXPECT_TRUE(f.count("copy|strided"));
  EXPECT_FALSE(f.count("copy|memcpy")); // counted 0 times
}

TEST(Coverage, TheTableListsTrackedFeaturesFirstWithTheirShare) {
  // 3 of 12 valid cases: 25 %; a tracked feature no case had is a 0 row; an untracked key follows.
  auto rows = coverageTable({{"copy|strided", 3}, {"Pad|present", 6}}, 12);
  ASSERT_EQ(rows.size(), trackedFeatures().size() + 1);
  bool sawStrided = false;
  for (const auto& r : rows)
    if (r.op == "copy" && r.feature == "strided") {
      sawStrided = true;
      EXPECT_EQ(r.cases, 3);
      EXPECT_DOUBLE_EQ(r.percent, 25.0);
    } else if (r.op != "Pad") {
      EXPECT_EQ(r.cases, 0) << r.op << " " << r.feature;
    }
  EXPECT_TRUE(sawStrided);
  EXPECT_EQ(rows.back().op, "Pad");
  EXPECT_DOUBLE_EQ(rows.back().percent, 50.0);
  EXPECT_NE(coverageMarkdown(rows).find("| copy | strided | 3 | 25.0 |"), std::string::npos);
}

// MatMulNBits, 4 bits, block 16, N 2: K 20 (2 blocks, one byte of zero points per row) is padded
// but ends its zero-point row on a byte; K 40 (3 blocks, 12 bits, 2 bytes per row) ends mid-byte.
TEST(Coverage, MatMulNBitsPaddedBlockAndMidByteZeroPoints) {
  for (int64_t K : {20, 32, 40}) {
    Model t;
    const int64_t blocks = (K + 15) / 16, zpBytes = 2 * ((blocks * 4 + 7) / 8);
    t.input("X", {"N", ""}, {0, K});
    std::string b =
        t.g.initializer("B", Tensor::fromInts(DType::Uint8, {2, blocks, 8},
                                              std::vector<int64_t>(static_cast<size_t>(16 * blocks), 0x21)));
    std::string sc =
        t.g.initializer("S", Tensor::fromDoubles(DType::Float, {2 * blocks},
                                                 std::vector<double>(static_cast<size_t>(2 * blocks), 0.5)));
    std::string zp = t.g.initializer(
        "Z", Tensor::fromInts(DType::Uint8, {zpBytes}, std::vector<int64_t>(static_cast<size_t>(zpBytes), 0x77)));
    auto* ms = t.m.add_opset_import();
    ms->set_domain("com.microsoft");
    ms->set_version(1);
    std::string y = t.g.node("MatMulNBits", {"X", b, sc, zp},
                             {modelgen::intAttr("K", K), modelgen::intAttr("N", 2), modelgen::intAttr("bits", 4),
                              modelgen::intAttr("block_size", 16)});
    t.m.mutable_graph()->mutable_node(0)->set_domain("com.microsoft");
    t.output(y, 2);
    auto f = t.on({{"N", 3}});
    EXPECT_TRUE(f.count("MatMulNBits|present")) << K;
    EXPECT_EQ(f.count("MatMulNBits|K not a multiple of block_size (padded last block)"), K % 16 != 0 ? 1u : 0u) << K;
    EXPECT_EQ(f.count("MatMulNBits|packed zero points, a row ending mid-byte"), K == 40 ? 1u : 0u) << K;
  }
}

TEST(Coverage, TheGeneratorReachesEveryGraphFeatureInOnePercentOfValidCases) {
  // The features the graph and the bindings decide (copies need a compiled run: the campaign's).
  const int n = 200;
  int valid = 0;
  std::map<std::string, int> count;
  for (int k = 0; k < n; ++k) {
    GeneratedCase c = generate(caseSeed(7, static_cast<uint64_t>(k)));
    try {
      PreparedCase pc = prepareCase(c.model, 4, c.seed);
      ++valid;
      for (const auto& f : caseFeatures(pc, {}))
        ++count[f];
    } catch (const InvalidCase&) {
    }
  }
  ASSERT_GT(valid, 0);
  int broadcast = 0;
  for (const char* op : {"Add", "Sub", "Mul", "Expand"})
    broadcast = std::max(broadcast, count[std::string(op) + "|broadcast of a runtime-1 dynamic dim"]);
  EXPECT_GE(broadcast * 100, valid) << "broadcast of a runtime-1 dim";
  for (const char* f :
       {"Slice|view: subview (positive constant steps)", "Transpose|view: permuted strides (strided consumers only)",
        "view chain|Slice + 2 or more of Transpose/Unsqueeze/Squeeze/Reshape, into Concat/Gather/Transpose",
        "Concat|3+ data inputs on a dynamic axis, extents differ at run time", "any|rank-0 value",
        "Slice|negative steps", "output|computed from Shape alone",
        "MatMulNBits|K not a multiple of block_size (padded last block)",
        "MatMulNBits|packed zero points, a row ending mid-byte", "RotaryEmbedding|interleaved",
        "RotaryEmbedding|half-split", "GroupQueryAttention|a past (decode)",
        "GroupQueryAttention|a padded row (seqlens_k below total - 1) on some binding"})
    EXPECT_GE(count[f] * 100, valid) << f << ": " << count[f] << " of " << valid;
  for (const auto& [f, m] : count)
    std::cout << m << " / " << valid << "  " << f << "\n";
}

} // namespace
} // namespace dynqual::fuzz
