#pragma once
// The shape-graph generator: random DAGs of data-movement and shape ops with dynamic dims,
// built through libonnx, valid for every binding of their dim symbols (>= 1). Knob-agnostic: it
// has one default configuration and nothing in it knows about the compiler's inject knobs.
// docs/fuzz/generator.md describes the op menu and the validity argument.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dynqual::fuzz {

/// Version of the generator. A case is regenerated from (kGeneratorVersion, seed); any change to
/// what a seed produces must bump it.
inline constexpr const char* kGeneratorVersion = "shapegen-7";

/// Most elements a generated value may have on a binding whose symbols are at most
/// kSymbolBound (SymbolicDim.h): Tile, Expand and Concat are not emitted past it, so that
/// chains of them stay far below the reference's limit (kReferenceElementLimit, Oracle.h).
inline constexpr int64_t kMaxValueElements = int64_t{1} << 20;

/// Knobs of the generator (not of the compiler).
struct GeneratorOptions {
  int minSteps = 4; ///< data ops tried per graph, drawn uniformly in [minSteps, maxSteps]
  int maxSteps = 10;
  int maxNodes = 40;  ///< stop adding steps once the graph has this many nodes
  int maxSymbols = 3; ///< dim symbols N0.. (dim_params), each bound to >= 1 by every binding
  int maxOutputs = 3;
};

/// A generated case.
struct GeneratedCase {
  uint64_t seed = 0;
  onnx::ModelProto model;              ///< opset 17, float data, int64 shape values, DCE'd
  int nodes = 0;                       ///< node count
  std::map<std::string, int> opCounts; ///< node count per op type
};

/// Generates the case of `seed`. Same (kGeneratorVersion, options, seed), same bytes. Never
/// throws for any seed (an internal inconsistency is a bug: std::logic_error naming the step).
GeneratedCase generate(uint64_t seed, const GeneratorOptions& options = {});

/// Node count per op type of `model`.
std::map<std::string, int> countOps(const onnx::ModelProto& model);

/// Removes nodes none of whose outputs reaches a graph output, and initializers and inputs no
/// node uses (a graph input that is also an output stays). Keeps node order.
void removeDeadNodes(onnx::ModelProto& model);

/// The seed of case `index` of a campaign seeded `campaignSeed` (SplitMix64 of both), so cases
/// of different shards (different indices) never share a seed in practice and a case is
/// reproducible from its index alone.
uint64_t caseSeed(uint64_t campaignSeed, uint64_t index);

} // namespace dynqual::fuzz
