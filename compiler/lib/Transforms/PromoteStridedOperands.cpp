//===- PromoteStridedOperands.cpp - contiguous operands where required ----===//
//
// dq.transpose, dq.gather and dq.concat compute linear offsets from their operands' extents, so
// their device kernels take contiguous row-major operands only. An operand whose layout is not
// provably contiguous is replaced by a contiguous temporary: inputs are copied in before the op,
// outputs are copied back after it. The elementwise, expand, slice, range and fill kernels walk
// arbitrary strides and keep their operands. This runs after reuse so temporaries stay private.
//
//===----------------------------------------------------------------------===//
#include "dq/Dialect/DQDialect.h"
#include "dq/Transforms/Passes.h"
#include "dq/Transforms/TransformUtils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::dq {
#define GEN_PASS_DEF_PROMOTESTRIDEDOPERANDS
#include "dq/Transforms/Passes.h.inc"
} // namespace mlir::dq

using namespace mlir;

namespace {

struct PromoteStridedOperandsPass
    : public dq::impl::PromoteStridedOperandsBase<PromoteStridedOperandsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<dq::TransposeOp, dq::GatherOp, dq::ConcatOp>(op) && op->getNumResults() == 0)
        ops.push_back(op);
    });
    OpBuilder b(&getContext());
    for (Operation *op : ops) {
      auto dps = cast<DestinationStyleOpInterface>(op);
      for (OpOperand &operand : op->getOpOperands()) {
        auto type = dyn_cast<MemRefType>(operand.get().getType());
        if (!type || dq::isProvablyContiguous(type))
          continue;
        Location loc = op->getLoc();
        Value original = operand.get();
        b.setInsertionPoint(op);
        SmallVector<Value> dynSizes;
        for (int64_t i = 0; i < type.getRank(); ++i)
          if (type.isDynamicDim(i))
            dynSizes.push_back(memref::DimOp::create(b, loc, original, i));
        auto tempType = MemRefType::get(type.getShape(), type.getElementType());
        Value temp = memref::AllocOp::create(b, loc, tempType, dynSizes);
        if (dps.isDpsInit(&operand)) {
          b.setInsertionPointAfter(op);
          memref::CopyOp::create(b, loc, temp, original);
        } else {
          memref::CopyOp::create(b, loc, original, temp);
        }
        operand.set(temp);
      }
    }
  }
};

} // namespace
