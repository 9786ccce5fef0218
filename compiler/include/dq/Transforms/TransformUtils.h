//===- TransformUtils.h - helpers shared by the memref passes ---*- C++ -*-===//
#ifndef DQ_TRANSFORMS_TRANSFORMUTILS_H
#define DQ_TRANSFORMS_TRANSFORMUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dominance.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

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

/// True for the ops that make a view of their operand 0 without copying (memref.cast,
/// expand_shape, collapse_shape, subview, reinterpret_cast, view): the result aliases the source.
bool isAliasingView(Operation *op);

/// How the uses of one buffer end inside the block that defines it.
struct BufferLiveness {
  /// Position (index in the block) of the last op that uses the buffer or any view derived from
  /// it; uses nested in regions count at their ancestor op in the block. Without uses: the
  /// position of the defining op.
  unsigned lastUse = 0;
  /// The buffer may be reached after `lastUse` or outside the function: returned, passed to a
  /// call, yielded or passed to another terminator, stored into memory, or turned by an op that
  /// is not an aliasing view into another memref value the walk cannot follow.
  bool escapes = false;
  /// The host writes it element by element (memref.store into the buffer or a view of it).
  bool hostWritten = false;
  /// Some memref.dealloc already ends its lifetime explicitly.
  bool deallocated = false;
};

/// Walks the uses of `buffer` (defined by an op of `block`) and of every aliasing view derived
/// from it. `position` maps each op of `block` to its index. Sound for lifetime-based reuse: when
/// `escapes` is false, no op after `lastUse` in the block touches the buffer's memory.
BufferLiveness analyzeBufferLiveness(Value buffer, Block &block, const llvm::DenseMap<Operation *, unsigned> &position);

/// The earliest op of `start`'s block, at or after `start`, before which every value of `values`
/// is defined: each value defined in that block by `start` or a later op moves the point past its
/// definition, whatever order the values come in. Returns nullptr when some value is defined
/// nowhere before the block's terminator, or does not properly dominate the point (a value of a
/// nested or sibling region). An op inserted before the returned op may use every value.
Operation *insertionPointAfterDefinitions(ArrayRef<Value> values, Operation *start, DominanceInfo &dom);

} // namespace mlir::dq

#endif // DQ_TRANSFORMS_TRANSFORMUTILS_H
