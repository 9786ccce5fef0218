#pragma once
// Registration entry points of the op families; OpRegistry::builtin() calls each once.

#include "dynqual/reference/OpRegistry.h"

namespace dynqual::reference {

void registerShapeOps(OpRegistry& registry);       // Reshape, Expand, Unsqueeze, Squeeze, Flatten, Shape, Identity
void registerIndexingOps(OpRegistry& registry);    // Slice, Concat, Transpose, Gather, GatherElements, Trilu
void registerConstantOps(OpRegistry& registry);    // Constant, ConstantOfShape, Range
void registerCastOps(OpRegistry& registry);        // Cast
void registerElementwiseOps(OpRegistry& registry); // arithmetic, comparison, logic, Where, unary math
void registerMatMulOps(OpRegistry& registry);      // MatMul
void registerReductionOps(OpRegistry& registry);   // ReduceMean, Softmax, LayerNormalization

} // namespace dynqual::reference
