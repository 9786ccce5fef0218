#include "TestModels.h"

#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/InputGenerator.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/onnx/TestDataSets.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

using namespace dynqual;
using namespace dynqual::onnxio;
namespace fs = std::filesystem;

namespace {

// A fresh folder under the system temp dir, removed at the end of the test.
class TempDir {
public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("dynqual-test-" + std::to_string(std::random_device{}()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

private:
  fs::path path_;
};

void writeBytes(const fs::path& file, const std::string& bytes) {
  std::ofstream out(file, std::ios::binary);
  out << bytes;
}

// Model with one f32[4] initializer 'w' stored externally at `location`, offset, length.
onnx::ModelProto externalModel(const std::string& location, const std::string& offset, const std::string& length) {
  onnx::ModelProto m = dynqual::test::emptyModel(13, {}, {dynqual::test::tensorValue("w", DType::Float, {4})});
  auto* init = m.mutable_graph()->add_initializer();
  init->set_name("w");
  init->set_data_type(onnx::TensorProto::FLOAT);
  init->add_dims(4);
  init->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const std::string& k, const std::string& v) {
    auto* kv = init->add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  };
  add("location", location);
  if (!offset.empty())
    add("offset", offset);
  if (!length.empty())
    add("length", length);
  return m;
}

void saveModel(const onnx::ModelProto& m, const fs::path& file) {
  std::ofstream out(file, std::ios::binary);
  ASSERT_TRUE(m.SerializeToOstream(&out));
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string floatBytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

} // namespace

TEST(TensorProtoIO, RoundTripsEveryDType) {
  TempDir dir;
  for (DType t : {DType::Float, DType::Float16, DType::BFloat16, DType::Double, DType::Int8, DType::Uint8, DType::Int32,
                  DType::Int64, DType::Bool}) {
    Tensor original = Tensor::fromInts(t, {2, 0}, {});
    Tensor filled = Tensor::fromDoubles(t, {2, 3}, {1, 0, 1, 1, 0, 1});
    for (const Tensor& x : {original, filled}) {
      writeTensorFile(dir.path() / "t.pb", x, "t");
      std::string name;
      EXPECT_EQ(readTensorFile(dir.path() / "t.pb", name), x) << dtypeName(t);
      EXPECT_EQ(name, "t");
    }
  }
}

TEST(TensorProtoIO, ReadsTypedFields) {
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT16);
  p.add_dims(2);
  p.add_int32_data(0x3C00); // 1.0
  p.add_int32_data(0xC000); // -2.0
  Tensor h = tensorFromProto(p, "t");
  EXPECT_EQ(h.getDouble(0), 1.0);
  EXPECT_EQ(h.getDouble(1), -2.0);

  onnx::TensorProto b;
  b.set_data_type(onnx::TensorProto::BOOL);
  b.add_dims(3);
  for (int v : {1, 0, 1})
    b.add_int32_data(v);
  EXPECT_EQ(tensorFromProto(b, "t").toInts(), (std::vector<int64_t>{1, 0, 1}));

  onnx::TensorProto i;
  i.set_data_type(onnx::TensorProto::INT64);
  i.add_dims(2);
  i.add_int64_data(-5);
  EXPECT_NE(errorOf([&] { tensorFromProto(i, "ctx"); }).find("int64_data holds 1 values but dims need 2"),
            std::string::npos);
  i.add_int64_data(7);
  EXPECT_EQ(tensorFromProto(i, "t").toInts(), (std::vector<int64_t>{-5, 7}));

  onnx::TensorProto s;
  s.set_data_type(onnx::TensorProto::STRING);
  EXPECT_NE(errorOf([&] { tensorFromProto(s, "ctx"); }).find("string"), std::string::npos);
}

TEST(TensorProtoIO, MissingFileNamesIt) {
  EXPECT_NE(errorOf([] { readTensorFile("/nonexistent/x.pb"); }).find("/nonexistent/x.pb"), std::string::npos);
}

TEST(ModelLoader, ResolvesExternalData) {
  TempDir dir;
  writeBytes(dir.path() / "model.onnx.data", "pad!" + floatBytes({1, 2, 3, 4}));
  saveModel(externalModel("model.onnx.data", "4", "16"), dir.path() / "model.onnx");
  onnx::ModelProto m = loadModel(dir.path() / "model.onnx");
  Tensor w = tensorFromProto(m.graph().initializer(0), "w");
  EXPECT_EQ(w.toDoubles(), (std::vector<double>{1, 2, 3, 4}));
}

TEST(ModelLoader, RejectsEscapingLocations) {
  TempDir dir;
  fs::create_directories(dir.path() / "m");
  writeBytes(dir.path() / "outside.data", floatBytes({1, 2, 3, 4}));
  fs::create_symlink(dir.path() / "outside.data", dir.path() / "m" / "link.data");

  saveModel(externalModel("../outside.data", "", ""), dir.path() / "m" / "model.onnx");
  std::string e = errorOf([&] { loadModel(dir.path() / "m" / "model.onnx"); });
  EXPECT_NE(e.find("escapes the model folder"), std::string::npos) << e;
  EXPECT_NE(e.find("initializer 'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("model.onnx"), std::string::npos) << e;

  saveModel(externalModel((dir.path() / "outside.data").string(), "", ""), dir.path() / "m" / "model.onnx");
  e = errorOf([&] { loadModel(dir.path() / "m" / "model.onnx"); });
  EXPECT_NE(e.find("is absolute"), std::string::npos) << e;

  saveModel(externalModel("link.data", "", ""), dir.path() / "m" / "model.onnx");
  e = errorOf([&] { loadModel(dir.path() / "m" / "model.onnx"); });
  EXPECT_NE(e.find("escapes the model folder"), std::string::npos) << e;

  // A `..` that comes back inside the folder is fine.
  writeBytes(dir.path() / "m" / "in.data", floatBytes({1, 2, 3, 4}));
  fs::create_directories(dir.path() / "m" / "sub");
  saveModel(externalModel("sub/../in.data", "", ""), dir.path() / "m" / "model.onnx");
  EXPECT_EQ(errorOf([&] { loadModel(dir.path() / "m" / "model.onnx"); }), "");
}

TEST(ModelLoader, RejectsOutOfBoundsRanges) {
  TempDir dir;
  writeBytes(dir.path() / "w.data", floatBytes({1, 2, 3, 4})); // 16 bytes
  saveModel(externalModel("w.data", "4", "16"), dir.path() / "model.onnx");
  std::string e = errorOf([&] { loadModel(dir.path() / "model.onnx"); });
  EXPECT_NE(e.find("out of bounds"), std::string::npos) << e;
  EXPECT_NE(e.find("initializer 'w'"), std::string::npos) << e;

  saveModel(externalModel("w.data", "17", ""), dir.path() / "model.onnx");
  e = errorOf([&] { loadModel(dir.path() / "model.onnx"); });
  EXPECT_NE(e.find("past the end"), std::string::npos) << e;

  saveModel(externalModel("w.data", "-1", ""), dir.path() / "model.onnx");
  e = errorOf([&] { loadModel(dir.path() / "model.onnx"); });
  EXPECT_NE(e.find("not a non-negative integer"), std::string::npos) << e;

  saveModel(externalModel("missing.data", "", ""), dir.path() / "model.onnx");
  e = errorOf([&] { loadModel(dir.path() / "model.onnx"); });
  EXPECT_NE(e.find("not found"), std::string::npos) << e;

  // In bounds, but 8 bytes cannot hold f32[4]: the tensor conversion reports it.
  saveModel(externalModel("w.data", "8", "8"), dir.path() / "model.onnx");
  onnx::ModelProto m = loadModel(dir.path() / "model.onnx");
  e = errorOf([&] { tensorFromProto(m.graph().initializer(0), "initializer 'w'"); });
  EXPECT_NE(e.find("raw_data holds 8 bytes"), std::string::npos) << e;
}

TEST(TestDataSets, SortsNumericallyAndChecksGaps) {
  TempDir dir;
  for (int k : {0, 2, 10}) {
    fs::create_directories(dir.path() / ("test_data_set_" + std::to_string(k)));
    writeBytes(dir.path() / ("test_data_set_" + std::to_string(k)) / "input_0.pb", "");
    writeBytes(dir.path() / ("test_data_set_" + std::to_string(k)) / "output_0.pb", "");
  }
  writeBytes(dir.path() / "test_data_set_10" / "input_1.pb", "");
  auto sets = discoverTestDataSets(dir.path());
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_EQ(sets[1].dir.filename(), "test_data_set_2");
  EXPECT_EQ(sets[2].dir.filename(), "test_data_set_10");
  EXPECT_EQ(sets[2].inputs.size(), 2u);
  writeBytes(dir.path() / "test_data_set_0" / "output_2.pb", "");
  EXPECT_NE(errorOf([&] { discoverTestDataSets(dir.path()); }).find("output_1.pb is missing"), std::string::npos);
}

TEST(GraphSignature, DimParamsAreDynamicAndBadTypesRefused) {
  onnx::ModelProto m = dynqual::test::emptyModel(13, {dynqual::test::tensorValue("x", DType::Float, {2, -1})}, {});
  m.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_param("seq + past");
  auto* unknown =
      m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
  (void)unknown; // neither dim_value nor dim_param
  auto specs = describeInputs(m);
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].dims, (std::vector<int64_t>{2, kDynamicDim, kDynamicDim}));
  EXPECT_EQ(specs[0].dimLabels[1], "seq + past");

  onnx::ModelProto s = dynqual::test::emptyModel(13, {dynqual::test::tensorValue("names", DType::Float, {1})}, {});
  s.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::STRING);
  std::string e = errorOf([&] { describeInputs(s); });
  EXPECT_NE(e.find("'names'"), std::string::npos) << e;
  EXPECT_NE(e.find("string"), std::string::npos) << e;

  onnx::ModelProto q = dynqual::test::emptyModel(13, {}, {});
  auto* in = q.mutable_graph()->add_input();
  in->set_name("seq");
  in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  e = errorOf([&] { describeInputs(q); });
  EXPECT_NE(e.find("'seq'"), std::string::npos) << e;
  EXPECT_NE(e.find("sequence"), std::string::npos) << e;
}

TEST(InputGenerator, DeterministicAndInRange) {
  std::vector<ValueSpec> specs = {{"a", DType::Float, {2, kDynamicDim}, {"", "n"}},
                                  {"b", DType::Int64, {kDynamicDim}, {""}},
                                  {"c", DType::Bool, {5}, {""}}};
  DimBinding binding;
  binding.byLabel["n"] = 3;
  EXPECT_NE(errorOf([&] { bindShapes(specs, binding); }).find("input 'b' dim 0 is dynamic and has no binding"),
            std::string::npos);
  binding.byPosition[{1, 0}] = 0;
  auto shapes = bindShapes(specs, binding);
  EXPECT_EQ(shapes[0], (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(shapes[1], (std::vector<int64_t>{0}));
  auto first = generateInputs(specs, shapes, 42);
  auto again = generateInputs(specs, shapes, 42);
  auto other = generateInputs(specs, shapes, 43);
  EXPECT_EQ(first, again);
  EXPECT_NE(first[0], other[0]);
  for (double v : first[0].toDoubles()) {
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
  }
  EXPECT_EQ(first[1].numel(), 0);
  specs[1].dims = {50};
  auto ints = generateInputs(specs, {{2, 3}, {50}, {5}}, 7);
  for (int64_t v : ints[1].toInts()) {
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 9);
  }
}
