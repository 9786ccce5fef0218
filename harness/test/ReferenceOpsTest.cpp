// Hand-computed cases per op; each expected value is worked out in the comment beside it.
#include "TestModels.h"

#include "dynqual/reference/Interpreter.h"
#include "dynqual/reference/OpRegistry.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace dynqual;
using dynqual::test::addNode;
using dynqual::test::setFloatAttr;
using dynqual::test::setIntAttr;
using dynqual::test::setIntsAttr;
using dynqual::test::singleNodeModel;

namespace {

Tensor f32(std::vector<int64_t> dims, std::vector<double> v) {
  return Tensor::fromDoubles(DType::Float, dims, v);
}
Tensor i64(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return Tensor::fromInts(DType::Int64, dims, v);
}
Tensor boolean(std::vector<int64_t> dims, std::vector<int64_t> v) {
  return Tensor::fromInts(DType::Bool, dims, v);
}

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
  EXPECT_NE(
      errorOf([&] { run1("Slice", {x, i64({1}, {0}), i64({1}, {1}), i64({1}, {0}), i64({1}, {0})}); }).find("step 0"),
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
  Tensor y =
      run1("Concat", {f32({1, 2}, {1, 2}), f32({2, 2}, {3, 4, 5, 6})}, 13, [](auto* n) { setIntAttr(n, "axis", 0); });
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  y = run1("Concat", {f32({2, 1}, {1, 2}), f32({2, 1}, {3, 4})}, 13, [](auto* n) { setIntAttr(n, "axis", -1); });
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{1, 3, 2, 4}));
  // An empty operand contributes nothing: [2,0] ++ [2,1].
  y = run1("Concat", {Tensor(DType::Float, {2, 0}), f32({2, 1}, {7, 8})}, 13,
           [](auto* n) { setIntAttr(n, "axis", 1); });
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
  EXPECT_NE(errorOf([&] {
              run1("Cast", {i64({1}, {1})}, 13, [](auto* n) { setIntAttr(n, "to", 12); });
            }).find("unsupported dtype UINT32"),
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
  EXPECT_EQ(run1("Range", {f32({}, {0.5}), f32({}, {2}), f32({}, {0.5})}).toDoubles(),
            (std::vector<double>{0.5, 1, 1.5}));
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
  onnx::ModelProto m = singleNodeModel("Hardmax", {f32({1}, {0})}, 13);
  m.mutable_graph()->mutable_node(0)->set_name("t0");
  try {
    reference::evaluate(m, {f32({1}, {0})});
    FAIL() << "Hardmax accepted";
  } catch (const reference::UnsupportedOpError& e) {
    EXPECT_STREQ(e.what(), "unsupported op 'Hardmax' (node 't0')");
  }
  onnx::ModelProto id = singleNodeModel("Identity", {f32({2}, {0, 1})}, 13);
  EXPECT_NE(errorOf([&] { reference::evaluate(id, {}); }).find("model has 1 inputs, 0 given"), std::string::npos);
  EXPECT_NE(
      errorOf([&] { reference::evaluate(id, {i64({2}, {0, 1})}); }).find("input 'x0': dtype i64 given, f32 declared"),
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
  Tensor ln =
      run1("LayerNormalization", {f32({2}, {1, 3}), f32({2}, {2, 2}), f32({2}, {1, 1})}, 17, [](onnx::NodeProto* n) {
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

TEST(Neg, FloatAndWrappingInteger) {
  // -[1.5, -2] = [-1.5, 2]; int8: -(-128) = 128 wraps to -128, -(5) = -5.
  EXPECT_EQ(run1("Neg", {f32({2}, {1.5, -2})}).toDoubles(), (std::vector<double>{-1.5, 2}));
  EXPECT_EQ(run1("Neg", {Tensor::fromInts(DType::Int8, {2}, {-128, 5})}).toInts(), (std::vector<int64_t>{-128, -5}));
}

TEST(MaxMin, VariadicBroadcastNaNAndExactIntegers) {
  // a [1,5] (2), b [[3],[0]] (2,1), c [2] (1) -> shape [2,2]:
  // Max: row 0 max(1,3,2)=3, max(5,3,2)=5; row 1 max(1,0,2)=2, max(5,0,2)=5.
  // Min: row 0 min(1,3,2)=1, min(5,3,2)=2; row 1 min(1,0,2)=0, min(5,0,2)=0.
  const std::vector<Tensor> in{f32({2}, {1, 5}), f32({2, 1}, {3, 0}), f32({1}, {2})};
  Tensor mx = run1("Max", in), mn = run1("Min", in);
  EXPECT_EQ(mx.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(mx.toDoubles(), (std::vector<double>{3, 5, 2, 5}));
  EXPECT_EQ(mn.toDoubles(), (std::vector<double>{1, 2, 0, 0}));
  // One operand is returned as is.
  EXPECT_EQ(run1("Max", {f32({2}, {7, -1})}).toDoubles(), (std::vector<double>{7, -1}));
  // A NaN operand gives NaN (numpy maximum): max(NaN, 0) = NaN, max(1, 2) = 2.
  Tensor nan = run1("Max", {f32({2}, {NAN, 1}), f32({2}, {0, 2})});
  EXPECT_TRUE(std::isnan(nan.getDouble(0)));
  EXPECT_EQ(nan.getDouble(1), 2);
  // INT64_MAX vs 0 and -3 vs -4 compare exactly (a double round trip would lose INT64_MAX - 1).
  EXPECT_EQ(run1("Max", {i64({2}, {INT64_MAX - 1, -3}), i64({2}, {0, -4})}).toInts(),
            (std::vector<int64_t>{INT64_MAX - 1, -3}));
  EXPECT_NE(errorOf([&] { run1("Min", {f32({1}, {1}), i64({1}, {1})}); }).find("input 1 is i64"), std::string::npos);
}

TEST(Gemm, TransposesScalesAndBroadcastsC) {
  // transA: A^T = [[1,3],[2,4]]; A^T B with B = [[5,6],[7,8]] = [[1*5+3*7, 1*6+3*8], [2*5+4*7, 2*6+4*8]]
  // = [[26,30],[38,44]]; alpha 0.5 -> [[13,15],[19,22]]; beta 2 * C [1,2] per row -> + [2,4]
  // = [[15,19],[21,26]].
  Tensor y = run1("Gemm", {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {5, 6, 7, 8}), f32({2}, {1, 2})}, 13,
                  [](onnx::NodeProto* n) {
                    setIntAttr(n, "transA", 1);
                    setFloatAttr(n, "alpha", 0.5f);
                    setFloatAttr(n, "beta", 2.0f);
                  });
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{15, 19, 21, 26}));
  // transB, no C: [[1,2,3]] x [[1,0,1],[2,1,0]]^T = [[1+0+3, 2+2+0]] = [[4,4]].
  y = run1("Gemm", {f32({1, 3}, {1, 2, 3}), f32({2, 3}, {1, 0, 1, 2, 1, 0})}, 13,
           [](onnx::NodeProto* n) { setIntAttr(n, "transB", 1); });
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{4, 4}));
  // i64: [[2,3]] x [[4],[5]] = 8 + 15 = 23, + scalar C 1 = 24.
  EXPECT_EQ(run1("Gemm", {i64({1, 2}, {2, 3}), i64({2, 1}, {4, 5}), i64({}, {1})}, 13).toInts(),
            (std::vector<int64_t>{24}));
  // C [3] does not broadcast to [2,2].
  EXPECT_NE(errorOf([&] {
              run1("Gemm", {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {1, 2, 3, 4}), f32({3}, {1, 2, 3})}, 13);
            }).find("do not broadcast"),
            std::string::npos);
}

TEST(ReduceSum, AxesInputAttributeNoopAndDoubleAccumulation) {
  Tensor x = i64({2, 2}, {1, 2, 3, 4});
  // Axis 0, keepdims 0: [1+3, 2+4] = [4, 6].
  Tensor r = run1("ReduceSum", {x, i64({1}, {0})}, 13, [](auto* n) { setIntAttr(n, "keepdims", 0); });
  EXPECT_EQ(r.dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(r.toInts(), (std::vector<int64_t>{4, 6}));
  // No axes: all axes, keepdims -> [[10]].
  r = run1("ReduceSum", {x}, 13);
  EXPECT_EQ(r.dims(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(r.toInts(), (std::vector<int64_t>{10}));
  // No axes with noop_with_empty_axes: the input unchanged.
  EXPECT_EQ(run1("ReduceSum", {x}, 13, [](auto* n) { setIntAttr(n, "noop_with_empty_axes", 1); }), x);
  // ReduceSum-11 takes axes as attribute: axis 1 -> [[1+2],[3+4]] = [[3],[7]].
  r = run1("ReduceSum", {x}, 11, [](auto* n) { setIntsAttr(n, "axes", {1}); });
  EXPECT_EQ(r.dims(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(r.toInts(), (std::vector<int64_t>{3, 7}));
  // f32 1e8 + 1 - 1e8: in double the sum is 1; an f32 accumulator would give 0 (f32 spacing at
  // 1e8 is 8).
  EXPECT_EQ(run1("ReduceSum", {f32({3}, {1e8, 1, -1e8})}, 13).toDoubles(), (std::vector<double>{1}));
}

TEST(ReduceMax, AxesNaNAndEmptyGroups) {
  Tensor x = f32({2, 2}, {1, 5, 3, 2});
  // ReduceMax-13 axes attribute [1]: [[max(1,5)],[max(3,2)]] = [[5],[3]].
  Tensor r = run1("ReduceMax", {x}, 13, [](auto* n) { setIntsAttr(n, "axes", {1}); });
  EXPECT_EQ(r.dims(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(r.toDoubles(), (std::vector<double>{5, 3}));
  // ReduceMax-18 axes input [-2], keepdims 0: [max(1,3), max(5,2)] = [3, 5].
  r = run1("ReduceMax", {x, i64({1}, {-2})}, 18, [](auto* n) { setIntAttr(n, "keepdims", 0); });
  EXPECT_EQ(r.dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(r.toDoubles(), (std::vector<double>{3, 5}));
  // A NaN makes its group NaN.
  EXPECT_TRUE(std::isnan(run1("ReduceMax", {f32({2}, {NAN, 1})}, 13).getDouble(0)));
  // Empty groups: -inf for floats, the dtype's minimum (-128 for int8) for integers.
  r = run1("ReduceMax", {Tensor(DType::Float, {0, 2})}, 13, [](auto* n) { setIntsAttr(n, "axes", {0}); });
  EXPECT_EQ(r.toDoubles(), (std::vector<double>{-INFINITY, -INFINITY}));
  r = run1("ReduceMax", {Tensor(DType::Int8, {0, 1})}, 13, [](auto* n) { setIntsAttr(n, "axes", {0}); });
  EXPECT_EQ(r.toInts(), (std::vector<int64_t>{-128}));
}

TEST(Comparison, LessGreaterLessOrEqualOr) {
  // [1,2,3] vs [2]: < -> [1,0,0], > -> [0,0,1], <= -> [1,1,0].
  Tensor a = i64({3}, {1, 2, 3}), b = i64({1}, {2});
  EXPECT_EQ(run1("Less", {a, b}).toInts(), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(run1("Greater", {a, b}).toInts(), (std::vector<int64_t>{0, 0, 1}));
  Tensor le = run1("LessOrEqual", {a, b});
  EXPECT_EQ(le.dtype(), DType::Bool);
  EXPECT_EQ(le.toInts(), (std::vector<int64_t>{1, 1, 0}));
  // NaN compares false either way.
  EXPECT_EQ(run1("LessOrEqual", {f32({1}, {NAN}), f32({1}, {1})}).toInts(), (std::vector<int64_t>{0}));
  EXPECT_EQ(run1("Greater", {f32({1}, {NAN}), f32({1}, {1})}).toInts(), (std::vector<int64_t>{0}));
  // [T,F,F] or [F,F,T] = [T,F,T].
  EXPECT_EQ(run1("Or", {boolean({3}, {1, 0, 0}), boolean({3}, {0, 0, 1})}).toInts(), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_NE(errorOf([&] { run1("Or", {a, a}); }).find("operands must be bool"), std::string::npos);
}

TEST(Split, SizesFromInputAttributeAndEqualParts) {
  Tensor x = f32({5}, {1, 2, 3, 4, 5});
  auto axis1 = [](onnx::NodeProto* n) { setIntAttr(n, "axis", 1); };
  // Split-13 sizes input [2, 3]: [1,2] and [3,4,5].
  auto parts = run("Split", {x, i64({2}, {2, 3})}, 13, nullptr, 2);
  EXPECT_EQ(parts.at(0).toDoubles(), (std::vector<double>{1, 2}));
  EXPECT_EQ(parts.at(1).toDoubles(), (std::vector<double>{3, 4, 5}));
  // Split-11 attribute [1, 4]: [1] and [2,3,4,5].
  parts = run("Split", {x}, 11, [](auto* n) { setIntsAttr(n, "split", {1, 4}); }, 2);
  EXPECT_EQ(parts.at(0).toDoubles(), (std::vector<double>{1}));
  EXPECT_EQ(parts.at(1).toDoubles(), (std::vector<double>{2, 3, 4, 5}));
  // Split-18 num_outputs 3 on 5 elements: parts of ceil(5/3) = 2, the last 5 - 4 = 1.
  parts = run("Split", {x}, 18, [](auto* n) { setIntAttr(n, "num_outputs", 3); }, 3);
  EXPECT_EQ(parts.at(0).toDoubles(), (std::vector<double>{1, 2}));
  EXPECT_EQ(parts.at(1).toDoubles(), (std::vector<double>{3, 4}));
  EXPECT_EQ(parts.at(2).toDoubles(), (std::vector<double>{5}));
  // Before 18, no sizes means equal parts: 5 does not split into 2.
  EXPECT_NE(errorOf([&] { run("Split", {x}, 13, nullptr, 2); }).find("does not split evenly"), std::string::npos);
  // Axis 1 of [[1,2,3],[4,5,6]] with sizes [1, 2]: [[1],[4]] and [[2,3],[5,6]].
  parts = run("Split", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {1, 2})}, 13, axis1, 2);
  EXPECT_EQ(parts.at(0).dims(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(parts.at(0).toDoubles(), (std::vector<double>{1, 4}));
  EXPECT_EQ(parts.at(1).dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(parts.at(1).toDoubles(), (std::vector<double>{2, 3, 5, 6}));
  EXPECT_NE(errorOf([&] { run("Split", {x, i64({2}, {2, 2})}, 13, nullptr, 2); }).find("must sum to the axis size 5"),
            std::string::npos);
}

TEST(CumSum, ExclusiveReverseAxisAndWrap) {
  Tensor x = f32({4}, {1, 2, 3, 4});
  Tensor axis0 = i64({}, {0});
  // Running sums 1, 1+2, 1+2+3, 1+2+3+4.
  EXPECT_EQ(run1("CumSum", {x, axis0}, 14).toDoubles(), (std::vector<double>{1, 3, 6, 10}));
  // exclusive: the sums before each element: 0, 1, 3, 6.
  EXPECT_EQ(run1("CumSum", {x, axis0}, 14, [](auto* n) { setIntAttr(n, "exclusive", 1); }).toDoubles(),
            (std::vector<double>{0, 1, 3, 6}));
  // reverse: sums from the end: 10, 2+3+4, 3+4, 4.
  EXPECT_EQ(run1("CumSum", {x, axis0}, 14, [](auto* n) { setIntAttr(n, "reverse", 1); }).toDoubles(),
            (std::vector<double>{10, 9, 7, 4}));
  // reverse and exclusive: 2+3+4, 3+4, 4, 0.
  EXPECT_EQ(run1("CumSum", {x, axis0}, 14,
                 [](auto* n) {
                   setIntAttr(n, "reverse", 1);
                   setIntAttr(n, "exclusive", 1);
                 })
                .toDoubles(),
            (std::vector<double>{9, 7, 4, 0}));
  // Axis -1 (i32 axis) of [[1,2],[3,4]]: [[1,3],[3,7]].
  EXPECT_EQ(run1("CumSum", {f32({2, 2}, {1, 2, 3, 4}), Tensor::fromInts(DType::Int32, {1}, {-1})}, 14).toDoubles(),
            (std::vector<double>{1, 3, 3, 7}));
  // int8 100 + 100 = 200 wraps to 200 - 256 = -56.
  EXPECT_EQ(run1("CumSum", {Tensor::fromInts(DType::Int8, {2}, {100, 100}), axis0}, 14).toInts(),
            (std::vector<int64_t>{100, -56}));
}

TEST(GatherND, TuplesSlicesBatchDimsAndNegativeIndices) {
  Tensor data = f32({2, 2}, {0, 1, 2, 3});
  // Full tuples [0,0] and [1,1] -> data[0][0] = 0, data[1][1] = 3.
  EXPECT_EQ(run1("GatherND", {data, i64({2, 2}, {0, 0, 1, 1})}, 13).toDoubles(), (std::vector<double>{0, 3}));
  // Partial tuples [1] and [0] pick rows: [[2,3],[0,1]].
  Tensor rows = run1("GatherND", {data, i64({2, 1}, {1, 0})}, 13);
  EXPECT_EQ(rows.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(rows.toDoubles(), (std::vector<double>{2, 3, 0, 1}));
  // [-1, -1] is data[1][1] = 3.
  EXPECT_EQ(run1("GatherND", {data, i64({1, 2}, {-1, -1})}, 13).toDoubles(), (std::vector<double>{3}));
  // batch_dims 1 on data [[[0,1],[2,3]],[[4,5],[6,7]]] with [[1],[0]]: batch 0 takes its row 1
  // = [2,3], batch 1 its row 0 = [4,5].
  Tensor b = run1("GatherND", {f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), i64({2, 1}, {1, 0})}, 13,
                  [](auto* n) { setIntAttr(n, "batch_dims", 1); });
  EXPECT_EQ(b.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(b.toDoubles(), (std::vector<double>{2, 3, 4, 5}));
  EXPECT_NE(errorOf([&] { run1("GatherND", {data, i64({1, 2}, {0, 2})}, 13); }).find("out of range"),
            std::string::npos);
}

TEST(TanhExp, UnaryMath) {
  // tanh(ln 2) = (2 - 1/2) / (2 + 1/2) = 0.6 (rounded to f32); tanh(0) = 0.
  EXPECT_EQ(run1("Tanh", {f32({2}, {std::log(2.0), 0})}).toDoubles(),
            (std::vector<double>{static_cast<double>(0.6f), 0}));
  // exp(0) = 1, exp(1) = e (rounded to f32).
  EXPECT_EQ(run1("Exp", {f32({2}, {0, 1})}).toDoubles(),
            (std::vector<double>{1, static_cast<double>(static_cast<float>(M_E))}));
}

TEST(Dropout, InferenceIsIdentityAndTrainingIsRejected) {
  Tensor x = f32({2}, {1, 2});
  // Dropout-13 without training_mode: y = x, mask all true (bool).
  auto out = run("Dropout", {x}, 13, nullptr, 2);
  EXPECT_EQ(out.at(0), x);
  EXPECT_EQ(out.at(1).dtype(), DType::Bool);
  EXPECT_EQ(out.at(1).toInts(), (std::vector<int64_t>{1, 1}));
  // training_mode true with ratio 0 keeps every element: still the identity.
  EXPECT_EQ(run1("Dropout", {x, f32({}, {0}), boolean({}, {1})}, 13), x);
  // training_mode true with ratio 0.5 is random.
  EXPECT_NE(errorOf([&] {
              run1("Dropout", {x, f32({}, {0.5}), boolean({}, {1})}, 13);
            }).find("unsupported: Dropout in training mode"),
            std::string::npos);
  // Dropout-6 defaults to is_test = 0 (training); is_test = 1 is the identity.
  EXPECT_NE(errorOf([&] { run1("Dropout", {x}, 6); }).find("unsupported: Dropout in training mode"), std::string::npos);
  EXPECT_EQ(run1("Dropout", {x}, 6, [](auto* n) { setIntAttr(n, "is_test", 1); }), x);
}

TEST(OpRegistry, ListsTheFoundationOps) {
  const auto ops = reference::OpRegistry::builtin().opTypes();
  for (const char* op : {"Reshape",   "Slice", "Expand", "Unsqueeze", "Squeeze",  "Flatten",  "Concat",
                         "Transpose", "Shape", "Gather", "Cast",      "Identity", "Constant", "ConstantOfShape",
                         "Range",     "Add",   "Sub",    "Mul",       "Div",      "Equal",    "Where"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
}

TEST(ActivationOps, HandComputed) {
  Tensor x = f32({6}, {-2.5, -0.5, 0.5, 1.5, 2.5, 3});
  // Relu: [0, 0, 0.5, 1.5, 2.5, 3]; Round halves to even: [-2, -0, 0, 2, 2, 3].
  EXPECT_EQ(run1("Relu", {x}).toDoubles(), (std::vector<double>{0, 0, 0.5, 1.5, 2.5, 3}));
  EXPECT_EQ(run1("Round", {x}).toDoubles(), (std::vector<double>{-2, -0.0, 0, 2, 2, 3}));
  // Floor / Ceil / Sign / Abs.
  EXPECT_EQ(run1("Floor", {x}).toDoubles(), (std::vector<double>{-3, -1, 0, 1, 2, 3}));
  EXPECT_EQ(run1("Ceil", {x}).toDoubles(), (std::vector<double>{-2, -0.0, 1, 2, 3, 3}));
  EXPECT_EQ(run1("Sign", {x}).toDoubles(), (std::vector<double>{-1, -1, 1, 1, 1, 1}));
  EXPECT_EQ(run1("Abs", {i64({2}, {-7, 7})}).toInts(), (std::vector<int64_t>{7, 7}));
  // LeakyRelu alpha 0.5: -4 -> -2.
  EXPECT_EQ(run1("LeakyRelu", {f32({2}, {-4, 2})}, 16, [](auto* n) { setFloatAttr(n, "alpha", 0.5f); }).toDoubles(),
            (std::vector<double>{-2, 2}));
  // Clip-13 with min 0 and max 2: [-2.5, -0.5, 0.5, 1.5, 2.5, 3] -> [0, 0, 0.5, 1.5, 2, 2]; only max given.
  EXPECT_EQ(run1("Clip", {x, f32({}, {0}), f32({}, {2})}, 13).toDoubles(), (std::vector<double>{0, 0, 0.5, 1.5, 2, 2}));
  EXPECT_EQ(run1("Clip", {x, f32({}, {-100}), f32({}, {1})}, 13, [](auto* n) { n->set_input(1, ""); }).toDoubles(),
            (std::vector<double>{-2.5, -0.5, 0.5, 1, 1, 1}));
  // Clip-6 attribute form: min -1 -> first element -1.
  EXPECT_EQ(run1("Clip", {x}, 6, [](auto* n) { setFloatAttr(n, "min", -1.0f); }).toDoubles().front(), -1.0);
}

TEST(ElementwiseTail, ModXorSumMean) {
  // Mod fmod 0: -7 mod 3 = 2, 7 mod -3 = -2; fmod 1: -7 fmod 3 = -1.
  EXPECT_EQ(run1("Mod", {i64({2}, {-7, 7}), i64({2}, {3, -3})}, 13).toInts(), (std::vector<int64_t>{2, -2}));
  EXPECT_EQ(run1("Mod", {i64({1}, {-7}), i64({1}, {3})}, 13, [](auto* n) { setIntAttr(n, "fmod", 1); }).toInts(),
            (std::vector<int64_t>{-1}));
  EXPECT_NE(errorOf([&] { run1("Mod", {f32({1}, {1}), f32({1}, {2})}, 13); }).find("unsupported: fmod = 0"),
            std::string::npos);
  // Xor truth table.
  EXPECT_EQ(run1("Xor", {boolean({4}, {0, 0, 1, 1}), boolean({4}, {0, 1, 0, 1})}).toInts(),
            (std::vector<int64_t>{0, 1, 1, 0}));
  // Sum of three: [1, 2] + [10] + [100, 200] = [111, 212]; Mean of [1, 2] and [3, 6] = [2, 4].
  EXPECT_EQ(run1("Sum", {f32({2}, {1, 2}), f32({1}, {10}), f32({2}, {100, 200})}).toDoubles(),
            (std::vector<double>{111, 212}));
  EXPECT_EQ(run1("Mean", {f32({2}, {1, 2}), f32({2}, {3, 6})}).toDoubles(), (std::vector<double>{2, 4}));
  // f32 partial sums are rounded: 2^24 + 1 rounds to 2^24 before - 2^24 is added, giving 0.
  EXPECT_EQ(run1("Sum", {f32({1}, {16777216}), f32({1}, {1}), f32({1}, {-16777216})}).toDoubles(),
            (std::vector<double>{0}));
  // Size of [2, 3] = 6 (rank 0); CastLike to i64 truncates 2.7 -> 2.
  Tensor s = run1("Size", {f32({2, 3}, std::vector<double>(6, 0))});
  EXPECT_EQ(s.dims(), (std::vector<int64_t>{}));
  EXPECT_EQ(s.toInts(), (std::vector<int64_t>{6}));
  EXPECT_EQ(run1("CastLike", {f32({1}, {2.7}), i64({1}, {0})}, 15).toInts(), (std::vector<int64_t>{2}));
}

TEST(ReductionTail, HandComputed) {
  Tensor x = f32({2, 3}, {1, -2, 3, 4, 5, -6});
  auto axis1 = [](auto* n) { setIntsAttr(n, "axes", {1}); };
  // Over axis 1: min [-2, -6], prod [-6, -120], sum of squares [14, 77], l2 [sqrt 14, sqrt 77].
  EXPECT_EQ(run1("ReduceMin", {x}, 13, axis1).toDoubles(), (std::vector<double>{-2, -6}));
  EXPECT_EQ(run1("ReduceProd", {x}, 13, axis1).toDoubles(), (std::vector<double>{-6, -120}));
  EXPECT_EQ(run1("ReduceSumSquare", {x}, 13, axis1).toDoubles(), (std::vector<double>{14, 77}));
  EXPECT_EQ(run1("ReduceL2", {x}, 13, axis1).toDoubles(),
            (std::vector<double>{static_cast<float>(std::sqrt(14.0)), static_cast<float>(std::sqrt(77.0))}));
  // ReduceLogSumExp-18, axes input [0], keepdims 0: log(e^1 + e^4) etc.
  Tensor lse = run1("ReduceLogSumExp", {x, i64({1}, {0})}, 18, [](auto* n) { setIntAttr(n, "keepdims", 0); });
  EXPECT_EQ(lse.dims(), (std::vector<int64_t>{3}));
  EXPECT_FLOAT_EQ(static_cast<float>(lse.getDouble(0)), static_cast<float>(std::log(std::exp(1.0) + std::exp(4.0))));
  // Integer l2 of [3, 4] = 5; empty prod = 1; empty min = +inf.
  EXPECT_EQ(run1("ReduceL2", {i64({2}, {3, 4})}, 13).toInts(), (std::vector<int64_t>{5}));
  EXPECT_EQ(
      run1("ReduceProd", {Tensor(DType::Float, {0, 2})}, 13, [](auto* n) { setIntsAttr(n, "axes", {0}); }).toDoubles(),
      (std::vector<double>{1, 1}));
  EXPECT_EQ(
      run1("ReduceMin", {Tensor(DType::Float, {0, 1})}, 13, [](auto* n) { setIntsAttr(n, "axes", {0}); }).toDoubles(),
      (std::vector<double>{INFINITY}));
  // LogSoftmax of [0, ln 3] = [ln 1/4, ln 3/4].
  Tensor ls = run1("LogSoftmax", {Tensor::fromDoubles(DType::Double, {2}, {0, std::log(3.0)})}, 13);
  EXPECT_NEAR(ls.getDouble(0), std::log(0.25), 1e-15);
  EXPECT_NEAR(ls.getDouble(1), std::log(0.75), 1e-15);
}

TEST(SelectionOps, ArgMaxArgMinOneHot) {
  Tensor x = f32({2, 3}, {2, 7, 7, 5, 1, 5});
  // ArgMax along 1: first 7 at 1, 5 at 0; with select_last_index: 2, 2. keepdims 0 drops the axis.
  Tensor a = run1("ArgMax", {x}, 13, [](auto* n) {
    setIntAttr(n, "axis", 1);
    setIntAttr(n, "keepdims", 0);
  });
  EXPECT_EQ(a.dims(), (std::vector<int64_t>{2}));
  EXPECT_EQ(a.toInts(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(run1("ArgMax", {x}, 13,
                 [](auto* n) {
                   setIntAttr(n, "axis", 1);
                   setIntAttr(n, "select_last_index", 1);
                 })
                .toInts(),
            (std::vector<int64_t>{2, 2}));
  // ArgMin along 0 (default): [2 < 5 -> 0, 1 < 7 -> 1, 5 < 7 -> 1], shape [1, 3].
  Tensor m = run1("ArgMin", {x}, 13);
  EXPECT_EQ(m.dims(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(m.toInts(), (std::vector<int64_t>{0, 1, 1}));
  // NaN is the extreme: ArgMin of [1, NaN] = 1.
  EXPECT_EQ(run1("ArgMin", {f32({2}, {1, NAN})}, 13).toInts(), (std::vector<int64_t>{1}));
  // OneHot indices [1, -1, 5], depth 3 (float, truncated from 3.5), values [0, 9]:
  // rows e1, e2, all off.
  Tensor oh = run1("OneHot", {i64({3}, {1, -1, 5}), f32({}, {3.5}), f32({2}, {0, 9})}, 11);
  EXPECT_EQ(oh.dims(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(oh.toDoubles(), (std::vector<double>{0, 9, 0, 0, 0, 9, 0, 0, 0}));
}
