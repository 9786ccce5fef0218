// Hand-computed cases of NonZero, Compress, TopK, Tile, Pad, ScatterND and ScatterElements; each
// expected value is worked out in the comment beside it.
#include "TestModels.h"

#include "dynqual/reference/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace dynqual;
using dynqual::test::setIntAttr;
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

void setStringAttr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

std::vector<Tensor> run(const std::string& op, const std::vector<Tensor>& inputs,
                        const std::function<void(onnx::NodeProto*)>& configure = nullptr, int outputs = 1,
                        int64_t opset = 18) {
  onnx::ModelProto m = singleNodeModel(op, inputs, opset, outputs);
  if (configure)
    configure(m.mutable_graph()->mutable_node(0));
  return reference::evaluate(m, inputs);
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

TEST(NonZero, IndicesInRowMajorOrderAndEmptyCount) {
  // [[0, 2], [3, 0]] -> nonzero at (0,1), (1,0): rows [0, 1] and [1, 0].
  Tensor y = run("NonZero", {f32({2, 2}, {0, 2, 3, 0})})[0];
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(y.toInts(), (std::vector<int64_t>{0, 1, 1, 0}));
  // NaN is nonzero; all zeros give [rank, 0].
  EXPECT_EQ(run("NonZero", {f32({3}, {0, NAN, 0})})[0].toInts(), (std::vector<int64_t>{1}));
  EXPECT_EQ(run("NonZero", {f32({2, 3}, {0, 0, 0, 0, 0, 0})})[0].dims(), (std::vector<int64_t>{2, 0}));
}

TEST(Compress, AxisFlattenShortConditionAndTrueBeyondExtent) {
  Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  // axis 0, keep rows 0 and 2: [[1, 2], [5, 6]].
  Tensor a = run("Compress", {x, boolean({3}, {1, 0, 1})}, [](auto* n) { setIntAttr(n, "axis", 0); })[0];
  EXPECT_EQ(a.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a.toDoubles(), (std::vector<double>{1, 2, 5, 6}));
  // axis -1 with a condition of length 1 (shorter): column 0 only -> [1, 3, 5].
  Tensor b = run("Compress", {x, boolean({1}, {1})}, [](auto* n) { setIntAttr(n, "axis", -1); })[0];
  EXPECT_EQ(b.dims(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(b.toDoubles(), (std::vector<double>{1, 3, 5}));
  // no axis: flattened, keep elements 1 and 4 -> [2, 5].
  EXPECT_EQ(run("Compress", {x, boolean({5}, {0, 1, 0, 0, 1})})[0].toDoubles(), (std::vector<double>{2, 5}));
  // all false: zero count.
  EXPECT_EQ(run("Compress", {x, boolean({3}, {0, 0, 0})}, [](auto* n) { setIntAttr(n, "axis", 0); })[0].dims(),
            (std::vector<int64_t>{0, 2}));
  EXPECT_NE(errorOf([&] {
              run("Compress", {x, boolean({4}, {0, 0, 0, 1})}, [](auto* n) { setIntAttr(n, "axis", 0); });
            }).find("beyond the extent"),
            std::string::npos);
}

TEST(TopK, LargestSmallestTiesAndNaN) {
  // [3, 1, 3, 2], k = 2 largest: 3 (index 0), 3 (index 2): ties keep the lower index first.
  auto r = run("TopK", {f32({4}, {3, 1, 3, 2}), i64({1}, {2})}, nullptr, 2);
  EXPECT_EQ(r[0].toDoubles(), (std::vector<double>{3, 3}));
  EXPECT_EQ(r[1].toInts(), (std::vector<int64_t>{0, 2}));
  // smallest, k = 3: 1 (1), 2 (3), 3 (0).
  r = run("TopK", {f32({4}, {3, 1, 3, 2}), i64({1}, {3})}, [](auto* n) { setIntAttr(n, "largest", 0); }, 2);
  EXPECT_EQ(r[1].toInts(), (std::vector<int64_t>{1, 3, 0}));
  // NaN ranks above +inf: largest k = 1 picks the NaN at index 1; smallest k = 2 never does.
  r = run("TopK", {f32({3}, {INFINITY, NAN, 0}), i64({1}, {1})}, nullptr, 2);
  EXPECT_EQ(r[1].toInts(), (std::vector<int64_t>{1}));
  r = run("TopK", {f32({3}, {INFINITY, NAN, 0}), i64({1}, {2})}, [](auto* n) { setIntAttr(n, "largest", 0); }, 2);
  EXPECT_EQ(r[1].toInts(), (std::vector<int64_t>{2, 0}));
  // axis 0 of [[1, 5], [4, 2]], k = 1: column maxima 4 (row 1), 5 (row 0).
  r = run("TopK", {f32({2, 2}, {1, 5, 4, 2}), i64({1}, {1})}, [](auto* n) { setIntAttr(n, "axis", 0); }, 2);
  EXPECT_EQ(r[0].toDoubles(), (std::vector<double>{4, 5}));
  EXPECT_EQ(r[1].toInts(), (std::vector<int64_t>{1, 0}));
  EXPECT_NE(errorOf([&] { run("TopK", {f32({2}, {1, 2}), i64({1}, {3})}, nullptr, 2); }).find("k = 3"),
            std::string::npos);
}

TEST(Tile, RepeatsPerAxisAndZero) {
  // [[1, 2]] tiled (2, 2): [[1, 2, 1, 2], [1, 2, 1, 2]].
  Tensor y = run("Tile", {f32({1, 2}, {1, 2}), i64({2}, {2, 2})})[0];
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{1, 2, 1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(run("Tile", {f32({1, 2}, {1, 2}), i64({2}, {0, 3})})[0].dims(), (std::vector<int64_t>{0, 6}));
}

TEST(Pad, ConstantReflectEdgeAxesAndCrop) {
  Tensor x = f32({3}, {1, 2, 3});
  // constant 9, pads (2, 1): [9, 9, 1, 2, 3, 9].
  EXPECT_EQ(run("Pad", {x, i64({2}, {2, 1}), f32({}, {9})})[0].toDoubles(), (std::vector<double>{9, 9, 1, 2, 3, 9}));
  // reflect (2, 2): [3, 2, 1, 2, 3, 2, 1].
  EXPECT_EQ(run("Pad", {x, i64({2}, {2, 2})}, [](auto* n) { setStringAttr(n, "mode", "reflect"); })[0].toDoubles(),
            (std::vector<double>{3, 2, 1, 2, 3, 2, 1}));
  // edge (1, 2): [1, 1, 2, 3, 3, 3].
  EXPECT_EQ(run("Pad", {x, i64({2}, {1, 2})}, [](auto* n) { setStringAttr(n, "mode", "edge"); })[0].toDoubles(),
            (std::vector<double>{1, 1, 2, 3, 3, 3}));
  // negative pads crop: (-1, 0) -> [2, 3].
  EXPECT_EQ(run("Pad", {x, i64({2}, {-1, 0})})[0].toDoubles(), (std::vector<double>{2, 3}));
  // opset 18 axes [-1] on [[1, 2], [3, 4]] with pads (1, 0): [[0, 1, 2], [0, 3, 4]].
  Tensor y = run("Pad", {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {1, 0}), f32({}, {0}), i64({1}, {-1})})[0];
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(y.toDoubles(), (std::vector<double>{0, 1, 2, 0, 3, 4}));
  EXPECT_NE(errorOf([&] {
              run("Pad", {x, i64({2}, {1, 1})}, [](auto* n) { setStringAttr(n, "mode", "wrap"); });
            }).find("unsupported: mode 'wrap'"),
            std::string::npos);
}

TEST(ScatterND, RowsReductionsAndDuplicates) {
  Tensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  // row 2 <- [7, 8], row 0 <- [9, 10]: [[9, 10], [3, 4], [7, 8]].
  EXPECT_EQ(run("ScatterND", {data, i64({2, 1}, {2, 0}), f32({2, 2}, {7, 8, 9, 10})})[0].toDoubles(),
            (std::vector<double>{9, 10, 3, 4, 7, 8}));
  // add with a duplicate: element (1, 1) = 4 + 1 + 2 = 7.
  auto add = [](auto* n) { setStringAttr(n, "reduction", "add"); };
  EXPECT_EQ(run("ScatterND", {data, i64({2, 2}, {1, 1, -2, 1}), f32({2}, {1, 2})}, add)[0].toDoubles(),
            (std::vector<double>{1, 2, 3, 7, 5, 6}));
  auto mx = [](auto* n) { setStringAttr(n, "reduction", "max"); };
  EXPECT_EQ(run("ScatterND", {data, i64({1, 2}, {0, 0}), f32({1}, {0.5})}, mx)[0].toDoubles(),
            (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_NE(errorOf([&] {
              run("ScatterND", {data, i64({2, 1}, {1, 1}), f32({2, 2}, {0, 0, 0, 0})});
            }).find("reduction 'none'"),
            std::string::npos);
}

TEST(ScatterElements, AxisReductionsAndDuplicates) {
  Tensor data = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  // axis 1, indices [[2], [0]], updates [[9], [8]]: (0,2) <- 9, (1,0) <- 8.
  auto axis1 = [](auto* n) { setIntAttr(n, "axis", 1); };
  EXPECT_EQ(run("ScatterElements", {data, i64({2, 1}, {2, 0}), f32({2, 1}, {9, 8})}, axis1)[0].toDoubles(),
            (std::vector<double>{1, 2, 9, 8, 5, 6}));
  // mul along axis 0 with both updates on (0, 0): 1 * 2 * 3 = 6.
  auto mul = [](auto* n) { setStringAttr(n, "reduction", "mul"); };
  EXPECT_EQ(run("ScatterElements", {f32({2, 1}, {1, 5}), i64({2, 1}, {0, 0}), f32({2, 1}, {2, 3})}, mul)[0].toDoubles(),
            (std::vector<double>{6, 5}));
  EXPECT_NE(errorOf([&] {
              run("ScatterElements", {f32({2, 1}, {1, 5}), i64({2, 1}, {0, 0}), f32({2, 1}, {2, 3})});
            }).find("reduction 'none'"),
            std::string::npos);
}

TEST(EvaluateLimits, ElementLimitCountsInputsAndNodeOutputs) {
  // x [2] tiled 1000 times: the evaluation holds 2 (input x) + 1 (input repeats) + 2000 (output)
  // = 2003 elements, so 2003 is within the limit and 2002 is past it. Tile checks before it
  // allocates: 2002 - 3 = 1999 elements are left for its output of 2000.
  std::vector<Tensor> inputs = {f32({2}, {1, 2}), i64({1}, {1000})};
  onnx::ModelProto m = singleNodeModel("Tile", inputs, 13);
  reference::EvaluateLimits within{2003, 0};
  EXPECT_EQ(reference::evaluate(m, inputs, within)[0].numel(), 2000);
  reference::EvaluateLimits past{2002, 0};
  std::string error;
  try {
    reference::evaluate(m, inputs, past);
  } catch (const reference::LimitExceeded& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("(Tile): an output of shape [2000] would pass the element limit (1999 elements left)"),
            std::string::npos)
      << error;
  // No limit (the default): runs.
  EXPECT_EQ(reference::evaluate(m, inputs)[0].numel(), 2000);

  // Add checks nothing itself (its output is as large as its inputs): the check after the node
  // sees 3 + 3 + 3 = 9 elements held.
  std::vector<Tensor> pair = {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})};
  onnx::ModelProto add = singleNodeModel("Add", pair, 13);
  EXPECT_EQ(reference::evaluate(add, pair, reference::EvaluateLimits{9, 0})[0].toDoubles(),
            (std::vector<double>{5, 7, 9}));
  error = errorOf([&] { reference::evaluate(add, pair, reference::EvaluateLimits{8, 0}); });
  EXPECT_NE(error.find("(Add): the values computed so far hold 9 elements, over the limit of 8"), std::string::npos)
      << error;
  // The inputs alone count: 6 elements past a limit of 5, before any node.
  error = errorOf([&] { reference::evaluate(add, pair, reference::EvaluateLimits{5, 0}); });
  EXPECT_NE(error.find("hold 6 elements, over the limit of 5"), std::string::npos) << error;
}

TEST(EvaluateLimits, TimeLimitIsCheckedAfterEachNode) {
  std::vector<Tensor> inputs = {f32({2}, {1, 2}), i64({1}, {3})};
  onnx::ModelProto m = singleNodeModel("Tile", inputs, 13);
  // A nanosecond is over before the first node has run.
  reference::EvaluateLimits tiny{0, 1e-9};
  std::string error = errorOf([&] { reference::evaluate(m, inputs, tiny); });
  EXPECT_NE(error.find("over the limit of"), std::string::npos) << error;
  EXPECT_NE(error.find(" s"), std::string::npos) << error;
  reference::EvaluateLimits generous{0, 60};
  EXPECT_EQ(reference::evaluate(m, inputs, generous)[0].toDoubles(), (std::vector<double>{1, 2, 1, 2, 1, 2}));
}
