#include "dynqual/onnx/InputGenerator.h"

#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>

namespace dynqual::onnxio {
namespace {

// Uniform double in [0, 1) from the top 53 bits of one generator word.
double unitInterval(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Uniform integer in [lo, hi] by rejection, so no value is favoured.
int64_t uniformInt(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1; // 0 means 2^64
  if (span == 0)
    return static_cast<int64_t>(rng());
  const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % span;
  uint64_t word;
  do
    word = rng();
  while (word >= limit);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + word % span);
}

void checkIntRange(const ValueSpec& spec, const GeneratorOptions& o) {
  if (o.intLow > o.intHigh)
    throw std::invalid_argument("input '" + spec.name + "': empty integer range [" + std::to_string(o.intLow) + ", " +
                                std::to_string(o.intHigh) + "]");
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  switch (spec.dtype) {
  case DType::Int8:
    lo = -128;
    hi = 127;
    break;
  case DType::Uint8:
    lo = 0;
    hi = 255;
    break;
  case DType::Int32:
    lo = INT32_MIN;
    hi = INT32_MAX;
    break;
  default:
    break;
  }
  if (o.intLow < lo || o.intHigh > hi)
    throw std::invalid_argument("input '" + spec.name + "': integer range does not fit " + dtypeName(spec.dtype));
}

} // namespace

std::vector<std::vector<int64_t>> bindShapes(const std::vector<ValueSpec>& specs, const DimBinding& binding) {
  std::vector<std::vector<int64_t>> shapes;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    std::vector<int64_t> dims = specs[i].dims;
    for (std::size_t axis = 0; axis < dims.size(); ++axis) {
      if (dims[axis] != kDynamicDim)
        continue;
      const std::string& label = axis < specs[i].dimLabels.size() ? specs[i].dimLabels[axis] : std::string();
      const std::string where =
          "input '" + specs[i].name + "' dim " + std::to_string(axis) + (label.empty() ? "" : " ('" + label + "')");
      if (auto pos = binding.byPosition.find({i, axis}); pos != binding.byPosition.end())
        dims[axis] = pos->second;
      else if (auto lab = binding.byLabel.find(label); !label.empty() && lab != binding.byLabel.end())
        dims[axis] = lab->second;
      else
        throw std::runtime_error(where + " is dynamic and has no binding");
      if (dims[axis] < 0)
        throw std::runtime_error(where + " is bound to negative size " + std::to_string(dims[axis]));
    }
    shapes.push_back(std::move(dims));
  }
  return shapes;
}

std::vector<Tensor> generateInputs(const std::vector<ValueSpec>& specs, const std::vector<std::vector<int64_t>>& shapes,
                                   uint64_t seed, const GeneratorOptions& options) {
  if (shapes.size() != specs.size())
    throw std::invalid_argument("generateInputs: " + std::to_string(shapes.size()) + " shapes for " +
                                std::to_string(specs.size()) + " inputs");
  std::mt19937_64 rng(seed);
  std::vector<Tensor> tensors;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const ValueSpec& spec = specs[i];
    Tensor t(spec.dtype, shapes[i]);
    if (isIntegerDType(spec.dtype))
      checkIntRange(spec, options);
    for (int64_t e = 0; e < t.numel(); ++e) {
      if (isFloatDType(spec.dtype))
        t.setDouble(e, options.floatLow + (options.floatHigh - options.floatLow) * unitInterval(rng));
      else if (spec.dtype == DType::Bool)
        t.setInt(e, static_cast<int64_t>(rng() >> 63));
      else
        t.setInt(e, uniformInt(rng, options.intLow, options.intHigh));
    }
    tensors.push_back(std::move(t));
  }
  return tensors;
}

} // namespace dynqual::onnxio
