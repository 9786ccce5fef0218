#pragma once
// Extra runtime shape bindings for dynamic models: shapes the stored test data does not cover.
#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/InputGenerator.h"

#include <string>
#include <vector>

namespace dynqual::onnxio {

/// One binding of every dynamic dim, with a short kind ("ones", "zero", "asymmetric", "larger",
/// "random") and a rendering such as "b=1 n=1".
struct NamedBinding {
  std::string kind;
  std::string description;
  onnxio::DimBinding binding;
};

/// Builds `count` bindings for the dynamic dims of `specs`, in this order: every dim 1; one dim
/// 0 (the k-th dynamic dim for the k-th alternative, see zeroAlternatives); pairwise different
/// sizes (2, 3, 5, 7, ...); every dim 2*traced+1; then seeded random sizes in [1, 2*traced+3].
/// `traced` holds the concrete input shapes of the first stored data set (empty when there is
/// none; every dynamic dim then counts as traced size 3). Dims sharing a dim_param label get one
/// value. Returns an empty vector when no input has a dynamic dim. Never throws.
std::vector<NamedBinding> makeBindings(const std::vector<onnxio::ValueSpec>& specs,
                                       const std::vector<std::vector<int64_t>>& traced, int count, uint64_t seed);

/// The "zero" bindings to try in turn until one is legal for the model: one per dynamic dim
/// (label or unnamed position), that dim 0 and the others at their traced size.
std::vector<NamedBinding> zeroAlternatives(const std::vector<onnxio::ValueSpec>& specs,
                                           const std::vector<std::vector<int64_t>>& traced);

/// One binding per dynamic dim (label or unnamed position): that dim 1 and every other at
/// 2*traced+1 (the "larger" value), kind "solo-one", in dim order. Where two different dynamic
/// dims may broadcast against each other, this is the binding that makes one of them 1 alone.
/// Empty with fewer than two dynamic dims (the "ones" binding already covers one dim).
std::vector<NamedBinding> soloOneBindings(const std::vector<onnxio::ValueSpec>& specs,
                                          const std::vector<std::vector<int64_t>>& traced);

/// Admission of a generated binding by the model's own declared output types: "" when each
/// output in `computed` (the reference's output shapes for the binding) has its declared rank and
/// equals every static declared dim, else one line naming the first output and axis that
/// contradicts the declaration, e.g. "output 'y' is declared [1, ?, 2] but the reference computes
/// [1, 1, 1] (axis 2)". Dynamic dims (dim_param or unknown) admit any extent. Outputs beyond
/// `declared` are not checked. Never throws.
std::string declaredOutputContradiction(const std::vector<onnxio::ValueSpec>& declared,
                                        const std::vector<std::vector<int64_t>>& computed);

} // namespace dynqual::onnxio
