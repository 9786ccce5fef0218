// Which models `dynqual run` tries: the fixed skip reasons, decided from declared types and ops.
#include "TestModels.h"

#include "dynqual/scope/OpScope.h"

#include <gtest/gtest.h>

using namespace dynqual;
using namespace dynqual::test;
using scope::SkipReason;

namespace {

std::optional<SkipReason> classify(const onnx::ModelProto& m, std::string* detailOut = nullptr) {
  std::string detail;
  auto r = scope::classifyModel(m, detail);
  if (detailOut)
    *detailOut = detail;
  return r;
}

} // namespace

TEST(Scope, SupportedGraphIsInScope) {
  auto m = emptyModel(17, {tensorValue("x", DType::Float, {-1, 4})}, {tensorValue("y", DType::Float, {-1, 4})});
  addNode(m, "Add", {"x", "x"}, {"y"});
  EXPECT_EQ(classify(m), std::nullopt);
}

TEST(Scope, UnsupportedOpIsNamedWithItsNode) {
  auto m = emptyModel(17, {tensorValue("x", DType::Float, {4})}, {tensorValue("y", DType::Float, {4})});
  addNode(m, "LpNormalization", {"x"}, {"y"})->set_name("norm_1");
  std::string detail;
  EXPECT_EQ(classify(m, &detail), SkipReason::OpOutsideSupportedSet);
  EXPECT_NE(detail.find("LpNormalization"), std::string::npos) << detail;
  EXPECT_NE(detail.find("norm_1"), std::string::npos) << detail;
}

TEST(Scope, TypesAreCheckedBeforeOps) {
  onnx::ValueInfoProto s;
  s.set_name("s");
  s.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::STRING);
  auto m = emptyModel(17, {s}, {tensorValue("y", DType::Float, {1})});
  addNode(m, "StringNormalizer", {"s"}, {"y"});
  EXPECT_EQ(classify(m), SkipReason::StringType);

  auto u = emptyModel(17, {tensorValue("x", DType::Float, {2})}, {tensorValue("y", DType::Float, {2})});
  u.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::UINT16);
  addNode(u, "Identity", {"x"}, {"y"});
  EXPECT_EQ(classify(u), SkipReason::DTypeOutsideList);

  onnx::ValueInfoProto seq;
  seq.set_name("q");
  seq.mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  auto q = emptyModel(17, {seq}, {tensorValue("y", DType::Float, {1})});
  EXPECT_EQ(classify(q), SkipReason::OptionalOrSequenceType);
}

TEST(Scope, CastToUnsupportedDTypeIsOutsideTheList) {
  auto m = emptyModel(17, {tensorValue("x", DType::Float, {2})}, {tensorValue("y", DType::Float, {2})});
  setIntAttr(addNode(m, "Cast", {"x"}, {"y"}), "to", onnx::TensorProto::UINT32);
  EXPECT_EQ(classify(m), SkipReason::DTypeOutsideList);
}

TEST(Scope, DropoutIsSupportedForInferenceOnly) {
  auto in = emptyModel(13, {tensorValue("x", DType::Float, {2})}, {tensorValue("y", DType::Float, {2})});
  addNode(in, "Dropout", {"x"}, {"y"});
  EXPECT_EQ(classify(in), std::nullopt);

  // training_mode given as a graph input: the mask is random, so it is out of scope.
  auto train = emptyModel(
      13, {tensorValue("x", DType::Float, {2}), tensorValue("r", DType::Float, {}), tensorValue("t", DType::Bool, {})},
      {tensorValue("y", DType::Float, {2})});
  addNode(train, "Dropout", {"x", "r", "t"}, {"y"})->set_name("drop");
  std::string detail;
  EXPECT_EQ(classify(train, &detail), SkipReason::OpOutsideSupportedSet);
  EXPECT_NE(detail.find("training mode"), std::string::npos) << detail;

  // training_mode as a constant false initializer stays inference.
  auto constFalse = emptyModel(13, {tensorValue("x", DType::Float, {2})}, {tensorValue("y", DType::Float, {2})});
  auto* init = constFalse.mutable_graph()->add_initializer();
  init->set_name("t");
  init->set_data_type(onnx::TensorProto::BOOL);
  init->add_int32_data(0);
  addNode(constFalse, "Dropout", {"x", "", "t"}, {"y"});
  EXPECT_EQ(classify(constFalse), std::nullopt);
}
