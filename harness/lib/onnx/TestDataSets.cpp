#include "dynqual/onnx/TestDataSets.h"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

namespace dynqual::onnxio {
namespace fs = std::filesystem;
namespace {

// The number after `prefix` when `name` is exactly prefix + digits + suffix.
std::optional<uint64_t> numberedName(const std::string& name, const std::string& prefix, const std::string& suffix) {
  if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9)
    return std::nullopt;
  return std::stoull(digits);
}

std::vector<fs::path> numberedFiles(const fs::path& dir, const std::string& prefix) {
  std::map<uint64_t, fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir))
    if (auto n = numberedName(entry.path().filename().string(), prefix, ".pb"))
      found[*n] = entry.path();
  std::vector<fs::path> files;
  for (const auto& [n, path] : found) {
    if (n != files.size())
      throw std::runtime_error(dir.string() + ": " + prefix + std::to_string(files.size()) + ".pb is missing (found " +
                               path.filename().string() + ")");
    files.push_back(path);
  }
  return files;
}

} // namespace

std::vector<TestDataSet> discoverTestDataSets(const fs::path& modelDir) {
  std::map<uint64_t, fs::path> dirs;
  std::error_code ec;
  fs::directory_iterator it(modelDir, ec);
  if (ec)
    throw std::runtime_error(modelDir.string() + ": cannot list model folder: " + ec.message());
  for (const auto& entry : it)
    if (entry.is_directory())
      if (auto n = numberedName(entry.path().filename().string(), "test_data_set_", ""))
        dirs[*n] = entry.path();
  std::vector<TestDataSet> sets;
  for (const auto& [n, dir] : dirs)
    sets.push_back({dir, numberedFiles(dir, "input_"), numberedFiles(dir, "output_")});
  return sets;
}

} // namespace dynqual::onnxio
