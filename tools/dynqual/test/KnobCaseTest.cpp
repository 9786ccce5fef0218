// Ground truth for the inject knobs (docs/fuzz/knobs.md): for each knob one hand-made ONNX graph
// that the production pipeline computes exactly as the CPU reference does and that the knob
// breaks on the sim device (a wrong value, a wrong shape, a trap, or a compiler crash).
// singleton-copy-host-path and strided-view-base-pointer need a non-contiguous view: a Slice,
// which the production pipeline lowers to one (docs/passes/convert-onnx.md#views). Their
// memref-level cases are also in compiler/test/Pipeline/InjectRunTest.cpp; promote-before-reuse
// cannot change values (docs/fuzz/knobs.md).
#include "dq/Pipeline/Compiler.h"
#include "dq/runtime/Error.h"
#include "dq/runtime/HostTensor.h"
#include "dq/runtime/Runtime.h"
#include "dq/runtime/SimDevice.h"
#include "dynqual/reference/Interpreter.h"

#include "../../../harness/test/TestModels.h"

#include <gtest/gtest.h>

#include <climits>
#include <functional>

namespace {

using dynqual::DType;
using dynqual::Tensor;
using namespace dynqual::test;

dq::rt::DType toRt(DType t) {
  switch (t) {
  case DType::Float:
    return dq::rt::DType::F32;
  case DType::Int64:
    return dq::rt::DType::I64;
  case DType::Bool:
    return dq::rt::DType::Bool;
  default:
    throw std::runtime_error("KnobCaseTest: only float, int64 and bool tensors are used");
  }
}

/// What one compile-and-run of a case gave: a trap or compile error (`error`), else the outputs.
struct Outcome {
  std::string error;
  std::vector<Tensor> outputs;
};

Outcome compileAndRun(const onnx::ModelProto& model, const std::vector<Tensor>& inputs, const std::string& pipeline) {
  Outcome o;
  dq::CompileOptions options;
  options.pipeline = pipeline;
  dq::CompileResult compiled = dq::compileOnnxModel(model, options);
  if (!compiled.ok) {
    o.error = "compile: " + compiled.error;
    return o;
  }
  std::vector<dq::rt::HostTensor> in;
  for (const Tensor& t : inputs) {
    dq::rt::HostTensor h(toRt(t.dtype()), t.dims());
    h.bytes = t.bytes();
    in.push_back(std::move(h));
  }
  try {
    dq::rt::SimDevice device;
    dq::rt::RunResult run = dq::rt::runProgram(compiled.program, device, in);
    for (const dq::rt::HostTensor& h : run.outputs) {
      DType t = h.dtype == dq::rt::DType::F32    ? DType::Float
                : h.dtype == dq::rt::DType::Bool ? DType::Bool
                                                 : DType::Int64;
      o.outputs.emplace_back(t, h.dims, h.bytes);
    }
  } catch (const dq::rt::RuntimeError& e) {
    o.error = std::string("run: ") + e.what();
  }
  return o;
}

/// "" when `o` equals the reference bit for bit (dtypes, shapes, bytes), else what differs.
std::string differsFromReference(const Outcome& o, const std::vector<Tensor>& expected) {
  if (!o.error.empty())
    return o.error;
  if (o.outputs.size() != expected.size())
    return "output count " + std::to_string(o.outputs.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if (o.outputs[i].dims() != expected[i].dims())
      return "output " + std::to_string(i) + " has the wrong shape";
    if (o.outputs[i] != expected[i])
      return "output " + std::to_string(i) + " has wrong values";
  }
  return "";
}

Tensor iotaF(std::vector<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<double>(i) + 1;
  return Tensor::fromDoubles(DType::Float, dims, v);
}

onnx::TensorProto intsConst(const std::string& name, const std::vector<int64_t>& v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(static_cast<int32_t>(DType::Int64));
  t.add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v)
    t.add_int64_data(x);
  return t;
}

void addConst(onnx::ModelProto& m, const std::string& name, const std::vector<int64_t>& v) {
  auto* n = addNode(m, "Constant", {}, {name});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = intsConst(name, v);
}

void addScalarConst(onnx::ModelProto& m, const std::string& name, int64_t v) {
  auto* n = addNode(m, "Constant", {}, {name});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto t = intsConst(name, {v});
  t.clear_dims();
  *a->mutable_t() = t;
}

struct Case {
  const char* knob;
  std::function<onnx::ModelProto()> model;
  std::vector<Tensor> inputs;
  const char* symptom;   ///< what the knob does to this case, checked in the failure text
  const char* form = ""; ///< names a second case of the same knob
};

// Reshape(X, Gather(Shape(X), [1, 0])): [a, b] -> [b, a], both dims dynamic.
onnx::ModelProto reshapeSwap() {
  auto m = emptyModel(17, {tensorValue("x", DType::Float, {-1, -1})}, {tensorValue("y", DType::Float, {-1, -1})});
  addNode(m, "Shape", {"x"}, {"s"});
  addConst(m, "perm", {1, 0});
  addNode(m, "Gather", {"s", "perm"}, {"t"});
  addNode(m, "Reshape", {"x", "t"}, {"y"});
  return m;
}

// Slice(X, starts, [INT64_MAX]) with starts a graph input: the bound needs a readback.
onnx::ModelProto sliceFromData() {
  auto m = emptyModel(17, {tensorValue("x", DType::Float, {-1}), tensorValue("starts", DType::Int64, {1})},
                      {tensorValue("y", DType::Float, {-1})});
  addConst(m, "ends", {INT64_MAX});
  addNode(m, "Slice", {"x", "starts", "ends"}, {"y"});
  return m;
}

// Add(X, X): a rank-2 output allocated through the allocator.
onnx::ModelProto addSelf() {
  auto m = emptyModel(17, {tensorValue("x", DType::Float, {-1, -1})}, {tensorValue("y", DType::Float, {-1, -1})});
  addNode(m, "Add", {"x", "x"}, {"y"});
  return m;
}

// T = A + A; T2 = T * T; U = Cast(T2) (output); V = Equal(Shape(X), A) (output): the shape
// vector is written by the host into a buffer of T2's type (i64[2]) after T2's last use.
onnx::ModelProto hostScalarAfterDeviceBuffer() {
  auto m = emptyModel(17, {tensorValue("x", DType::Float, {-1, -1}), tensorValue("a", DType::Int64, {2})},
                      {tensorValue("u", DType::Float, {2}), tensorValue("v", DType::Bool, {2})});
  addNode(m, "Add", {"a", "a"}, {"t"});
  addNode(m, "Mul", {"t", "t"}, {"t2"});
  setIntAttr(addNode(m, "Cast", {"t2"}, {"u"}), "to", static_cast<int64_t>(DType::Float));
  addNode(m, "Shape", {"x"}, {"s"});
  addNode(m, "Equal", {"s", "a"}, {"v"});
  return m;
}

// The form the shape fuzzer generates: a slice end computed on the device from a data input,
// E = Gather(Shape(X), [0]) - B (i64[1], dead after its readback), then a dim cast to float,
// Cast(Gather(Shape(X), [1])), whose host-written i64[1] operand buffer comes after E's last use.
onnx::ModelProto hostScalarAfterDeviceBound() {
  auto m = emptyModel(17, {tensorValue("x", DType::Float, {-1, -1}), tensorValue("b", DType::Int64, {1})},
                      {tensorValue("z", DType::Float, {-1, -1})});
  addConst(m, "i0", {0});
  addConst(m, "i1", {1});
  addNode(m, "Shape", {"x"}, {"s"});
  addNode(m, "Gather", {"s", "i0"}, {"d0"});
  addNode(m, "Sub", {"d0", "b"}, {"e"});
  addNode(m, "Slice", {"x", "i0", "e", "i0"}, {"y"});
  addNode(m, "Gather", {"s", "i1"}, {"d1"});
  setIntAttr(addNode(m, "Cast", {"d1"}, {"f"}), "to", static_cast<int64_t>(DType::Float));
  addNode(m, "Mul", {"y", "f"}, {"z"});
  return m;
}

// Reshape(X, shape) with shape a graph input: [N] split into two runtime dims.
onnx::ModelProto splitFromData() {
  auto m = emptyModel(17, {tensorValue("x", DType::Float, {-1}), tensorValue("shape", DType::Int64, {2})},
                      {tensorValue("y", DType::Float, {-1, -1})});
  addNode(m, "Reshape", {"x", "shape"}, {"y"});
  return m;
}

// Concat(R, R) along axis 1, R = Slice(X, [0, 0], [1, 2], axes [0, 2]) with X f32[3, N, 4]: the
// row window R is a view [1, N, 2] whose unit dim has stride 4 N (dynamic); each concat operand
// is copied into a contiguous temporary (copy2d: rows of 2 at pitch 4).
onnx::ModelProto rowConcat() {
  auto m = emptyModel(17, {tensorValue("x", DType::Float, {3, -1, 4})}, {tensorValue("y", DType::Float, {1, -1, 2})});
  addConst(m, "s", {0, 0});
  addConst(m, "e", {1, 2});
  addConst(m, "a", {0, 2});
  addNode(m, "Slice", {"x", "s", "e", "a"}, {"row"});
  setIntAttr(addNode(m, "Concat", {"row", "row"}, {"y"}), "axis", 1);
  return m;
}

// Transpose(Slice(X, [1], [3], [1])) with X f32[N, 4]: a column window (offset 1, row pitch 4)
// feeding a transpose kernel, which needs a contiguous operand.
onnx::ModelProto windowTranspose() {
  auto m = emptyModel(17, {tensorValue("x", DType::Float, {-1, 4})}, {tensorValue("y", DType::Float, {2, -1})});
  addConst(m, "s", {1});
  addConst(m, "e", {3});
  addConst(m, "a", {1});
  addNode(m, "Slice", {"x", "s", "e", "a"}, {"w"});
  addNode(m, "Transpose", {"w"}, {"y"});
  return m;
}

std::vector<Case> cases() {
  Tensor starts = Tensor::fromInts(DType::Int64, {1}, {2});
  return {
      {"reshape-by-type-equality", reshapeSwap, {iotaF({2, 3})}, "wrong shape"},
      {"slice-upper-bound", sliceFromData, {iotaF({5}), starts}, "wrong shape"},
      {"output-rank-collapse", addSelf, {iotaF({2, 3})}, "does not match the declared"},
      {"host-scalars-after-reuse",
       hostScalarAfterDeviceBuffer,
       {iotaF({3, 5}), Tensor::fromInts(DType::Int64, {2}, {3, 7})},
       "host store touches device memory"},
      {"host-scalars-after-reuse",
       hostScalarAfterDeviceBound,
       {iotaF({4, 3}), Tensor::fromInts(DType::Int64, {1}, {1})},
       "host store touches device memory",
       "bound_from_data"},
      {"split-dim-size-alias",
       splitFromData,
       {iotaF({6}), Tensor::fromInts(DType::Int64, {2}, {2, 3})},
       "out of bounds"},
      {"readback-without-sync", sliceFromData, {iotaF({5}), starts}, "unsynchronized read"},
      {"singleton-copy-host-path", rowConcat, {iotaF({3, 2, 4})}, "host memcpy touches device memory"},
      // production [[2,6,10],[3,7,11]]; the base pointer reads [[1,2,3],[4,5,6]].
      {"strided-view-base-pointer", windowTranspose, {iotaF({3, 4})}, "wrong values"},
  };
}

class KnobCase : public ::testing::TestWithParam<size_t> {};

TEST_P(KnobCase, ProductionMatchesTheReferenceAndTheKnobBreaksIt) {
  const Case c = cases()[GetParam()];
  onnx::ModelProto model = c.model();
  std::vector<Tensor> expected = dynqual::reference::evaluate(model, c.inputs);
  EXPECT_EQ(differsFromReference(compileAndRun(model, c.inputs, "production"), expected), "");
  std::string broken =
      differsFromReference(compileAndRun(model, c.inputs, std::string("production{inject=") + c.knob + "}"), expected);
  EXPECT_NE(broken.find(c.symptom), std::string::npos) << c.knob << " gave: '" << broken << "'";
}

INSTANTIATE_TEST_SUITE_P(Knobs, KnobCase, ::testing::Range<size_t>(0, cases().size()),
                         [](const testing::TestParamInfo<size_t>& info) {
                           std::string name = cases()[info.param].knob;
                           if (*cases()[info.param].form)
                             name += std::string("_") + cases()[info.param].form;
                           for (char& ch : name)
                             if (ch == '-')
                               ch = '_';
                           return name;
                         });

// erase-alloc-before-view-analysis is a use after free inside the compiler. Under
// AddressSanitizer it is reported as such; without it, glibc's free list overwrites the erased
// op's result storage and the pass crashes reading its type (seen on every run here). Either way
// the compile dies, so it runs in a death-test child.
TEST(KnobCaseCrash, EraseAllocBeforeViewAnalysisIsAUseAfterFree) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  onnx::ModelProto model = addSelf();
  std::vector<Tensor> inputs = {iotaF({2, 3})};
  EXPECT_EQ(
      differsFromReference(compileAndRun(model, inputs, "production"), dynqual::reference::evaluate(model, inputs)),
      "");
#if defined(__SANITIZE_ADDRESS__)
  const char* expected = "heap-use-after-free";
#else
  const char* expected = "";
#endif
  EXPECT_DEATH(compileAndRun(model, inputs, "production{inject=erase-alloc-before-view-analysis}"), expected);
}

// The view lowering and the kernels it replaces give the same bits on the two view cases.
TEST(KnobCaseViews, ViewsOffGivesTheSameValues) {
  using Make = onnx::ModelProto (*)();
  const std::vector<std::pair<Make, std::vector<int64_t>>> views = {{rowConcat, {3, 2, 4}}, {windowTranspose, {3, 4}}};
  for (const auto& [make, dims] : views) {
    onnx::ModelProto model = make();
    std::vector<Tensor> inputs = {iotaF(dims)};
    std::vector<Tensor> expected = dynqual::reference::evaluate(model, inputs);
    EXPECT_EQ(differsFromReference(compileAndRun(model, inputs, "production{views=false}"), expected), "");
  }
}

TEST(KnobCaseOptions, UnknownKnobIsAClearCompileError) {
  dq::CompileOptions options;
  options.pipeline = "production{inject=no-such-knob}";
  dq::CompileResult r = dq::compileOnnxModel(addSelf(), options);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("unknown inject knob 'no-such-knob'"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("strided-view-base-pointer"), std::string::npos) << r.error;
}

} // namespace
