// `dynqual make-model data-sets`: the corpus copies are exactly what it writes, its outputs are
// the reference's (checked by hand for the collapse graphs: y = flatten(x + x)), and it never
// overwrites stored sets.
#include "dynqual/modelgen/ReferenceDataSets.h"
#include "dynqual/onnx/TensorProtoIO.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace dynqual;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// The arguments the corpus sets were written with (also in docs/commands/make-model.md).
struct CorpusSets {
  const char* name;
  std::vector<std::string> dims; ///< one --dims per set; empty: --sets 3
};

const std::vector<CorpusSets>& corpusSets() {
  static const std::vector<CorpusSets> sets = {
      {"collapse4_dynamic", {"a=2,b=3,c=4", "a=1,b=1,c=5", "a=0,b=2,c=2"}},
      {"collapse3_dynamic", {"a=2,b=3,c=4", "a=3,b=1,c=1", "a=2,b=0,c=3"}},
      {"collapse4_static", {}},
      {"collapse3_static", {}},
      {"slice_declared_static", {"a=2,n=5", "a=3,n=2", "a=1,n=3"}},
      {"shape_output", {"a=2,b=3", "a=1,b=5", "a=0,b=4"}},
      {"shape_gather_scalar", {"a=2,b=3", "a=4,b=1", "a=1,b=0"}},
      {"shape_concat", {"a=2,b=3,c=4", "a=1,b=1,c=2", "a=3,b=0,c=1"}},
      {"reshape_empty_dynamic", {"n=3", "n=1", "n=7"}},
      {"gather_squeeze_readback", {"a=2,b=5,c=3", "a=1,b=3,c=1", "a=4,b=9,c=2"}},
      {"reshape_scalar_ones", {"a=2,b=3", "a=1,b=1", "a=4,b=2"}},
      {"slice_extreme_bounds", {"a=1,b=3", "a=4,b=2", "a=7,b=1"}},
      {"squeeze_empty_view", {"a=2,b=3", "a=1,b=1", "a=5,b=4"}},
      {"reshape_output_dims_in_order", {"a=2,b=3", "a=1,b=1", "a=4,b=5"}},
  };
  return sets;
}

fs::path freshCopy(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("dynqual-sets-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(fs::path(DYNQUAL_CORPUS_DIR) / name / "model.onnx", dir / "model.onnx");
  return dir;
}

int writeLikeCorpus(const CorpusSets& c, const fs::path& dir) {
  std::vector<modelgen::LabelBinding> bindings;
  for (const auto& d : c.dims)
    bindings.push_back(modelgen::parseLabelBinding(d));
  if (bindings.empty())
    bindings.resize(3);
  return modelgen::writeReferenceDataSets(dir, bindings, 1);
}

} // namespace

TEST(ReferenceDataSets, CorpusCopiesAreWhatMakeModelWrites) {
  for (const auto& c : corpusSets()) {
    SCOPED_TRACE(c.name);
    fs::path fresh = freshCopy(c.name);
    EXPECT_EQ(writeLikeCorpus(c, fresh), 3);
    fs::path corpus = fs::path(DYNQUAL_CORPUS_DIR) / c.name;
    int files = 0;
    for (const auto& e : fs::recursive_directory_iterator(fresh)) {
      if (!e.is_regular_file() || e.path().filename() == "model.onnx")
        continue;
      ++files;
      fs::path rel = fs::relative(e.path(), fresh);
      ASSERT_TRUE(fs::exists(corpus / rel))
          << rel << " missing from the corpus; regenerate it (docs/commands/make-model.md)";
      EXPECT_EQ(slurp(e.path()), slurp(corpus / rel)) << rel << " differs; regenerate it (docs/commands/make-model.md)";
    }
    int stored = 0; // every stored set file is regenerated, none is left over
    for (const auto& e : fs::recursive_directory_iterator(corpus))
      if (e.is_regular_file() && e.path().parent_path().filename().string().rfind("test_data_set_", 0) == 0)
        ++stored;
    EXPECT_GE(files, 3 * 2);
    EXPECT_EQ(files, stored);
    fs::remove_all(fresh);
  }
}

// Shape-valued outputs, checked against the dims of the stored inputs by hand: shape_output is
// [a, b]; shape_gather_scalar is d = b - 1 (int32, rank 0) and u = [b - 1]; shape_concat is
// [a, b, c] with x[a, b] and y[c, a].
TEST(ReferenceDataSets, ShapeOutputsAreTheInputDims) {
  const fs::path root = fs::path(DYNQUAL_CORPUS_DIR);
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE(k);
    const std::string set = "test_data_set_" + std::to_string(k);
    Tensor x = onnxio::readTensorFile(root / "shape_output" / set / "input_0.pb");
    Tensor s = onnxio::readTensorFile(root / "shape_output" / set / "output_0.pb");
    EXPECT_EQ(s.dims(), (std::vector<int64_t>{2}));
    EXPECT_EQ(s.toDoubles(), (std::vector<double>{double(x.dims()[0]), double(x.dims()[1])}));

    Tensor g = onnxio::readTensorFile(root / "shape_gather_scalar" / set / "input_0.pb");
    Tensor d = onnxio::readTensorFile(root / "shape_gather_scalar" / set / "output_0.pb");
    Tensor u = onnxio::readTensorFile(root / "shape_gather_scalar" / set / "output_1.pb");
    EXPECT_TRUE(d.dims().empty());
    EXPECT_EQ(d.toDoubles(), (std::vector<double>{double(g.dims()[1] - 1)}));
    EXPECT_EQ(u.dims(), (std::vector<int64_t>{1}));
    EXPECT_EQ(u.toDoubles(), d.toDoubles());

    Tensor cx = onnxio::readTensorFile(root / "shape_concat" / set / "input_0.pb");
    Tensor cy = onnxio::readTensorFile(root / "shape_concat" / set / "input_1.pb");
    Tensor c = onnxio::readTensorFile(root / "shape_concat" / set / "output_0.pb");
    EXPECT_EQ(c.toDoubles(), (std::vector<double>{double(cx.dims()[0]), double(cx.dims()[1]), double(cy.dims()[0])}));
  }
}

TEST(ReferenceDataSets, CollapseOutputIsTwiceTheInputFlattened) {
  fs::path dir = freshCopy("collapse4_dynamic");
  modelgen::writeReferenceDataSets(dir, {modelgen::parseLabelBinding("a=2,b=3,c=4")}, 7);
  Tensor x = onnxio::readTensorFile(dir / "test_data_set_0" / "input_0.pb");
  Tensor y = onnxio::readTensorFile(dir / "test_data_set_0" / "output_0.pb");
  EXPECT_EQ(x.dims(), (std::vector<int64_t>{2, 3, 4, 3}));
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{72}));
  auto xv = x.toDoubles(), yv = y.toDoubles();
  ASSERT_EQ(yv.size(), 72u);
  for (std::size_t i = 0; i < yv.size(); ++i)
    EXPECT_EQ(yv[i], 2 * xv[i]) << i; // x + x is exact in binary floating point
  fs::remove_all(dir);
}

TEST(ReferenceDataSets, NeverOverwritesAndNamesBadInput) {
  fs::path dir = freshCopy("collapse4_dynamic");
  modelgen::writeReferenceDataSets(dir, {modelgen::parseLabelBinding("a=1,b=1,c=1")}, 1);
  try {
    modelgen::writeReferenceDataSets(dir, {modelgen::parseLabelBinding("a=1,b=1,c=1")}, 1);
    ADD_FAILURE() << "a second call overwrote test_data_set_0";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("never overwritten"), std::string::npos) << e.what();
  }
  fs::remove_all(dir / "test_data_set_0");
  // An unbound dynamic dim names the input.
  try {
    modelgen::writeReferenceDataSets(dir, {modelgen::parseLabelBinding("a=1,b=1")}, 1);
    ADD_FAILURE() << "an unbound dim was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(modelgen::parseLabelBinding("a=2,b"), std::invalid_argument);
  EXPECT_THROW(modelgen::parseLabelBinding("a=-1"), std::invalid_argument);
  EXPECT_THROW(modelgen::parseLabelBinding("a=1,a=2"), std::invalid_argument);
  EXPECT_EQ(modelgen::parseLabelBinding("a=2,bb=0"), (modelgen::LabelBinding{{"a", 2}, {"bb", 0}}));
  fs::remove_all(dir);
}
