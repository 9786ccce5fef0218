//===- OnnxImportTest.cpp - importer and dq-convert-onnx on real models ---===//
//
// The shape_ops model lives outside the repository (DQ_SHARED_MODELS_DIR); its tests skip when
// the folder is absent. The hand-built models check the importer's refusals.
//
//===----------------------------------------------------------------------===//
#include "dq/Conversion/Passes.h"
#include "dq/Dialect/DQDialect.h"
#include "dq/Import/OnnxImporter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#ifndef DQ_SHARED_MODELS_DIR
#define DQ_SHARED_MODELS_DIR "../shared/models"
#endif

using namespace mlir;

namespace {

std::filesystem::path shapeOpsModel() {
  return std::filesystem::path(DQ_SHARED_MODELS_DIR) / "shape_ops" / "model.onnx";
}

bool loadModel(const std::filesystem::path &path, onnx::ModelProto &model) {
  std::ifstream in(path, std::ios::binary);
  return in && model.ParseFromIstream(&in);
}

/// Counts ops named `name` under `root`.
int countOps(Operation *root, StringRef name) {
  int n = 0;
  root->walk([&](Operation *op) { n += op->getName().getStringRef() == name; });
  return n;
}

/// Runs dq-convert-onnx and the verifier; returns the diagnostics text (empty on success).
std::string convert(MLIRContext &ctx, ModuleOp module, bool &ok) {
  std::string diags;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    diags += d.str() + "\n";
    return success();
  });
  PassManager pm(&ctx);
  pm.addPass(dq::createConvertONNXToDQ());
  ok = succeeded(pm.run(module)) && succeeded(verify(module));
  return diags;
}

/// A one-node model y = op_type(x) over a float tensor of dims [N, 4].
onnx::ModelProto oneNodeModel(const std::string &opType, int inputDtype) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto *graph = model.mutable_graph();
  auto *in = graph->add_input();
  in->set_name("x");
  auto *tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(inputDtype);
  tt->mutable_shape()->add_dim()->set_dim_param("N + past");
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  auto *node = graph->add_node();
  node->set_op_type(opType);
  node->set_name("node0");
  node->add_input("x");
  node->add_output("y");
  auto *out = graph->add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(inputDtype);
  return model;
}

TEST(OnnxImport, ShapeOpsImportsAsGenericOps) {
  onnx::ModelProto model;
  if (!std::filesystem::exists(shapeOpsModel())) GTEST_SKIP() << shapeOpsModel() << " not present";
  ASSERT_TRUE(loadModel(shapeOpsModel(), model));
  MLIRContext ctx;
  std::string error;
  OwningOpRef<ModuleOp> module = dq::importOnnxModel(ctx, model, error);
  ASSERT_TRUE(module) << error;
  ASSERT_TRUE(succeeded(verify(*module)));
  EXPECT_EQ(cast<IntegerAttr>((*module)->getAttr("onnx.opset")).getInt(), 17);
  auto func = *module->getOps<func::FuncOp>().begin();
  // x: [b, n, 8] with dim_params b and n -> tensor<?x?x8xf32>.
  EXPECT_EQ(func.getFunctionType().getInputs()[0],
            RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic, 8}, Float32Type::get(&ctx)));
  EXPECT_EQ(func.getArgAttrOfType<StringAttr>(0, "dq.name").getValue(), "x");
  ASSERT_EQ(func.getNumResults(), 2u);
  EXPECT_EQ(func.getResultAttrOfType<StringAttr>(1, "dq.name").getValue(), "e");
  // The model has 3 Reshape nodes, 2 Slice nodes, and nothing but onnx ops and the return.
  EXPECT_EQ(countOps(*module, "onnx.Reshape"), 3);
  EXPECT_EQ(countOps(*module, "onnx.Slice"), 2);
  bool named = false;
  func.walk([&](Operation *op) {
    if (op->getName().getStringRef() == "onnx.Reshape")
      if (auto loc = dyn_cast<NameLoc>(op->getLoc())) named |= loc.getName() == "/Reshape";
  });
  EXPECT_TRUE(named);
}

TEST(OnnxImport, ShapeOpsConvertsWithoutReadback) {
  onnx::ModelProto model;
  if (!std::filesystem::exists(shapeOpsModel())) GTEST_SKIP() << shapeOpsModel() << " not present";
  ASSERT_TRUE(loadModel(shapeOpsModel(), model));
  MLIRContext ctx;
  std::string error;
  OwningOpRef<ModuleOp> module = dq::importOnnxModel(ctx, model, error);
  ASSERT_TRUE(module) << error;
  auto func = *module->getOps<func::FuncOp>().begin();
  FunctionType before = func.getFunctionType();
  bool ok = false;
  std::string diags = convert(ctx, *module, ok);
  ASSERT_TRUE(ok) << diags;
  // Every slice bound and the expand shape resolve on the host (Shape/Gather/Div/Where chains).
  EXPECT_EQ(countOps(*module, "dq.readback_scalar"), 0);
  EXPECT_EQ(countOps(*module, "dq.slice"), 2);
  EXPECT_EQ(countOps(*module, "dq.expand"), 1);
  EXPECT_EQ(countOps(*module, "dq.transpose"), 1);
  int onnxOps = 0;
  module->walk([&](Operation *op) { onnxOps += op->getName().getDialectNamespace() == "onnx"; });
  EXPECT_EQ(onnxOps, 0);
  EXPECT_EQ(func.getFunctionType(), before);
}

TEST(OnnxImport, RefusesStringInput) {
  MLIRContext ctx;
  std::string error;
  auto module = dq::importOnnxModel(ctx, oneNodeModel("Identity", onnx::TensorProto::STRING), error);
  EXPECT_FALSE(module);
  EXPECT_NE(error.find("unsupported: input 'x'"), std::string::npos) << error;
  EXPECT_NE(error.find("STRING"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << "one line expected: " << error;
}

TEST(OnnxImport, RefusesSequenceInput) {
  onnx::ModelProto model = oneNodeModel("Identity", onnx::TensorProto::FLOAT);
  auto *in = model.mutable_graph()->mutable_input(0);
  in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  MLIRContext ctx;
  std::string error;
  EXPECT_FALSE(dq::importOnnxModel(ctx, model, error));
  EXPECT_NE(error.find("input 'x' has a sequence type"), std::string::npos) << error;
}

TEST(OnnxImport, DimParamExpressionsAreDynamic) {
  MLIRContext ctx;
  std::string error;
  auto module = dq::importOnnxModel(ctx, oneNodeModel("Identity", onnx::TensorProto::FLOAT16), error);
  ASSERT_TRUE(module) << error;
  auto func = *module->getOps<func::FuncOp>().begin();
  EXPECT_EQ(func.getFunctionType().getInputs()[0],
            RankedTensorType::get({ShapedType::kDynamic, 4}, Float16Type::get(&ctx)));
}

TEST(OnnxImport, UnknownOpImportsButConversionNamesTheNode) {
  MLIRContext ctx;
  std::string error;
  auto module = dq::importOnnxModel(ctx, oneNodeModel("Softmax", onnx::TensorProto::FLOAT), error);
  ASSERT_TRUE(module) << error;
  EXPECT_EQ(countOps(*module, "onnx.Softmax"), 1);
  bool ok = true;
  std::string diags = convert(ctx, *module, ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(diags.find("unsupported: ONNX op 'Softmax' in node 'node0'"), std::string::npos) << diags;
}

TEST(OnnxImport, RefusesUnloadedExternalData) {
  onnx::ModelProto model = oneNodeModel("Identity", onnx::TensorProto::FLOAT);
  auto *init = model.mutable_graph()->add_initializer();
  init->set_name("w");
  init->set_data_type(onnx::TensorProto::FLOAT);
  init->add_dims(2);
  init->set_data_location(onnx::TensorProto::EXTERNAL);
  MLIRContext ctx;
  std::string error;
  EXPECT_FALSE(dq::importOnnxModel(ctx, model, error));
  EXPECT_NE(error.find("initializer 'w': external data was not loaded"), std::string::npos) << error;
}

} // namespace
