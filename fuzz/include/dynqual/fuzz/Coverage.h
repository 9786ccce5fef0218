#pragma once
// Feature coverage of the fuzzer: which forms a valid case exercised (views, strided copy kinds,
// broadcast of a runtime-1 dim, n-ary Concat, rank-0 values, negative steps, shape-derived
// outputs), counted per campaign as "how many valid cases"
// (docs/fuzz/campaigns.md#feature-coverage).
#include "dynqual/fuzz/Oracle.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace dynqual::fuzz {

/// One row of the coverage table: an op (or "copy", "output", "input") and a feature of it.
/// Keys are "OP|feature", e.g. "Slice|view: subview (positive constant steps)".
using FeatureKey = std::string;

/// The features every campaign table lists, present or not (so a 0 shows as a gap), in order.
const std::vector<FeatureKey>& trackedFeatures();

/// Features the valid case `pc` exercised. From the graph: Slice steps (positive constant:
/// a subview under dq-convert-onnx's views rule; negative: reversed), Transpose whose every
/// consumer reads strided operands (a transpose view by the same rule), Unsqueeze / Squeeze /
/// Reshape of a view, a view chain (Slice and at least two of Transpose / Unsqueeze / Squeeze /
/// Reshape) into Concat, Gather or Transpose. From the reference's value of every node on every
/// binding (one extra evaluation per binding, within `limits`): a binary op or Expand where an
/// input's dim that ONNX shape inference leaves dynamic is 1 while the output's is larger; a
/// Concat of three or more float inputs along an axis whose input extents differ; rank-0
/// values; graph outputs computed from Shape alone. From `counters` (the first dq variant's
/// device counters summed over bindings): each copy kind that ran (memcpy, copy2d, strided).
/// Plus "OP|present" for every op kind of the graph. Never throws: a step that fails (the extra
/// evaluation past its limits) leaves its features out.
std::set<FeatureKey> caseFeatures(const PreparedCase& pc, const std::map<std::string, uint64_t>& counters,
                                  const reference::EvaluateLimits& limits = defaultReferenceLimits());

/// One table row: cases that exercised the feature and their share of `valid` (percent).
struct CoverageRow {
  std::string op, feature;
  int64_t cases = 0;
  double percent = 0; ///< 100 * cases / valid, 0 when valid is 0
};

/// The table of `counts` (valid cases per feature key) over `valid` cases: the tracked features
/// first (0 where absent), then every other key, each "OP|feature" split at its first '|'.
std::vector<CoverageRow> coverageTable(const std::map<std::string, int64_t>& counts, int64_t valid);

/// The table as Markdown ("| op | feature | valid cases | % of valid |").
std::string coverageMarkdown(const std::vector<CoverageRow>& rows);

} // namespace dynqual::fuzz
