#pragma once
// Deterministic random inputs for declared input specs under a binding of the dynamic dims.

#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/tensor/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dynqual::onnxio {

/// Values for dynamic dims. A positional entry (input index, axis) wins over a label entry;
/// unnamed dynamic dims can only be bound positionally.
struct DimBinding {
  std::map<std::string, int64_t> byLabel;
  std::map<std::pair<std::size_t, std::size_t>, int64_t> byPosition;
};

/// Ranges of generated values.
struct GeneratorOptions {
  double floatLow = -1.0; ///< floats are uniform in [floatLow, floatHigh)
  double floatHigh = 1.0;
  int64_t intLow = 0; ///< integers are uniform in [intLow, intHigh]
  int64_t intHigh = 9;
};

/// Concrete dims of each input: static dims as declared, dynamic ones from `binding`.
/// Throws std::runtime_error naming the input and axis when a dynamic dim is unbound or bound
/// to a negative value.
std::vector<std::vector<int64_t>> bindShapes(const std::vector<ValueSpec>& specs, const DimBinding& binding);

/// One tensor per spec with the given concrete shapes, filled from a std::mt19937_64 seeded with
/// `seed` in spec order. The mapping from generator words to values is fixed here (not left to
/// std:: distributions), so the same seed gives the same bytes on every platform. Bool inputs are
/// 0/1 with equal odds. Throws std::invalid_argument when shapes.size() != specs.size() or an
/// integer range is empty or does not fit the dtype.
std::vector<Tensor> generateInputs(const std::vector<ValueSpec>& specs, const std::vector<std::vector<int64_t>>& shapes,
                                   uint64_t seed, const GeneratorOptions& options = {});

} // namespace dynqual::onnxio
