//===- TransformUtils.h - helpers shared by the memref passes ---*- C++ -*-===//
#ifndef DQ_TRANSFORMS_TRANSFORMUTILS_H
#define DQ_TRANSFORMS_TRANSFORMUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::dq {

/// Returns the function's `dq.get_context` value, creating one at the top of the entry block
/// when there is none.
Value getOrCreateContext(func::FuncOp func, OpBuilder &builder);

/// True when the layout of `type` provably addresses its elements row-major and without gaps
/// (offset ignored). A dim whose static size is 1 never contributes a stride, so a dynamic stride
/// on such a dim does not break contiguity: the effective stride comes from the inner layout.
bool isProvablyContiguous(MemRefType type);

/// Bytes per element as the runtime stores it (i1 and index: 1 and 8). Returns 0 for element
/// types the runtime does not support.
int64_t elementByteSize(Type elementType);

/// Walks memref.cast / expand_shape / collapse_shape back to the producing value. Views that
/// cover only part of their source (subview, view, reinterpret_cast) stop the walk.
Value stripWholeBufferViews(Value value);

} // namespace mlir::dq

#endif // DQ_TRANSFORMS_TRANSFORMUTILS_H
