#pragma once
// Discovery of the ONNX test-data layout: MODEL/model.onnx, MODEL/test_data_set_K/{input,output}_N.pb.

#include <filesystem>
#include <vector>

namespace dynqual::onnxio {

/// One test_data_set_K folder: its input_N.pb and output_N.pb files in N order.
struct TestDataSet {
  std::filesystem::path dir;
  std::vector<std::filesystem::path> inputs;
  std::vector<std::filesystem::path> outputs;
};

/// Finds the test_data_set_K folders of `modelDir`, sorted by K numerically, with their
/// input_N.pb / output_N.pb files sorted by N. Throws std::runtime_error naming the folder when
/// the numbering of a folder's inputs or outputs has a gap (input_0, input_2 without input_1).
/// A model folder without data sets yields an empty vector.
std::vector<TestDataSet> discoverTestDataSets(const std::filesystem::path& modelDir);

} // namespace dynqual::onnxio
