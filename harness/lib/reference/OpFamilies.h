#pragma once
// Registration entry points of the op families; OpRegistry::builtin() calls each once.

#include "dynqual/reference/OpRegistry.h"

namespace dynqual::reference {

void registerShapeOps(
    OpRegistry& registry); // Reshape, Expand, Unsqueeze, Squeeze, Flatten, Shape, Size, Identity, Dropout
void registerIndexingOps(
    OpRegistry& registry); // Slice, Concat, Transpose, Gather, GatherElements, Trilu, Split, GatherND
void registerConstantOps(OpRegistry& registry); // Constant, ConstantOfShape, Range
void registerCastOps(OpRegistry& registry);     // Cast, CastLike
void registerElementwiseOps(
    OpRegistry& registry); // arithmetic, Mod, Sum/Mean, Max/Min, comparison, logic, Where, unary math
void registerActivationOps(OpRegistry& registry); // Relu, LeakyRelu, Abs, Log, Floor, Ceil, Round, Sign, Clip
void registerSelectionOps(OpRegistry& registry);  // ArgMax, ArgMin, OneHot
void registerMatMulOps(OpRegistry& registry);     // MatMul, Gemm
void registerReductionOps(OpRegistry& registry);  // ReduceMean/Sum/Max/Min/Prod/L2/SumSquare/LogSumExp, (Log)Softmax,
                                                  // LayerNormalization, CumSum
void registerDataDependentOps(OpRegistry& registry); // NonZero, Compress, TopK, Tile, Pad
void registerScatterOps(OpRegistry& registry);       // ScatterND, ScatterElements, Scatter
void registerContribOps(OpRegistry& registry);       // onnxruntime contrib ops, keyed "com.microsoft.<Op>"

} // namespace dynqual::reference
