// dq::CompileSession: compiles in a reused MLIR context give the same artifact bytes and the same
// errors as compileOnnxModel's fresh context per compile, and the context is replaced on schedule.
#include "dq/Pipeline/CompileSession.h"
#include "dq/runtime/ProgramIO.h"

#include "../../../harness/test/TestModels.h"

#include <gtest/gtest.h>

namespace {

using dynqual::DType;
using namespace dynqual::test;

/// y = Reshape(x + x, [-1]) over x[d0, 3]: a dynamic dim through elementwise and reshape.
onnx::ModelProto addReshape() {
  onnx::ModelProto m =
      emptyModel(17, {tensorValue("x", DType::Float, {-1, 3})}, {tensorValue("y", DType::Float, {-1})});
  auto* shape = m.mutable_graph()->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(static_cast<int32_t>(DType::Int64));
  shape->add_dims(1);
  shape->add_int64_data(-1);
  addNode(m, "Add", {"x", "x"}, {"s"});
  addNode(m, "Reshape", {"s", "shape"}, {"y"});
  return m;
}

/// y = Transpose(x) over x[d0, d1].
onnx::ModelProto transpose() {
  onnx::ModelProto m =
      emptyModel(17, {tensorValue("x", DType::Float, {-1, -1})}, {tensorValue("y", DType::Float, {-1, -1})});
  addNode(m, "Transpose", {"x"}, {"y"});
  return m;
}

std::vector<uint8_t> bytesOf(const dq::CompileResult& r) {
  EXPECT_TRUE(r.ok) << r.error;
  return dq::rt::serializeProgram(r.program).program;
}

TEST(CompileSession, SameArtifactsAsAFreshContextAndContextsReplacedOnSchedule) {
  dq::CompileOptions options;
  std::vector<uint8_t> a = bytesOf(dq::compileOnnxModel(addReshape(), options));
  std::vector<uint8_t> t = bytesOf(dq::compileOnnxModel(transpose(), options));
  ASSERT_NE(a, t);
  dq::CompileSession session(2);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(bytesOf(session.compile(i % 2 ? transpose() : addReshape(), options)), i % 2 ? t : a) << "compile " << i;
  }
  // Compiles 1-2 in the first context, 3-4 in the second, 5 in the third.
  EXPECT_EQ(session.contextsCreated(), 3);
}

TEST(CompileSession, ErrorsAreTheSameAndTheSessionGoesOn) {
  dq::CompileOptions bad;
  bad.pipeline = "builtin.module(no-such-pass)";
  std::string fresh = dq::compileOnnxModel(addReshape(), bad).error;
  ASSERT_FALSE(fresh.empty());
  dq::CompileSession session;
  dq::CompileResult r = session.compile(addReshape(), bad);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, fresh);
  EXPECT_TRUE(session.compile(addReshape(), dq::CompileOptions{}).ok);
  EXPECT_EQ(session.contextsCreated(), 1);
}

} // namespace
