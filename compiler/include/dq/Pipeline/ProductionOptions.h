//===- ProductionOptions.h - options of the named production pipeline -----===//
//
// MLIR-free, so that the harness can check a variant's options without the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef DQ_PIPELINE_PRODUCTIONOPTIONS_H
#define DQ_PIPELINE_PRODUCTIONOPTIONS_H

#include "dq/Pipeline/InjectKnobList.h"

#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace dq {

/// The options of `production{...}` (docs/pipeline.md).
struct ProductionOptions {
  /// Known-unsound behaviours to restore (docs/fuzz/knobs.md), at most one per pass; empty: none.
  std::vector<InjectKnob> knobs;
  /// Slice and Transpose lower to views (dq-convert-onnx's `views`); false: kernels only.
  bool views = true;
};

/// Parses the text between the braces of `production{...}`: space-separated `inject=KNOB[,KNOB]` and
/// `views=true|false`, each at most once, in any order. Returns false with a one-line `error`
/// naming the bad option and listing the valid ones (and the knobs) on anything else.
inline bool parseProductionOptions(const std::string &body, ProductionOptions &out, std::string &error) {
  out = ProductionOptions{};
  std::string knobs;
  for (const auto &[k, name] : kInjectKnobs)
    knobs += (knobs.empty() ? "" : ", ") + std::string(name);
  const std::string usage = "production takes {inject=KNOB[,KNOB] views=true|false} (knobs: " + knobs + ")";
  std::istringstream words(body);
  std::string word;
  bool sawInject = false, sawViews = false;
  while (words >> word) {
    size_t eq = word.find('=');
    std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (key == "inject" && eq != std::string::npos && !sawInject) {
      sawInject = true;
      if (value.empty()) continue;
      std::string bad;
      if (!parseInjectKnobs(value, out.knobs, bad)) {
        error = "unknown inject knob '" + bad + "' (knobs: " + knobs + ")";
        return false;
      }
      if (std::string why = checkKnobCombination(out.knobs); !why.empty()) {
        error = why;
        return false;
      }
    } else if (key == "views" && (value == "true" || value == "false") && !sawViews) {
      sawViews = true;
      out.views = value == "true";
    } else {
      error = "bad option '" + word + "': " + usage;
      return false;
    }
  }
  return true;
}

} // namespace dq

#endif // DQ_PIPELINE_PRODUCTIONOPTIONS_H
