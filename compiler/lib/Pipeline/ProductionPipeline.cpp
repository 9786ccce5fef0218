//===- ProductionPipeline.cpp - the named production pipeline -------------===//
#include "dq/Pipeline/ProductionPipeline.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace {

bool has(const std::vector<dq::InjectKnob> &knobs, dq::InjectKnob k) {
  return std::find(knobs.begin(), knobs.end(), k) != knobs.end();
}

/// The body of the production pipeline (inside builtin.module) with `knobs` injected (each pass
/// carries at most one: checked by checkKnobCombination).
// Function boundaries use identity layouts so every graph input and output is a contiguous
// row-major buffer (the runtime's ABI); inside a function, views keep fully dynamic layouts and a
// returned view that is not contiguous is copied into an identity buffer by bufferization.
// views=false adds `views=false` to dq-convert-onnx: every Slice and Transpose is a kernel.
std::string productionBody(const std::vector<dq::InjectKnob> &knobs, bool views = true) {
  using dq::InjectKnob;
  auto opt = [&](std::initializer_list<InjectKnob> owned) -> std::string {
    for (InjectKnob k : owned)
      if (has(knobs, k)) return "{inject=" + std::string(dq::injectKnobName(k)) + "}";
    return "";
  };
  std::string convert = "dq-convert-onnx" + opt({InjectKnob::ReshapeByTypeEquality, InjectKnob::SliceUpperBound,
                                                 InjectKnob::SplitDimSizeAlias, InjectKnob::ReadbackWithoutSync,
                                                 InjectKnob::GqaIgnoresSeqlens, InjectKnob::NBitsZeroPointPitch,
                                                 InjectKnob::RotaryLayoutSwap});
  if (!views)
    convert =
        convert.back() == '}' ? convert.substr(0, convert.size() - 1) + " views=false}" : convert + "{views=false}";
  std::string output =
      "dq-use-output-allocator" + opt({InjectKnob::OutputRankCollapse, InjectKnob::EraseAllocBeforeViewAnalysis});
  std::string materialize = "dq-materialize-host-scalars";
  std::string optimize = "dq-optimize-memrefs" + opt({InjectKnob::HostScalarsAfterReuse});
  std::string promote = "dq-promote-strided-operands" + opt({InjectKnob::StridedViewBasePointer});
  std::string pool = "dq-pool-allocs";
  std::string copies = "dq-lower-copies" + opt({InjectKnob::SingletonCopyHostPath});
  std::vector<std::string> memrefPasses = {output, materialize, optimize, promote, pool, copies};
  if (has(knobs, InjectKnob::HostScalarsAfterReuse)) // reuse first: host-written buffers get merged
    memrefPasses = {output, optimize, materialize, promote, pool, copies};
  if (has(knobs, InjectKnob::PromoteBeforeReuse)) // temporaries become candidates for reuse
    memrefPasses = {output, materialize, promote, optimize, pool, copies};
  // Fusion on tensors, once canonicalize and cse have merged equal values (one use = one
  // consumer), before bufferization gives the intermediates buffers.
  std::string body = convert + ", canonicalize, cse, dq-fuse-elementwise, "
                               "one-shot-bufferize{bufferize-function-boundaries=true "
                               "function-boundary-type-conversion=identity-layout-map}, "
                               "func.func(";
  for (size_t i = 0; i < memrefPasses.size(); ++i)
    body += (i ? ", " : "") + memrefPasses[i];
  return body + ")";
}

/// `dq-production{inject=KNOB}`.
struct ProductionOptions : public mlir::PassPipelineOptions<ProductionOptions> {
  Option<std::string> inject{*this, "inject",
                             llvm::cl::desc("restore known-unsound behaviours, KNOB[,KNOB] "
                                            "(docs/fuzz/knobs.md); empty: production"),
                             llvm::cl::init("")};
  Option<bool> views{*this, "views",
                     llvm::cl::desc("lower Slice and Transpose to views (dq-convert-onnx views); "
                                    "false: kernels writing contiguous buffers"),
                     llvm::cl::init(true)};
};

} // namespace

std::string dq::injectKnobList() {
  std::string list;
  for (const auto &[k, name] : kInjectKnobs)
    list += (list.empty() ? "" : ", ") + std::string(name);
  return list;
}

const char *dq::productionPipelineSpec() {
  static const std::string spec = productionPipelineSpec(std::nullopt);
  return spec.c_str();
}

std::string dq::productionPipelineSpec(std::optional<InjectKnob> knob) {
  return productionPipelineSpec(knob ? std::vector<InjectKnob>{*knob} : std::vector<InjectKnob>{});
}

std::string dq::productionPipelineSpec(const std::vector<InjectKnob> &knobs) {
  return "builtin.module(" + productionBody(knobs) + ")";
}

bool dq::parseInjectKnobList(const std::string &list, std::vector<InjectKnob> &knobs, std::string &error) {
  std::string bad;
  if (!parseInjectKnobs(list, knobs, bad)) {
    error = "unknown inject knob '" + bad + "' (knobs: " + injectKnobList() + ")";
    return false;
  }
  error = checkKnobCombination(knobs);
  return error.empty();
}

std::string dq::productionPipelineSpec(const ProductionOptions &options) {
  return "builtin.module(" + productionBody(options.knobs, options.views) + ")";
}

bool dq::resolveProductionName(const std::string &text, std::string &spec, std::string &error) {
  for (const char *prefix : {"production", "dq-production"})
    if (text.rfind(prefix, 0) == 0 && (text.size() == std::strlen(prefix) || text[std::strlen(prefix)] == '{')) {
      std::string rest = text.substr(std::strlen(prefix));
      if (rest.empty()) {
        spec = productionPipelineSpec();
        return true;
      }
      ProductionOptions options;
      std::string why;
      if (rest.back() != '}') {
        why = "production options end with '}'";
      } else if (parseProductionOptions(rest.substr(1, rest.size() - 2), options, why)) {
        spec = productionPipelineSpec(options);
        return true;
      }
      error = "pipeline '" + text + "': " + why;
      spec.clear();
      return true;
    }
  return false;
}

void mlir::dq::registerProductionPipeline() {
  PassPipelineRegistration<ProductionOptions>("dq-production",
                                              "the dq production pipeline (docs/pipeline.md); inject=KNOB restores a "
                                              "known-unsound behaviour (docs/fuzz/knobs.md)",
                                              [](OpPassManager &pm, const ProductionOptions &options) {
                                                std::vector<::dq::InjectKnob> knobs;
                                                std::string why;
                                                const std::string &value = options.inject.getValue();
                                                // The builder cannot fail, so a bad knob list is handed to
                                                // dq-convert-onnx, whose option check rejects it with the list of knobs
                                                // when the pipeline runs.
                                                std::string body;
                                                if (value.empty() || ::dq::parseInjectKnobList(value, knobs, why)) {
                                                  body = productionBody(knobs, options.views);
                                                } else {
                                                  llvm::errs() << "dq-production: " << why << "\n";
                                                  body = "dq-convert-onnx{inject=" + value + "}";
                                                }
                                                if (failed(parsePassPipeline(body, pm, llvm::errs())))
                                                  llvm::errs() << "dq-production: cannot build the pipeline\n";
                                              });
}
