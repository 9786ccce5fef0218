#pragma once
// Renders the results of `dynqual run` as a text table or a JSON document.
#include "dynqual/run/ModelRun.h"

#include <nlohmann/json.hpp>

#include <ostream>
#include <vector>

namespace dynqual::run {

/// Totals over models: passed, failed, skipped per reason.
struct RunTotals {
  int passed = 0, failed = 0, skipped = 0;
  std::map<std::string, int> skippedByReason;
  int tried() const { return passed + failed; }
};

RunTotals totals(const std::vector<ModelResult>& results);

/// Table with one row per (model, data set or binding, output): shape, L2, rel-L2, max-abs,
/// NaN/Inf skipped and verdict, followed by failures and the totals line. Skipped models are
/// listed only when `listSkipped` is set (a node-test sweep skips hundreds).
void renderText(std::ostream& os, const std::vector<ModelResult>& results, bool listSkipped);

/// One JSON document: every model, case, output comparison and device counter.
nlohmann::json renderJson(const std::vector<ModelResult>& results);

} // namespace dynqual::run
