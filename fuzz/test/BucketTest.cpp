// Bucket keys: the normalized message and the origin op, from hand-written messages and graphs.
#include "dynqual/fuzz/Bucket.h"

#include <gtest/gtest.h>

namespace dynqual::fuzz {
namespace {

/// y = Reshape(Slice(x, ...), shape): two named nodes and one graph output.
onnx::ModelProto twoNodes() {
  onnx::ModelProto m;
  auto* g = m.mutable_graph();
  auto* s = g->add_node();
  s->set_name("Slice_3");
  s->set_op_type("Slice");
  s->add_input("x");
  s->add_output("s");
  auto* r = g->add_node();
  r->set_name("Reshape_12");
  r->set_op_type("Reshape");
  r->add_input("s");
  r->add_output("y");
  g->add_output()->set_name("y");
  g->add_input()->set_name("x");
  return m;
}

TEST(Bucket, NormalizedMessageDropsWhereNumbersNamesAndShapes) {
  // Two traps of one bug on different cases: other instruction, node, buffer sizes and shapes.
  std::string a = "v0 case: run: /tmp/dynqual-fuzz-x/case-0/model.dqp: instruction 12 (Kernel 'slice') at Slice_3: out "
                  "of bounds: kernel slice operand 1 "
                  "bytes [0, 96) of buffer 7 (64 bytes)";
  std::string b = "v0 case: run: instruction 4 (Kernel 'slice') at Slice_41: out of bounds: kernel slice operand 1 "
                  "bytes [0, 24) of buffer 2 (16 bytes)";
  // By hand: the stage prefix and "instruction N (...) at LOC: " go, every token with a digit
  // becomes # (the half-open "[0, 96)" has no "]", so it is not a list).
  EXPECT_EQ(normalizeMessage(a), "out of bounds: kernel slice operand # bytes [#, #) of buffer # (# bytes)");
  EXPECT_EQ(normalizeMessage(a), normalizeMessage(b));
  EXPECT_EQ(normalizeMessage("v1 case: compile: dynqual compile: /tmp/dynqual-fuzz-ab12/case/model.onnx: 'dq.reshape' "
                             "op result shape [2, 3] vs [6]"),
            "PATH: '_' op result shape [_] vs [_]");
  // A different failure stays different.
  EXPECT_NE(normalizeMessage(a), normalizeMessage("v0 case: run: unsynchronized read: host load of bytes [0, 8)"));
  // At most 120 characters.
  EXPECT_EQ(normalizeMessage(std::string(300, 'a') + " b").size(), 120u);
}

TEST(Bucket, OriginIsTheNamedNodeElseTheFailingOutputsProducer) {
  onnx::ModelProto m = twoNodes();
  EXPECT_EQ(originOp(m, "instruction 4 (Kernel 'slice') at Slice_3: out of bounds"), "Slice");
  // A trap outside a kernel: the runtime instruction, not the node it serves.
  EXPECT_EQ(originOp(m, "/tmp/x/model.dqp: instruction 8 (AllocOutput) at Slice_3: output 0 'y': shape [2] does not "
                        "match the declared [?,2]"),
            "AllocOutput");
  // Whole words only: "Slice_30" is not "Slice_3".
  EXPECT_EQ(originOp(m, "instruction 4 at Slice_30: out of bounds"), "-");
  // The earliest name in the text wins.
  EXPECT_EQ(originOp(m, "at Reshape_12: input from Slice_3"), "Reshape");
  // A comparison names the output; its producer is the Reshape.
  EXPECT_EQ(originOp(m, "output 'y': shape [2, 3] vs expected [6]"), "Reshape");
  EXPECT_EQ(originOp(m, "2 outputs vs 1 expected"), "-");
}

TEST(Bucket, KeyHasTheFourPartsAndAStableHash) {
  onnx::ModelProto m = twoNodes();
  BucketKey k =
      makeBucketKey("run-trap", "unattributed", m, "v0 case: run: instruction 3 at Slice_3: unknown buffer 5");
  EXPECT_EQ(k.text(), "run-trap|unattributed|Slice|unknown buffer #");
  BucketKey k2 =
      makeBucketKey("run-trap", "unattributed", m, "v0 case: run: instruction 9 at Slice_3: unknown buffer 1");
  EXPECT_EQ(k.hash(), k2.hash());
  EXPECT_EQ(k.hash().size(), 16u);
  BucketKey other = makeBucketKey("wrong-shape", "unattributed", m, "output 'y': shape [2] vs expected [3]");
  EXPECT_NE(k.hash(), other.hash());
}

TEST(Bucket, GraphTextListsInputsNodesAndOutputs) {
  onnx::ModelProto m = twoNodes();
  EXPECT_EQ(graphText(m), "input x: ?\nSlice_3 = Slice(x) -> s\nReshape_12 = Reshape(s) -> y\noutput y: ?\n");
}

TEST(Bucket, TracedKeyNamesTheFirstDifferenceOrTheFirstTrap) {
  BucketKey today{"run-trap", "unattributed", "Concat", "out of bounds: kernel concat operand #"};
  OriginTrace diff;
  diff.result = OriginTrace::Result::Difference;
  diff.op = "Reshape";
  diff.kind = "wrong-shape";
  EXPECT_EQ(tracedBucketKey(today, diff).text(), std::string("wrong-shape|unattributed|Reshape|") + kTracedMessage);
  // Traps of one bug in the Reshape's own instructions (a view that overruns buffers living in
  // different places, an ABI shape check): one key, on the node cut after.
  OriginTrace a, b, c;
  a.result = b.result = c.result = OriginTrace::Result::Trap;
  a.kind = b.kind = c.kind = "run-trap";
  a.op = b.op = c.op = "Reshape";
  a.detail = "v0 case: run: instruction 32 (View) at Reshape_6: out of bounds: view with offset 0, sizes [2,2], "
             "strides [2,1] touches bytes [0, 16) outside its allocation [0, 8)";
  b.detail = "v0 case: run: instruction 14 (View) at Reshape_4: out of bounds: view with offset 0, sizes [4,4,1], "
             "strides [4,1,1] touches bytes [0, 64) outside its program input [0, 16)";
  c.detail = "instruction 7 (CheckShape 'memref.cast to 1-d static dims at Reshape_13') at Reshape_13: ABI cast "
             "check failed: the view has shape [3] but the cast demands [9]";
  EXPECT_EQ(tracedBucketKey(today, a).text(), std::string("run-trap|unattributed|Reshape|") + kTracedTrapMessage);
  EXPECT_EQ(tracedBucketKey(today, a).text(), tracedBucketKey(today, b).text());
  EXPECT_EQ(tracedBucketKey(today, a).text(), tracedBucketKey(today, c).text());
  // An output allocation serves every node: keyed on the instruction and its headline, not the op.
  OriginTrace alloc = a;
  alloc.op = "Transpose";
  alloc.detail = "v0 case: run: instruction 8 (AllocOutput) at Transpose_0: output 0 'y': shape [6] does not match "
                 "the declared [?,?]";
  EXPECT_EQ(tracedBucketKey(today, alloc).text(), "run-trap|unattributed|AllocOutput|traced: output # '_'");
  // A cut that does not compile, nothing failing, or a trace that could not run: today's key.
  OriginTrace compile = a;
  compile.kind = "compile-error";
  EXPECT_EQ(tracedBucketKey(today, compile).text(), today.text());
  OriginTrace clean;
  clean.result = OriginTrace::Result::Clean;
  EXPECT_EQ(tracedBucketKey(today, clean).text(), today.text());
  EXPECT_EQ(tracedBucketKey(today, OriginTrace{}).text(), today.text());
}

} // namespace
} // namespace dynqual::fuzz
