// The minimizer: reduces to a small valid graph that still has the property, never to one without.
#include "dynqual/fuzz/Generator.h"
#include "dynqual/fuzz/Minimizer.h"
#include "dynqual/fuzz/Oracle.h"
#include "dynqual/modelgen/GraphBuilder.h"

#include <gtest/gtest.h>

#include <algorithm>

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
  for (uint64_t k = 0; k < 120 && reduced < 5; ++k) {
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

// y = Compress(x, Less(x, 0)). A bug that needs only the Compress keeps the Less under cuts and
// bypasses of first inputs (x is already a graph input, and Less's output is the condition, the
// second input); promoting the condition to a graph input leaves the Compress alone.
TEST(Minimizer, PromotesAnyInputNotOnlyTheFirst) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("compress");
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("N");
  auto* zero = g->add_initializer();
  zero->set_name("zero");
  zero->set_data_type(onnx::TensorProto::FLOAT);
  zero->add_float_data(0.0f);
  auto* less = g->add_node();
  less->set_op_type("Less");
  less->add_input("x");
  less->add_input("zero");
  less->add_output("c");
  auto* compress = g->add_node();
  compress->set_op_type("Compress");
  compress->add_input("x");
  compress->add_input("c");
  compress->add_output("y");
  auto* y = g->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  y->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
  ASSERT_TRUE(needs("Compress")(m));
  MinimizeStats st;
  onnx::ModelProto small = minimize(m, needs("Compress"), 50, &st);
  ASSERT_EQ(small.graph().node_size(), 1);
  EXPECT_EQ(small.graph().node(0).op_type(), "Compress");
  bool conditionIsInput = false;
  for (const auto& in : small.graph().input())
    conditionIsInput |= in.name() == "c";
  EXPECT_TRUE(conditionIsInput);
}

// ONNX has no schema for the contrib ops: their outputs get a rank from completeRanks, and a
// Shape of a value downstream of one does not crash data propagation (libonnx segfaulted on
// Shape(Slice(GroupQueryAttention)) while the outputs had no type at all).
TEST(Minimizer, ContribOutputsGetARankAndTheirShapeDoesNotCrashInference) {
  onnx::ModelProto m = modelgen::newModel("test", 17);
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  modelgen::GraphBuilder g(*m.mutable_graph());
  modelgen::declare(m.mutable_graph()->add_input(), "q", onnx::TensorProto::FLOAT, {"B", "S", ""}, {0, 0, 24});
  modelgen::declare(m.mutable_graph()->add_input(), "sl", onnx::TensorProto::INT32, {"B"}, {0});
  modelgen::declare(m.mutable_graph()->add_input(), "tot", onnx::TensorProto::INT32, {}, {});
  auto gqa = g.nodeN("GroupQueryAttention", {"q", "", "", "", "", "sl", "tot"}, 3,
                     {modelgen::intAttr("num_heads", 2), modelgen::intAttr("kv_num_heads", 1)});
  m.mutable_graph()->mutable_node(0)->set_domain("com.microsoft");
  std::string mm = g.node("MatMulNBits", {gqa[0], g.ints("b", {0}), g.ints("s", {0})},
                          {modelgen::intAttr("K", 12), modelgen::intAttr("N", 5)});
  m.mutable_graph()->mutable_node(1)->set_domain("com.microsoft");
  std::string sliced = g.node("Slice", {gqa[1], g.ints("st", {0}), g.ints("en", {1}), g.ints("ax", {0})});
  std::string shape = g.node("Shape", {sliced});
  modelgen::declare(m.mutable_graph()->add_output(), shape, onnx::TensorProto::INT64, {""}, {4});
  modelgen::declare(m.mutable_graph()->add_output(), g.node("Shape", {mm}), onnx::TensorProto::INT64, {""}, {3});
  auto types = inferredTypes(m);
  auto rank = [&](const std::string& v) {
    return types.count(v) && types.at(v).tensor_type().has_shape() ? types.at(v).tensor_type().shape().dim_size() : -1;
  };
  EXPECT_EQ(rank(gqa[0]), 3);
  EXPECT_EQ(rank(gqa[1]), 4);
  EXPECT_EQ(rank(gqa[2]), 4);
  EXPECT_EQ(rank(sliced), 4);
  ASSERT_EQ(rank(mm), 3);
  // MatMulNBits: its input's dims with N last.
  EXPECT_EQ(types.at(mm).tensor_type().shape().dim(2).dim_value(), 5);
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

/// "Fails" when the case is valid on binding `b` (the reference runs it) and `need` holds.
StillFailsOn validAnd(std::function<bool(const onnx::ModelProto&, const onnxio::DimBinding&)> need) {
  return [need](const onnx::ModelProto& m, const onnxio::DimBinding& b) {
    if (!need(m, b))
      return false;
    try {
      prepareCaseOn(m, b, 7, 0);
      return true;
    } catch (const InvalidCase&) {
      return false;
    }
  };
}

TEST(Shrink, BindingValuesGoToTheSmallestThatStillFails) {
  int shrunk = 0;
  for (uint64_t k = 0; k < 60 && shrunk < 5; ++k) {
    GeneratedCase c = generate(caseSeed(11, k));
    // The "larger" binding, every symbol 7, found by its kind: the oracle's bindings leave the
    // "zero" one out, so its index is not the one makeBindings gives it.
    PreparedCase pc;
    try {
      pc = prepareCase(c.model, 4, c.seed);
    } catch (const InvalidCase&) {
      continue;
    }
    auto larger = std::find_if(pc.bindings.begin(), pc.bindings.end(),
                               [](const onnxio::NamedBinding& nb) { return nb.kind == "larger"; });
    if (larger == pc.bindings.end())
      continue;
    onnxio::DimBinding b = larger->binding;
    if (b.byLabel.size() < 2 || !b.byLabel.count("N0"))
      continue;
    for (const auto& [label, v] : b.byLabel)
      ASSERT_EQ(v, 7) << label << ", seed " << c.seed; // 2 * traced 3 + 1
    // A stand-in bug that needs N0 >= 3: 7 -> 3 (7/2) is the first candidate that still fails,
    // and from 3 none of 1, 2 does. Every other symbol can go to 1.
    auto needs = validAnd([](const onnx::ModelProto&, const onnxio::DimBinding& d) { return d.byLabel.at("N0") >= 3; });
    ASSERT_TRUE(needs(c.model, b)) << "seed " << c.seed;
    ShrinkStats st;
    onnx::ModelProto small = shrinkDims(c.model, b, needs, 100, &st);
    EXPECT_TRUE(needs(small, b));
    EXPECT_EQ(b.byLabel.at("N0"), 3) << "seed " << c.seed;
    for (const auto& [label, v] : b.byLabel)
      if (label != "N0")
        EXPECT_EQ(v, 1) << label << ", seed " << c.seed;
    EXPECT_LT(st.elementsAfter, st.elementsBefore);
    EXPECT_EQ(st.elementsAfter, inputElements(small, b));
    EXPECT_LE(st.tries, 100);
    ++shrunk;
  }
  EXPECT_EQ(shrunk, 5) << "too few generated cases with two symbols";
}

// A cut or promotion keeps the output declarations of the larger graph. Here y = Cast(x), x
// f32[N, N], declared f32[2, ?]: on N=1 the reference computes [1, 1], which contradicts the
// declared 2; the compiled program would trap in its boundary check (an ABI cast) for that
// reason alone, so the binding is invalid and a reduction cannot drift to it. On N=2 it holds.
TEST(Shrink, ABindingThatContradictsADeclaredOutputDimIsInvalid) {
  onnx::ModelProto m = modelgen::newModel("test", 17);
  m.mutable_graph()->set_name("declared");
  modelgen::GraphBuilder g(*m.mutable_graph());
  modelgen::declare(m.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {"N", "N"}, {0, 0});
  std::string y = g.node("Cast", {"x"}, {modelgen::intAttr("to", onnx::TensorProto::FLOAT)});
  modelgen::declare(m.mutable_graph()->add_output(), y, onnx::TensorProto::FLOAT, {"", ""}, {2, -1});
  onnxio::DimBinding one, two;
  one.byLabel["N"] = 1;
  two.byLabel["N"] = 2;
  try {
    prepareCaseOn(m, one, 7, 0);
    ADD_FAILURE() << "N=1 contradicts the declared [2, ?]";
  } catch (const InvalidCase& e) {
    EXPECT_NE(std::string(e.what()).find("is declared [2, ?] but the reference computes [1, 1]"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(prepareCaseOn(m, two, 7, 0));
  // Replaying a model as it is (no check) keeps its declarations out of validity.
  EXPECT_NO_THROW(prepareCase(m, 4, 7, 0, /*check=*/false));
}

TEST(Shrink, StaticInputDimsShrinkOnlyWhereTheGraphStaysValid) {
  // x f32[6, N]: Reshape(x, [2, 3, -1]) needs a multiple of 6 rows; z f32[4, N]: Transpose(z)
  // works for any rows. Outputs declared with unknown dims.
  onnx::ModelProto m = modelgen::newModel("test", 17);
  m.mutable_graph()->set_name("shrink");
  modelgen::GraphBuilder g(*m.mutable_graph());
  modelgen::declare(m.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {"", "N"}, {6, 0});
  modelgen::declare(m.mutable_graph()->add_input(), "z", onnx::TensorProto::FLOAT, {"", "N"}, {4, 0});
  std::string r = g.node("Reshape", {"x", g.ints("shape", {2, 3, -1})});
  std::string t = g.node("Transpose", {"z"}, {modelgen::intsAttr("perm", {1, 0})});
  modelgen::declare(m.mutable_graph()->add_output(), r, onnx::TensorProto::FLOAT, {"", "", ""}, {-1, -1, -1});
  modelgen::declare(m.mutable_graph()->add_output(), t, onnx::TensorProto::FLOAT, {"", ""}, {-1, -1});
  onnxio::DimBinding b;
  b.byLabel["N"] = 5;
  auto hasTranspose =
      validAnd([](const onnx::ModelProto& c, const onnxio::DimBinding&) { return countOp(c, "Transpose") > 0; });
  ASSERT_TRUE(hasTranspose(m, b));
  ShrinkStats st;
  onnx::ModelProto small = shrinkDims(m, b, hasTranspose, 100, &st);
  EXPECT_EQ(small.graph().input(0).type().tensor_type().shape().dim(0).dim_value(), 6); // 1, 3, 5 are invalid
  EXPECT_EQ(small.graph().input(1).type().tensor_type().shape().dim(0).dim_value(), 1);
  EXPECT_EQ(b.byLabel.at("N"), 1);
  EXPECT_EQ(st.elementsBefore, 6 * 5 + 4 * 5);
  EXPECT_EQ(st.elementsAfter, 6 * 1 + 1 * 1);
}

TEST(Shrink, StaysWithinItsBudgetAndKeepsTheInputWhenNothingSmallerFails) {
  GeneratedCase c = generate(caseSeed(11, 2));
  PreparedCase pc = prepareCase(c.model, 4, c.seed, 3);
  onnxio::DimBinding b = pc.bindings[0].binding, original = b;
  int calls = 0;
  StillFailsOn never = [&](const onnx::ModelProto&, const onnxio::DimBinding&) {
    ++calls;
    return false;
  };
  ShrinkStats st;
  onnx::ModelProto same = shrinkDims(c.model, b, never, 3, &st);
  EXPECT_EQ(modelgen::serializeDeterministic(same), modelgen::serializeDeterministic(c.model));
  EXPECT_EQ(b.byLabel, original.byLabel);
  EXPECT_EQ(calls, std::min(3, calls));
  EXPECT_LE(st.tries, 3);
  EXPECT_EQ(st.accepted, 0);
  EXPECT_EQ(st.elementsAfter, st.elementsBefore);
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
