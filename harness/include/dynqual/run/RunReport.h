#pragma once
// Renders the results of `dynqual run` as a text table or a JSON document.
#include "dynqual/run/ModelRun.h"

#include <nlohmann/json.hpp>

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace dynqual::run {

/// Totals over models: passed, failed, skipped per reason.
struct RunTotals {
  int passed = 0, failed = 0, skipped = 0;
  std::map<std::string, int> skippedByReason;
  /// Models skipped as op_outside_supported_set that use each missing op (a model missing two ops
  /// counts once for each).
  std::map<std::string, int> modelsMissingOp;
  /// Generated shape bindings skipped as not admitted by the model (over all models).
  int bindingsNotAdmitted = 0;
  int tried() const { return passed + failed; }
  /// Adds one model by its status ("pass", "FAIL", "skip"), skip reason name, missing ops and
  /// number of bindings it did not admit.
  void add(const std::string& status, const std::string& skipReason, const std::vector<std::string>& missingOps,
           int notAdmitted);
};

/// Generated bindings of one model skipped as not admitted (a stored data set is never skipped).
int bindingsNotAdmitted(const ModelResult& result);

RunTotals totals(const std::vector<ModelResult>& results);

/// The skip part of the totals line: "" without skips, else " (reason=count, ...)" with the
/// reasons in name order, where op_outside_supported_set is followed by the missing ops by
/// model count, most first, ties by name: "op_outside_supported_set=13 (Conv 5, MaxPool 3, ...)".
/// At most `maxOps` ops are named; the rest are summed as "N more ops". Then, when any binding was
/// not admitted, "; K bindings not admitted by the model".
std::string skipSummary(const RunTotals& totals, std::size_t maxOps = 12);

/// Table with one row per (model, data set or binding, output): shape, L2, rel-L2, max-abs,
/// NaN/Inf skipped and verdict, followed by failures and the totals line. Skipped models are
/// listed only when `listSkipped` is set (a node-test sweep skips hundreds).
void renderText(std::ostream& os, const std::vector<ModelResult>& results, bool listSkipped);

/// One JSON document: every model, case, output comparison and device counter.
nlohmann::json renderJson(const std::vector<ModelResult>& results);

} // namespace dynqual::run
