//===- ProductionPipeline.h - the named production pipeline -----*- C++ -*-===//
#ifndef DQ_PIPELINE_PRODUCTIONPIPELINE_H
#define DQ_PIPELINE_PRODUCTIONPIPELINE_H

#include "dq/Pipeline/InjectKnobList.h"
#include "dq/Pipeline/ProductionOptions.h"

#include <optional>
#include <string>
#include <vector>

namespace dq {
/// The production pipeline as a textual spec in MLIR pass-pipeline syntax, anchored on
/// builtin.module. docs/pipeline.md explains each element.
const char *productionPipelineSpec();

/// The production pipeline with `knob` injected (docs/fuzz/knobs.md): the pass that owns the
/// knob gets `inject=<name>`, and the order knobs (host-scalars-after-reuse,
/// promote-before-reuse) move their pass. Without a knob this is productionPipelineSpec().
std::string productionPipelineSpec(std::optional<InjectKnob> knob);

/// The production pipeline with several knobs injected at once ("inject=A,B"): each owning pass
/// gets its knob. The combination must pass checkKnobCombination.
std::string productionPipelineSpec(const std::vector<InjectKnob> &knobs);

/// Parses "A" or "A,B,..." into knobs (duplicates dropped). On an unknown name or an unsupported
/// combination returns false with `error` set to one line naming the knob and listing the knobs.
bool parseInjectKnobList(const std::string &list, std::vector<InjectKnob> &knobs, std::string &error);

/// The production pipeline with `options`: its knobs as above; views=false adds `views=false`
/// to dq-convert-onnx (every Slice and Transpose a kernel, the behaviour before views).
std::string productionPipelineSpec(const ProductionOptions &options);

/// Resolves the `production` pipeline name with its options: "production" or
/// "production{inject=KNOB[,KNOB...] views=false}" (either option alone; also spelled "dq-production{...}"). Returns
/// false when `text` is not a production name at all; throws nothing. On an unknown option or knob, `error` gets one
/// line listing the valid knobs and the result is true with `spec` empty.
bool resolveProductionName(const std::string &text, std::string &spec, std::string &error);

/// "a, b, c": every knob spelling, for error messages.
std::string injectKnobList();
} // namespace dq

namespace mlir::dq {
/// Registers `dq-production` (the spec above) as a named pass pipeline with the option
/// `inject=KNOB` (and `views=false`), so `dynqual-opt --dq-production` runs exactly what the compiler runs and
/// `--pass-pipeline='builtin.module(dq-production{inject=KNOB})'` runs a knob.
void registerProductionPipeline();
} // namespace mlir::dq

#endif // DQ_PIPELINE_PRODUCTIONPIPELINE_H
