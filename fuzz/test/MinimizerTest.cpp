// The minimizer: reduces to a small valid graph that still has the property, never to one without.
#include "dynqual/fuzz/Generator.h"
#include "dynqual/fuzz/Minimizer.h"
#include "dynqual/fuzz/Oracle.h"

#include <gtest/gtest.h>

namespace dynqual::fuzz {
namespace {

int countOp(const onnx::ModelProto& m, const std::string& op) {
  int n = 0;
  for (const auto& node : m.graph().node())
    n += node.op_type() == op;
  return n;
}

/// "Fails" when the case is valid and holds a node of `op`: a stand-in for a compiler bug that
/// needs that op, so the test runs without a compiler.
StillFails needs(const std::string& op) {
  return [op](const onnx::ModelProto& m) {
    if (countOp(m, op) == 0)
      return false;
    try {
      prepareCase(m, 2, 7);
      return true;
    } catch (const InvalidCase&) {
      return false;
    }
  };
}

TEST(Minimizer, ReducesToAFewNodesKeepingTheProperty) {
  int reduced = 0;
  for (uint64_t k = 0; k < 40 && reduced < 5; ++k) {
    GeneratedCase c = generate(caseSeed(9, k));
    if (countOp(c.model, "Transpose") == 0 || c.nodes < 10 || !needs("Transpose")(c.model))
      continue;
    MinimizeStats st;
    onnx::ModelProto small = minimize(c.model, needs("Transpose"), 300, &st);
    EXPECT_TRUE(needs("Transpose")(small)) << "seed " << c.seed;
    EXPECT_EQ(st.nodesBefore, c.nodes);
    EXPECT_EQ(st.nodesAfter, small.graph().node_size());
    // One Transpose is enough; everything else is removable by a cut or a bypass.
    EXPECT_LE(small.graph().node_size(), 2) << "seed " << c.seed << " from " << c.nodes;
    ++reduced;
  }
  EXPECT_EQ(reduced, 5) << "too few generated cases hold a Transpose";
}

TEST(Minimizer, ReturnsTheInputWhenNothingSmallerFails) {
  GeneratedCase c = generate(caseSeed(9, 1));
  int calls = 0;
  StillFails onlyOriginal = [&](const onnx::ModelProto& m) {
    ++calls;
    return m.graph().node_size() == c.nodes;
  };
  MinimizeStats st;
  onnx::ModelProto same = minimize(c.model, onlyOriginal, 50, &st);
  EXPECT_EQ(same.graph().node_size(), c.nodes);
  EXPECT_EQ(st.accepted, 0);
  EXPECT_GT(calls, 0);
  EXPECT_LE(st.tries, 50);
}

} // namespace
} // namespace dynqual::fuzz

#include "dynqual/fuzz/CaseRunner.h"

namespace dynqual::fuzz {
namespace {

TEST(Attribution, RemovesOnePassWithItsOptionsAndSeparator) {
  const std::string spec = "builtin.module(cse, func.func(dq-use-output-allocator, dq-optimize-memrefs{inject=x}, "
                           "dq-pool-allocs, dq-lower-copies))";
  EXPECT_EQ(removePass(spec, "dq-optimize-memrefs"),
            "builtin.module(cse, func.func(dq-use-output-allocator, dq-pool-allocs, dq-lower-copies))");
  EXPECT_EQ(removePass(spec, "dq-lower-copies"),
            "builtin.module(cse, func.func(dq-use-output-allocator, dq-optimize-memrefs{inject=x}, dq-pool-allocs))");
  EXPECT_EQ(removePass(spec, "dq-materialize-host-scalars"), "");
  EXPECT_EQ(removePass("a(dq-pool-allocs-extra)", "dq-pool-allocs"), "");
}

} // namespace
} // namespace dynqual::fuzz
