#pragma once
// The one place that turns a model into cases beyond its stored data sets: which generated shape
// bindings a command takes (a BindingPolicy each for run, ab and the fuzzer's oracle, side by
// side) and the rule that admits a generated binding (the CPU reference accepts it and its output
// shapes agree with every static dim the model declares). Stored data sets are the model folder's
// own (onnxio::discoverTestDataSets).
#include "dynqual/onnx/ShapeBindings.h"
#include "dynqual/tensor/Tensor.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dynqual::cases {

/// Which generated bindings a command takes from onnxio::makeBindings.
struct BindingPolicy {
  int count = 4;        ///< bindings asked of makeBindings (the "zero" one included)
  bool keepZero = true; ///< keep the "zero" binding (run tries each dim at 0 in turn)
  int keep = -1;        ///< at most this many after dropping "zero" (-1: all)
  /// A model without dynamic dims gets this one binding (none: no binding at all).
  std::optional<onnxio::NamedBinding> whenStatic;
  /// Kept bindings from this index on are "solo-one" bindings (onnxio::soloOneBindings: one
  /// dim at 1, the others larger) instead of "random" ones, one per dynamic dim starting at
  /// the dim the seed picks (seed mod dims), then random again; -1: none.
  int soloOneFrom = -1;
};

/// `dynqual run` and `qualify`: `extraBindings` bindings, the zero one included, none for a
/// static model (its stored data sets are its cases).
BindingPolicy runPolicy(int extraBindings);

/// `ab`, `gate`, `calibrate` on a model without stored data sets: the first two non-zero
/// bindings of three, or one "static shapes" binding.
BindingPolicy abPolicy();

/// The fuzzer's oracle: the first `k` non-zero bindings of k + 1 (its symbols are >= 1 by
/// construction) with solo-one bindings in place of the random ones (from index 3: ones,
/// asymmetric, larger, then one dim alone at 1 per slot), or one "static" binding.
BindingPolicy fuzzPolicy(int k);

/// The bindings `policy` takes for inputs `specs` (traced: the first stored data set's input
/// shapes, or empty), seeded by `seed`. Never throws.
std::vector<onnxio::NamedBinding> chooseBindings(const std::vector<onnxio::ValueSpec>& specs,
                                                 const std::vector<std::vector<int64_t>>& traced, uint64_t seed,
                                                 const BindingPolicy& policy);

/// A generated binding after admission.
struct Admission {
  bool admitted = false;
  onnxio::NamedBinding binding;                  ///< the admitted candidate, else the last one tried
  std::vector<std::vector<int64_t>> inputShapes; ///< its input shapes (empty when binding them failed)
  std::vector<Tensor> inputs, expected;          ///< its inputs and the reference's outputs (admitted)
  std::string rejected;                          ///< why the last candidate was not admitted
};

/// Makes a binding's inputs from its input shapes; may throw (that rejects the candidate).
using InputMaker = std::function<std::vector<Tensor>(const std::vector<std::vector<int64_t>>& shapes)>;

/// Admission of generated bindings, decided before any compiled program runs: tries `candidates`
/// in order (the zero alternatives of a "zero" binding, or one binding) and admits the first whose
/// inputs (from `makeInputs`) the CPU reference evaluates and whose output shapes agree with every
/// static dim of `outSpecs` (onnxio::declaredOutputContradiction). `rejected` then says why the
/// last one was not: "the reference rejects it: ..." or the contradiction. Never throws.
Admission admitBinding(const onnx::ModelProto& model, const std::vector<onnxio::NamedBinding>& candidates,
                       const std::vector<onnxio::ValueSpec>& inSpecs, const std::vector<onnxio::ValueSpec>& outSpecs,
                       const InputMaker& makeInputs);

} // namespace dynqual::cases
