//===- Registration.h - dialect, pass and pipeline registration -*- C++ -*-===//
#ifndef DQ_PIPELINE_REGISTRATION_H
#define DQ_PIPELINE_REGISTRATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::dq {
/// Adds every dialect (and external bufferization model) the dq pipeline uses.
void registerAllDQDialects(DialectRegistry &registry);
/// Registers every dq pass and the named pipelines ("dq-production") with the global registry.
void registerAllDQPassesAndPipelines();
} // namespace mlir::dq

#endif // DQ_PIPELINE_REGISTRATION_H
