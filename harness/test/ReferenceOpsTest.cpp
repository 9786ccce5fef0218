// Hand-computed cases per op; each expected value is worked out in the comment beside it.
#include "TestModels.h"

#include "dynqual/reference/Interpreter.h"
#include "dynqual/reference/OpRegistry.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace dynqual;
using dynqual::test::addNode;
using dynqual::test::setIntAttr;
using dynqual::test::setIntsAttr;
using dynqual::test::singleNodeModel;

namespace {

Tensor f32(std::vector<int64_t> dims, std::vector<double> v) { return Tensor::fromDoubles(DType::Float, dims, v); }
Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> v) { return Tensor::fromInts(DType::Int64, dims, v); }

// Runs a one-node model of `op` on `inputs`, with `configure` adding attributes.
std::vector<Tensor> run(const std::string& op, const std::vector<Tensor>& inputs, int64_t opset = 17,
                        const std::function<void(onnx::NodeProto*)>& configure = nullptr, int outputs = 1) {
  onnx::ModelProto m = singleNodeModel(op, inputs, opset, outputs);
  if (configure)
    configure(m.mutable_graph()->mutable_node(0));
  return reference::evaluate(m, inputs);
}

Tensor run1(const std::string& op, const std::vector<Tensor>& inputs, int64_t opset = 17,
            const std::function<void(onnx::NodeProto*)>& configure = nullptr) {
  return run(op, inputs, opset, configure).at(0);
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  Tensor x = f32({2, 3, 4}, std::vector<double>(24, 1.0));
  // [0, -1]: dim 0 copied (2), -1 = 24 / 2 = 12.
  EXPECT_EQ(run1("Reshape", {x, i64({2}, {0, -1})}).dims(), (std::vector<int64_t>{2, 12}));
  // allowzero=1 with shape [0, 4] on a 0-element input: the 0 is a literal size.
  Tensor empty(DType::Float, {0, 4});
  auto allow = [](onnx::NodeProto* n) { setIntAttr(n, "allowzero", 1); };
  EXPECT_EQ(run1("Reshape", {empty, i64({2}, {4, 0})}, 14, allow).dims(), (std::vector<int64_t>{4, 0}));
  // Without allowzero the 0 copies dim 1 (4): [4, 4] needs 16 elements, input has 0 -> error.
  EXPECT_NE(errorOf([&] { run1("Reshape", {empty, i64({2}, {4, 0})}, 14); }).find("cannot reshape"), std::string::npos);
  EXPECT_NE(errorOf([&] { run1("Reshape", {x, i64({2}, {-1, -1})}); }).find("more than one -1"), std::string::npos);
  // Reshape-1 takes the shape as attribute: [4, 6].
  onnx::ModelProto m = singleNodeModel("Reshape", {x}, 1);
  setIntsAttr(m.mutable_graph()->mutable_node(0), "shape", {4, -1});
  EXPECT_EQ(reference::evaluate(m, {x})[0].dims(), (std::vector<int64_t>{4, 6}));
}

TEST(Slice, NegativeStepsAndClamping) {
  Tensor x = f32({5}, {0, 1, 2, 3, 4});
  // starts -1 -> 4, ends -100 -> clamped to -1, step -2: 4, 2, 0.
  Tensor y = run1("Slice", {x, i64({1}, {-1}), i64({1}, {-100}), i64({1}, {0}), i64({1}, {-2})});
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{4, 2, 0}));
  // starts 1, ends INT64_MAX -> clamped to 5, step 3: 1, 4.
  y = run1("Slice", {x, i64({1}, {1}), i64({1}, {INT64_MAX}), i64({1}, {0}), i64({1}, {3})});
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{1, 4}));
  // starts 10 (clamped to 5) -> empty.
  y = run1("Slice", {x, i64({1}, {10}), i64({1}, {20})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{0}));
  // 2-D, axes [-1] only: x2 = [[0,1,2],[3,4,5]], columns 1..3 -> [[1,2],[4,5]].
  Tensor x2 = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  y = run1("Slice", {x2, i64({1}, {1}), i64({1}, {3}), i64({1}, {-1})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{1, 2, 4, 5}));
  EXPECT_NE(errorOf([&] { run1("Slice", {x, i64({1}, {0}), i64({1}, {1}), i64({1}, {0}), i64({1}, {0})}); })
                .find("step 0"),
            std::string::npos);
  // Slice-1 attributes: starts [0], ends [-1] on axis 1 -> columns 0..1 -> [[0,1],[3,4]].
  onnx::ModelProto m = singleNodeModel("Slice", {x2}, 1);
  setIntsAttr(m.mutable_graph()->mutable_node(0), "starts", {0});
  setIntsAttr(m.mutable_graph()->mutable_node(0), "ends", {-1});
  setIntsAttr(m.mutable_graph()->mutable_node(0), "axes", {1});
  EXPECT_EQ(reference::evaluate(m, {x2})[0].toDoubles(), (std::vector<double>{0, 1, 3, 4}));
}

TEST(Expand, BroadcastsBothWays) {
  // x [3,1] = [1,2,3] expanded by shape [2,1,2]: out [2,3,2], row r repeats x[r] twice, twice.
  Tensor y = run1("Expand", {f32({3, 1}, {1, 2, 3}), i64({3}, {2, 1, 2})});
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  // shape [0] against dim 1 -> zero-size output.
  EXPECT_EQ(run1("Expand", {f32({1}, {7}), i64({1}, {0})}).numel(), 0);
}

TEST(UnsqueezeSqueeze, AxesAsInputAndAttribute) {
  Tensor x = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  // axes [0, -1] against output rank 4 -> positions 0 and 3: [1,2,3,1].
  EXPECT_EQ(run1("Unsqueeze", {x, i64({2}, {0, -1})}).dims(), (std::vector<int64_t>{1, 2, 3, 1}));
  onnx::ModelProto m = singleNodeModel("Unsqueeze", {x}, 11);
  setIntsAttr(m.mutable_graph()->mutable_node(0), "axes", {1});
  EXPECT_EQ(reference::evaluate(m, {x})[0].dims(), (std::vector<int64_t>{2, 1, 3}));
  Tensor z = f32({1, 2, 1}, {5, 6});
  EXPECT_EQ(run1("Squeeze", {z}).dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(run1("Squeeze", {z, i64({1}, {-1})}).dims(), (std::vector<int64_t>{1, 2}));
  EXPECT_NE(errorOf([&] { run1("Squeeze", {z, i64({1}, {1})}); }).find("cannot squeeze axis 1 of size 2"),
            std::string::npos);
}

TEST(Flatten, AxisSplitsTheShape) {
  Tensor x(DType::Float, {2, 3, 4});
  // axis 2: [2*3, 4]; axis 0: [1, 24]; axis -1: [6, 4].
  EXPECT_EQ(run1("Flatten", {x}, 13, [](auto* n) { setIntAttr(n, "axis", 2); }).dims(), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(run1("Flatten", {x}, 13, [](auto* n) { setIntAttr(n, "axis", 0); }).dims(), (std::vector<int64_t>{1, 24}));
  EXPECT_EQ(run1("Flatten", {x}, 13, [](auto* n) { setIntAttr(n, "axis", -1); }).dims(), (std::vector<int64_t>{6, 4}));
}

TEST(Concat, JoinsAlongAxis) {
  // [[1,2]] ++ [[3,4],[5,6]] on axis 0 -> 3x2; [[1],[2]] ++ [[3],[4]] on axis -1 -> [[1,3],[2,4]].
  Tensor y = run1("Concat", {f32({1, 2}, {1, 2}), f32({2, 2}, {3, 4, 5, 6})}, 13, [](auto* n) { setIntAttr(n, "axis", 0); });
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  y = run1("Concat", {f32({2, 1}, {1, 2}), f32({2, 1}, {3, 4})}, 13, [](auto* n) { setIntAttr(n, "axis", -1); });
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{1, 3, 2, 4}));
  // An empty operand contributes nothing: [2,0] ++ [2,1].
  y = run1("Concat", {Tensor(DType::Float, {2, 0}), f32({2, 1}, {7, 8})}, 13, [](auto* n) { setIntAttr(n, "axis", 1); });
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{7, 8}));
}

TEST(Transpose, PermutesAxes) {
  // [[0,1,2],[3,4,5]] transposed: [[0,3],[1,4],[2,5]].
  Tensor x = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(run1("Transpose", {x}).toDoubles(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // [1,2,3] with perm [2,0,1]: out dims [3,1,2]; out[k][0][i] = x[0][i][k] -> 0,3,1,4,2,5.
  Tensor y = run1("Transpose", {x.reshaped({1, 2, 3})}, 13, [](auto* n) { setIntsAttr(n, "perm", {2, 0, 1}); });
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(Shape, StartAndEndClamp) {
  Tensor x(DType::Float, {2, 3, 4});
  EXPECT_EQ(run1("Shape", {x}).toInts(), (std::vector<int64_t>{2, 3, 4}));
  // start -2 -> 1, end 10 -> clamped to 3: [3, 4].
  auto cfg = [](onnx::NodeProto* n) {
    setIntAttr(n, "start", -2);
    setIntAttr(n, "end", 10);
  };
  EXPECT_EQ(run1("Shape", {x}, 15, cfg).toInts(), (std::vector<int64_t>{3, 4}));
}

TEST(Gather, NegativeIndicesAndAxis) {
  Tensor x = f32({3, 2}, {0, 1, 2, 3, 4, 5});
  // rows [2, -3] -> rows 2 and 0: [[4,5],[0,1]].
  EXPECT_EQ(run1("Gather", {x, i64({2}, {2, -3})}).toDoubles(), (std::vector<double>{4, 5, 0, 1}));
  // axis 1, scalar index 1 -> column 1: [1,3,5] with dims [3].
  Tensor y = run1("Gather", {x, i64({}, {1})}, 13, [](auto* n) { setIntAttr(n, "axis", 1); });
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{1, 3, 5}));
  EXPECT_NE(errorOf([&] { run1("Gather", {x, i64({1}, {3})}); }).find("out of range"), std::string::npos);
}

TEST(Cast, RoundsAndTruncates) {
  auto to = [](DType t) { return [t](onnx::NodeProto* n) { setIntAttr(n, "to", static_cast<int64_t>(t)); }; };
  // f32 -> i32 truncates toward zero: 2.7 -> 2, -2.7 -> -2.
  EXPECT_EQ(run1("Cast", {f32({2}, {2.7, -2.7})}, 13, to(DType::Int32)).toInts(), (std::vector<int64_t>{2, -2}));
  // f32 -> f16: 1 + 2^-11 is a tie, rounds to even 1.0; 1 + 3*2^-11 rounds to 1 + 2^-9.
  Tensor h = run1("Cast", {f32({2}, {1 + std::ldexp(1.0, -11), 1 + 3 * std::ldexp(1.0, -11)})}, 13, to(DType::Float16));
  EXPECT_EQ(h.toDoubles(), (std::vector<double>{1.0, 1 + std::ldexp(1.0, -9)}));
  // to bool: nonzero -> 1; from bool: 0/1.
  EXPECT_EQ(run1("Cast", {f32({3}, {0, -0.5, 3})}, 13, to(DType::Bool)).toInts(), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(run1("Cast", {Tensor::fromInts(DType::Bool, {2}, {1, 0})}, 13, to(DType::Double)).toDoubles(),
            (std::vector<double>{1, 0}));
  // i64 -> u8 wraps: 257 -> 1.
  EXPECT_EQ(run1("Cast", {i64({1}, {257})}, 13, to(DType::Uint8)).toInts(), (std::vector<int64_t>{1}));
  EXPECT_NE(errorOf([&] { run1("Cast", {i64({1}, {1})}, 13, [](auto* n) { setIntAttr(n, "to", 12); }); })
                .find("unsupported dtype UINT32"),
            std::string::npos);
}

TEST(Constant, EveryValueForm) {
  auto make = [](const std::function<void(onnx::AttributeProto*)>& fill) {
    onnx::ModelProto m = singleNodeModel("Constant", {}, 13);
    fill(m.mutable_graph()->mutable_node(0)->add_attribute());
    return reference::evaluate(m, {}).at(0);
  };
  Tensor t = make([](onnx::AttributeProto* a) {
    a->set_name("value_ints");
    a->set_type(onnx::AttributeProto::INTS);
    a->add_ints(3);
    a->add_ints(-4);
  });
  EXPECT_EQ(t.dtype(), DType::Int64);
  EXPECT_EQ(t.toInts(), (std::vector<int64_t>{3, -4}));
  t = make([](onnx::AttributeProto* a) {
    a->set_name("value_float");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(1.5f);
  });
  EXPECT_EQ(t.rank(), 0);
  EXPECT_EQ(t.getDouble(0), 1.5);
  t = make([](onnx::AttributeProto* a) {
    a->set_name("value_int");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(9);
  });
  EXPECT_EQ(t.getInt(0), 9);
  t = make([](onnx::AttributeProto* a) {
    a->set_name("value_floats");
    a->set_type(onnx::AttributeProto::FLOATS);
    a->add_floats(0.25f);
  });
  EXPECT_EQ(t.toDoubles(), (std::vector<double>{0.25}));
  t = make([](onnx::AttributeProto* a) {
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::INT32);
    a->mutable_t()->add_dims(1);
    a->mutable_t()->add_int32_data(-7);
  });
  EXPECT_EQ(t.dtype(), DType::Int32);
  EXPECT_EQ(t.getInt(0), -7);
  EXPECT_NE(errorOf([&] {
              make([](onnx::AttributeProto* a) {
                a->set_name("value_string");
                a->set_type(onnx::AttributeProto::STRING);
              });
            }).find("string"),
            std::string::npos);
}

TEST(ConstantOfShape, FillsWithValue) {
  // Default value: f32 zeros of shape [2, 0] and [2].
  EXPECT_EQ(run1("ConstantOfShape", {i64({2}, {2, 0})}).numel(), 0);
  EXPECT_EQ(run1("ConstantOfShape", {i64({1}, {2})}).toDoubles(), (std::vector<double>{0, 0}));
  Tensor y = run1("ConstantOfShape", {i64({1}, {3})}, 13, [](onnx::NodeProto* n) {
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    a->mutable_t()->add_dims(1);
    a->mutable_t()->add_int64_data(5);
  });
  EXPECT_EQ(y.toInts(), (std::vector<int64_t>{5, 5, 5}));
}

TEST(Range, IntegerAndFloat) {
  // 10, 7, 4, 1: ceil((0 - 10) / -3) = ceil(3.33) = 4 elements.
  EXPECT_EQ(run1("Range", {i64({}, {10}), i64({}, {0}), i64({}, {-3})}).toInts(), (std::vector<int64_t>{10, 7, 4, 1}));
  // Empty when delta points away from limit.
  EXPECT_EQ(run1("Range", {i64({}, {0}), i64({}, {5}), i64({}, {-1})}).numel(), 0);
  // 0.5, 1.0, 1.5: ceil((2 - 0.5) / 0.5) = 3.
  EXPECT_EQ(run1("Range", {f32({}, {0.5}), f32({}, {2}), f32({}, {0.5})}).toDoubles(), (std::vector<double>{0.5, 1, 1.5}));
}

TEST(Arithmetic, BroadcastAndIntegerSemantics) {
  // [[1],[2]] + [10, 20] -> [[11,21],[12,22]].
  EXPECT_EQ(run1("Add", {f32({2, 1}, {1, 2}), f32({2}, {10, 20})}).toDoubles(), (std::vector<double>{11, 21, 12, 22}));
  // u8: 250 + 10 = 260 mod 256 = 4; 3 - 5 = -2 mod 256 = 254.
  Tensor a = Tensor::fromInts(DType::Uint8, {1}, {250}), b = Tensor::fromInts(DType::Uint8, {1}, {10});
  EXPECT_EQ(run1("Add", {a, b}).toInts(), (std::vector<int64_t>{4}));
  EXPECT_EQ(run1("Sub", {Tensor::fromInts(DType::Uint8, {1}, {3}), Tensor::fromInts(DType::Uint8, {1}, {5})}).toInts(),
            (std::vector<int64_t>{254}));
  // i64 Div truncates toward zero: 7/2 = 3, -7/2 = -3, 7/-2 = -3.
  EXPECT_EQ(run1("Div", {i64({3}, {7, -7, 7}), i64({3}, {2, 2, -2})}).toInts(), (std::vector<int64_t>{3, -3, -3}));
  EXPECT_NE(errorOf([&] { run1("Div", {i64({1}, {1}), i64({1}, {0})}); }).find("integer division by zero"),
            std::string::npos);
  // f32 Mul and Div: 1.5 * 4 = 6; 1 / 3 rounded to f32 = 0.3333333432674408.
  EXPECT_EQ(run1("Mul", {f32({1}, {1.5}), f32({1}, {4})}).toDoubles(), (std::vector<double>{6}));
  EXPECT_EQ(run1("Div", {f32({1}, {1}), f32({1}, {3})}).getDouble(0), static_cast<double>(1.0f / 3.0f));
  EXPECT_NE(errorOf([&] { run1("Add", {f32({1}, {1}), i64({1}, {1})}); }).find("dtypes differ"), std::string::npos);
  EXPECT_NE(errorOf([&] { run1("Add", {f32({2}, {1, 2}), f32({3}, {1, 2, 3})}); }).find("do not broadcast"),
            std::string::npos);
}

TEST(EqualWhere, SelectByCondition) {
  // [1,2,3] == [1,0,3] -> [1,0,1]; Where picks x where true, y elsewhere: [10,-2,30].
  Tensor eq = run1("Equal", {i64({3}, {1, 2, 3}), i64({3}, {1, 0, 3})});
  EXPECT_EQ(eq.dtype(), DType::Bool);
  EXPECT_EQ(eq.toInts(), (std::vector<int64_t>{1, 0, 1}));
  Tensor w = run1("Where", {eq, f32({3}, {10, 20, 30}), f32({1}, {-2})});
  EXPECT_EQ(w.toDoubles(), (std::vector<double>{10, -2, 30}));
  // NaN == NaN is false.
  EXPECT_EQ(run1("Equal", {f32({1}, {NAN}), f32({1}, {NAN})}).toInts(), (std::vector<int64_t>{0}));
}

TEST(Interpreter, UnsupportedOpAndBadInputsAreClearErrors) {
  onnx::ModelProto m = singleNodeModel("Tanh", {f32({1}, {0})}, 13);
  m.mutable_graph()->mutable_node(0)->set_name("t0");
  try {
    reference::evaluate(m, {f32({1}, {0})});
    FAIL() << "Tanh accepted";
  } catch (const reference::UnsupportedOpError& e) {
    EXPECT_STREQ(e.what(), "unsupported op 'Tanh' (node 't0')");
  }
  onnx::ModelProto id = singleNodeModel("Identity", {f32({2}, {0, 1})}, 13);
  EXPECT_NE(errorOf([&] { reference::evaluate(id, {}); }).find("model has 1 inputs, 0 given"), std::string::npos);
  EXPECT_NE(errorOf([&] { reference::evaluate(id, {i64({2}, {0, 1})}); }).find("input 'x0': dtype i64 given, f32 declared"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { reference::evaluate(id, {f32({3}, {0, 1, 2})}); }).find("dim 0 is 3, declared 2"),
            std::string::npos);
}

TEST(Interpreter, ChainsNodesThroughInitializers) {
  // y = Reshape(x, Shape(x)[::-1]) on x [2,3]: Shape -> [2,3], Slice reversed -> [3,2].
  onnx::ModelProto m = dynqual::test::emptyModel(13, {dynqual::test::tensorValue("x", DType::Float, {2, -1})},
                                                    {dynqual::test::tensorValue("y", DType::Float, {-1, -1})});
  auto* init = m.mutable_graph()->add_initializer();
  init->set_name("minus1");
  init->set_data_type(onnx::TensorProto::INT64);
  init->add_dims(1);
  init->add_int64_data(-1);
  auto* big = m.mutable_graph()->add_initializer();
  *big = *init;
  big->set_name("lowest");
  big->set_int64_data(0, INT64_MIN);
  addNode(m, "Shape", {"x"}, {"s"});
  addNode(m, "Slice", {"s", "minus1", "lowest", "", "minus1"}, {"r"});
  addNode(m, "Reshape", {"x", "r"}, {"y"});
  Tensor x = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor y = reference::evaluate(m, {x}).at(0);
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(y.toDoubles(), x.toDoubles());
}

TEST(ExtraOps, HandComputed) {
  // MatMul [[1,2],[3,4]] x [5,6] (vector) = [1*5+2*6, 3*5+4*6] = [17, 39].
  EXPECT_EQ(run1("MatMul", {f32({2, 2}, {1, 2, 3, 4}), f32({2}, {5, 6})}).toDoubles(), (std::vector<double>{17, 39}));
  // Softmax [0, ln 3] -> [1/4, 3/4].
  Tensor s = run1("Softmax", {f32({2}, {0, std::log(3.0)})});
  EXPECT_NEAR(s.getDouble(0), 0.25, 1e-7);
  EXPECT_NEAR(s.getDouble(1), 0.75, 1e-7);
  // ReduceMean over axis 1 of [[1,2],[3,5]] keepdims -> [[1.5],[4]].
  Tensor r = run1("ReduceMean", {f32({2, 2}, {1, 2, 3, 5}), i64({1}, {1})}, 18);
  EXPECT_EQ(r.dims(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(r.toDoubles(), (std::vector<double>{1.5, 4}));
  // LayerNormalization of [1, 3]: mean 2, var 1, eps 0 -> [-1, 1]; scale 2, bias 1 -> [-1, 3].
  Tensor ln = run1("LayerNormalization", {f32({2}, {1, 3}), f32({2}, {2, 2}), f32({2}, {1, 1})}, 17,
                   [](onnx::NodeProto* n) {
                     auto* a = n->add_attribute();
                     a->set_name("epsilon");
                     a->set_type(onnx::AttributeProto::FLOAT);
                     a->set_f(0);
                   });
  EXPECT_EQ(ln.toDoubles(), (std::vector<double>{-1, 3}));
  // Trilu lower of [[1,2],[3,4]] -> [[1,0],[3,4]].
  Tensor t = run1("Trilu", {f32({2, 2}, {1, 2, 3, 4})}, 14, [](auto* n) { setIntAttr(n, "upper", 0); });
  EXPECT_EQ(t.toDoubles(), (std::vector<double>{1, 0, 3, 4}));
  // GatherElements axis 1 of [[1,2],[3,4]] with [[1,0],[0,0]] -> [[2,1],[3,3]].
  Tensor g = run1("GatherElements", {f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {1, 0, 0, 0})}, 13,
                  [](auto* n) { setIntAttr(n, "axis", 1); });
  EXPECT_EQ(g.toDoubles(), (std::vector<double>{2, 1, 3, 3}));
  // Pow 2^3 = 8, Sqrt 9 = 3, Reciprocal 4 = 0.25, Sigmoid 0 = 0.5.
  EXPECT_EQ(run1("Pow", {f32({1}, {2}), f32({1}, {3})}).getDouble(0), 8);
  EXPECT_EQ(run1("Sqrt", {f32({1}, {9})}).getDouble(0), 3);
  EXPECT_EQ(run1("Reciprocal", {f32({1}, {4})}).getDouble(0), 0.25);
  EXPECT_EQ(run1("Sigmoid", {f32({1}, {0})}).getDouble(0), 0.5);
}

TEST(OpRegistry, ListsTheFoundationOps) {
  const auto ops = reference::OpRegistry::builtin().opTypes();
  for (const char* op : {"Reshape", "Slice", "Expand", "Unsqueeze", "Squeeze", "Flatten", "Concat", "Transpose",
                         "Shape", "Gather", "Cast", "Identity", "Constant", "ConstantOfShape", "Range", "Add", "Sub",
                         "Mul", "Div", "Equal", "Where"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
}
