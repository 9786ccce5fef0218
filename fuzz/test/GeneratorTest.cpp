// The generator: deterministic from the seed, valid for every binding, big and varied enough.
#include "dynqual/fuzz/Generator.h"
#include "dynqual/fuzz/Oracle.h"
#include "dynqual/fuzz/SymbolicDim.h"
#include "dynqual/modelgen/GraphBuilder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace dynqual::fuzz {
namespace {

TEST(SymbolicDim, PolynomialsCompareByValueForEveryBinding) {
  std::vector<Atom> atoms = {{"N0", true, false}, {"N1", true, false}, {"s2", false, true}};
  Poly n0 = Poly::atom(0), n1 = Poly::atom(1), s = Poly::atom(2);
  EXPECT_EQ(n0 * n1 * Poly::constant(2), Poly::constant(2) * n1 * n0);
  EXPECT_NE(n0 * n1, n0 + n1);
  EXPECT_EQ((n0 + n1).evaluate({3, 5, 0}), 8);
  EXPECT_EQ((n0 * n1 * Poly::constant(2)).evaluate({3, 5, 0}), 30);
  // Input symbols are >= 1, an opaque extent that may be empty is >= 0.
  EXPECT_EQ((n0 * n1).minValue(atoms), 1);
  EXPECT_EQ((n0 * s).minValue(atoms), 0);
  EXPECT_EQ((n0 + s + Poly::constant(2)).minValue(atoms), 3);
  EXPECT_EQ((Poly::constant(2) * n0 * n1).text(atoms), "2*N0*N1");
}

TEST(Generator, SameSeedSameBytesOtherSeedOtherGraph) {
  for (uint64_t seed : {1ull, 2ull, 77ull, 123456789ull}) {
    std::string a = modelgen::serializeDeterministic(generate(seed).model);
    std::string b = modelgen::serializeDeterministic(generate(seed).model);
    EXPECT_EQ(a, b) << "seed " << seed;
    EXPECT_NE(a, modelgen::serializeDeterministic(generate(seed + 1).model)) << "seed " << seed;
  }
  EXPECT_NE(caseSeed(1, 0), caseSeed(1, 1));
  EXPECT_NE(caseSeed(1, 0), caseSeed(2, 0));
  EXPECT_EQ(caseSeed(5, 9), caseSeed(5, 9));
}

TEST(Generator, AtLeast95PercentValidWithMedianOf8OpsAndEveryOpKind) {
  const int n = 300;
  int valid = 0;
  std::vector<int> sizes;
  std::map<std::string, int> ops;
  std::map<std::string, int> reasons;
  bool sawRank0Output = false, sawShapeOutput = false, sawZeroExtent = false;
  for (int k = 0; k < n; ++k) {
    GeneratedCase c = generate(caseSeed(42, static_cast<uint64_t>(k)));
    sizes.push_back(c.nodes);
    for (const auto& [op, m] : c.opCounts)
      ops[op] += m;
    try {
      PreparedCase pc = prepareCase(c.model, 4, c.seed);
      ++valid;
      for (size_t o = 0; o < pc.expected[0].size(); ++o) {
        sawRank0Output |= pc.expected[0][o].rank() == 0;
        sawShapeOutput |= pc.expected[0][o].dtype() == DType::Int64;
      }
      for (const auto& outs : pc.expected)
        for (const auto& t : outs)
          sawZeroExtent |= t.numel() == 0;
    } catch (const InvalidCase& e) {
      std::string why = e.what();
      ++reasons[why.substr(0, 120)];
    }
  }
  for (const auto& [why, m] : reasons)
    std::cout << "invalid x" << m << ": " << why << "\n";
  EXPECT_GE(valid * 100, 95 * n) << valid << " of " << n << " valid";
  std::sort(sizes.begin(), sizes.end());
  EXPECT_GE(sizes[sizes.size() / 2], 8) << "median graph size";
  for (const char* op : {"Reshape", "Slice", "Expand", "Unsqueeze", "Squeeze", "Flatten", "Concat", "Transpose",
                         "Split", "Gather", "Shape", "Add", "Sub", "Mul", "Cast"})
    EXPECT_GT(ops[op], 0) << op << " never generated";
  EXPECT_TRUE(sawRank0Output);
  EXPECT_TRUE(sawShapeOutput);
  EXPECT_TRUE(sawZeroExtent);
}

TEST(Generator, DeadNodeRemovalKeepsOnlyWhatReachesAnOutput) {
  onnx::ModelProto m = modelgen::newModel("test", 17);
  modelgen::GraphBuilder g(*m.mutable_graph());
  modelgen::declare(m.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {"N"}, {0});
  std::string used = g.node("Neg", {"x"});
  g.node("Shape", {"x"});  // dead
  modelgen::declare(m.mutable_graph()->add_output(), used, onnx::TensorProto::FLOAT, {"N"}, {0});
  removeDeadNodes(m);
  ASSERT_EQ(m.graph().node_size(), 1);
  EXPECT_EQ(m.graph().node(0).op_type(), "Neg");
  EXPECT_EQ(m.graph().input_size(), 1);
}

} // namespace
} // namespace dynqual::fuzz
