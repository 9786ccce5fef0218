//===- ProductionPipeline.h - the named production pipeline -----*- C++ -*-===//
#ifndef DQ_PIPELINE_PRODUCTIONPIPELINE_H
#define DQ_PIPELINE_PRODUCTIONPIPELINE_H

namespace dq {
/// The production pipeline as a textual spec in MLIR pass-pipeline syntax, anchored on
/// builtin.module. docs/pipeline.md explains each element.
const char *productionPipelineSpec();
} // namespace dq

namespace mlir::dq {
/// Registers `dq-production` (the spec above) as a named pass pipeline, so
/// `dynqual-opt --dq-production` runs exactly what the compiler runs.
void registerProductionPipeline();
} // namespace mlir::dq

#endif // DQ_PIPELINE_PRODUCTIONPIPELINE_H
