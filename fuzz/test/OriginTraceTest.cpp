// The origin trace on fixed graphs through the compiler (child processes of the built binaries):
// a knob that makes a wrong extent in one node and fails in a later one is keyed on the first.
#include "dynqual/fuzz/Bucket.h"
#include "dynqual/fuzz/OriginTrace.h"
#include "dynqual/modelgen/GraphBuilder.h"

#include <gtest/gtest.h>

#include "ShellTestUtil.h"

#include <filesystem>

namespace fs = std::filesystem;

namespace dynqual::fuzz {
namespace {

struct TempDir : fuzztest::TempDir {
  TempDir() : fuzztest::TempDir("dynqual-origin-trace-test") {}
};

/// x: f32[a, b]. t = Transpose(x) -> [b, a]; r = Reshape(x, Gather(Shape(x), [1, 0])) -> [b, a];
/// y = Add(r, t) -> [b, a]. Under reshape-by-type-equality the Reshape (`?x?` to `?x?`) is
/// removed, so r keeps [a, b] (docs/fuzz/knobs.md, knob 1), and the Add then meets [a, b] and
/// [b, a]: the failure shows at the Add, the wrong extent is made by the Reshape.
onnx::ModelProto reshapeThenAdd() {
  onnx::ModelProto m = modelgen::newModel("origin-trace-test", 17);
  auto* g = m.mutable_graph();
  g->set_name("reshape_then_add");
  modelgen::declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {"a", "b"}, {-1, -1});
  modelgen::GraphBuilder b(*g);
  std::string t = b.node("Transpose", {"x"}, {modelgen::intsAttr("perm", {1, 0})});
  b.nameLast("t");
  std::string s = b.node("Shape", {"x"});
  std::string perm = b.ints("perm", {1, 0});
  std::string swapped = b.node("Gather", {s, perm});
  std::string r = b.node("Reshape", {"x", swapped});
  b.nameLast("r");
  b.node("Add", {"r", "t"});
  b.nameLast("y");
  modelgen::declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {"", ""}, {-1, -1});
  for (int k = 0; k < g->node_size(); ++k)
    g->mutable_node(k)->set_name(g->node(k).op_type() + "_" + std::to_string(k));
  return m;
}

OracleConfig childConfig() {
  OracleConfig c;
  c.binDir = fs::path(DYNQUAL_BIN).parent_path();
  return c;
}

PreparedCase onBinding(const onnx::ModelProto& m, int64_t a, int64_t b) {
  onnxio::DimBinding binding;
  binding.byLabel = {{"a", a}, {"b", b}};
  return prepareCaseOn(m, binding, 1, 0);
}

TEST(OriginTrace, CutAfterNodeExposesItsOutputsWithUnknownDims) {
  onnx::ModelProto m = reshapeThenAdd();
  onnx::ModelProto cut;
  // Node 3 is the Reshape: the Add goes, the Transpose (not on r's path) goes too.
  ASSERT_TRUE(cutAfterNode(m, 3, cut));
  ASSERT_EQ(cut.graph().output_size(), 1);
  EXPECT_EQ(cut.graph().output(0).name(), "r");
  const auto& shape = cut.graph().output(0).type().tensor_type().shape();
  ASSERT_EQ(shape.dim_size(), 2);
  EXPECT_FALSE(shape.dim(0).has_dim_value() || shape.dim(0).has_dim_param());
  EXPECT_EQ(cut.graph().node_size(), 3); // Shape, Gather, Reshape
  EXPECT_FALSE(cutAfterNode(m, 9, cut));
}

// The finding shows at the Add; today's key names the Add (or the runtime instruction that
// trapped), the traced key names the Reshape, where the wrong extent is made.
TEST(OriginTrace, WrongExtentIsKeyedOnTheNodeThatMadeIt) {
  TempDir dir;
  onnx::ModelProto m = reshapeThenAdd();
  PreparedCase pc = onBinding(m, 2, 3);
  OracleConfig c = childConfig();
  const std::string knob = "dq:production{inject=reshape-by-type-equality}@sim";
  c.variants = {exec::parseVariant(knob)};
  OracleResult r = runOracle(pc, c, dir.path / "full");
  ASSERT_EQ(r.findings.size(), 1u) << "the knob must fail the whole graph";
  const Finding& f = r.findings[0];
  ASSERT_TRUE(traceableSymptom(f.symptom)) << f.symptom << ": " << f.detail;
  BucketKey today = makeBucketKey(f.symptom, "unattributed", m, f.detail);
  EXPECT_NE(today.origin, "Reshape") << "without the trace the key names the later failure: " << today.text();

  OriginTrace t = traceOrigin(pc, c, f.variant, dir.path / "trace");
  ASSERT_EQ(t.result, OriginTrace::Result::Difference) << t.note();
  EXPECT_EQ(t.op, "Reshape") << t.note();
  EXPECT_EQ(t.node, "Reshape_3");
  EXPECT_EQ(t.kind, "wrong-shape") << t.note();
  // Transpose_0, Shape_1 and Gather_2 (the [1, 0] is an initializer, not a node) run clean first.
  EXPECT_EQ(t.cuts, 4) << t.note();
  BucketKey traced = tracedBucketKey(today, t);
  EXPECT_EQ(traced.text(), std::string("wrong-shape|unattributed|Reshape|") + kTracedMessage);
  EXPECT_FALSE(fs::exists(dir.path / "trace")) << "the trace removes its work files";

  // On production nothing differs: the trace runs every cut and finds nothing.
  OracleConfig prod = childConfig();
  OriginTrace clean = traceOrigin(pc, prod, "dq:production@sim", dir.path / "clean");
  EXPECT_EQ(clean.result, OriginTrace::Result::Clean) << clean.note();
  EXPECT_EQ(tracedBucketKey(today, clean).text(), today.text());
}

// A cut that traps before any output differs keys the bucket on that trap: under
// output-rank-collapse every output allocation traps, the first cut's (the Transpose) included,
// so the key names the runtime instruction as the untraced key does.
TEST(OriginTrace, TrapBeforeAnyDifferenceKeysOnTheTrap) {
  TempDir dir;
  onnx::ModelProto m = reshapeThenAdd();
  PreparedCase pc = onBinding(m, 2, 3);
  OracleConfig c = childConfig();
  const std::string knob = "dq:production{inject=output-rank-collapse}@sim";
  c.variants = {exec::parseVariant(knob)};
  OracleResult r = runOracle(pc, c, dir.path / "full");
  ASSERT_EQ(r.findings.size(), 1u);
  BucketKey today = makeBucketKey(r.findings[0].symptom, "unattributed", m, r.findings[0].detail);
  OriginTrace t = traceOrigin(pc, c, r.findings[0].variant, dir.path / "trace");
  ASSERT_EQ(t.result, OriginTrace::Result::Trap) << t.note();
  EXPECT_EQ(t.node, "Transpose_0");
  EXPECT_EQ(t.cuts, 1);
  EXPECT_EQ(t.trapOrigin, "AllocOutput") << t.note();
  BucketKey traced = tracedBucketKey(today, t);
  EXPECT_EQ(traced.symptom, "run-trap");
  EXPECT_EQ(traced.origin, today.origin) << today.text();
  EXPECT_EQ(traced.message.rfind("traced: ", 0), 0u) << traced.text();
}

// A trace that cannot run at all (a variant that does not parse) loses nothing: an Error result,
// the key unchanged.
TEST(OriginTrace, TraceThatCannotRunIsAnErrorNotAnException) {
  TempDir dir;
  onnx::ModelProto m = reshapeThenAdd();
  PreparedCase pc = onBinding(m, 2, 3);
  OriginTrace t;
  EXPECT_NO_THROW(t = traceOrigin(pc, childConfig(), "dq:production{inject=no-such-knob}@sim", dir.path / "t"));
  EXPECT_EQ(t.result, OriginTrace::Result::Error);
  EXPECT_NE(t.note().find("no-such-knob"), std::string::npos) << t.note();
  BucketKey today{"run-trap", "unattributed", "Add", "x"};
  EXPECT_EQ(tracedBucketKey(today, t).text(), today.text());
}

} // namespace
} // namespace dynqual::fuzz
