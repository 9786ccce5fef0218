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
#include "dq/Transforms/InjectOption.h"
#include "dq/Transforms/Passes.h"
#include "dq/Transforms/TransformUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::dq {
#define GEN_PASS_DEF_PROMOTESTRIDEDOPERANDS
#include "dq/Transforms/Passes.h.inc"
} // namespace mlir::dq

using namespace mlir;

namespace {

struct PromoteStridedOperandsPass : public mlir::dq::impl::PromoteStridedOperandsBase<PromoteStridedOperandsPass> {
  using PromoteStridedOperandsBase::PromoteStridedOperandsBase;
  void runOnOperation() override {
    FailureOr<std::optional<::dq::InjectKnob>> knob = mlir::dq::parseInjectOption(
        getOperation(), "dq-promote-strided-operands", inject, {::dq::InjectKnob::StridedViewBasePointer});
    if (failed(knob)) return signalPassFailure();
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<mlir::dq::TransposeOp, mlir::dq::GatherOp, mlir::dq::ConcatOp>(op) && op->getNumResults() == 0)
        ops.push_back(op);
    });
    OpBuilder b(&getContext());
    for (Operation *op : ops) {
      auto dps = cast<DestinationStyleOpInterface>(op);
      for (OpOperand &operand : op->getOpOperands()) {
        auto type = dyn_cast<MemRefType>(operand.get().getType());
        if (!type || mlir::dq::isProvablyContiguous(type)) continue;
        Location loc = op->getLoc();
        Value original = operand.get();
        b.setInsertionPoint(op);
        SmallVector<Value> dynSizes;
        for (int64_t i = 0; i < type.getRank(); ++i)
          if (type.isDynamicDim(i)) dynSizes.push_back(memref::DimOp::create(b, loc, original, i));
        if (knob->has_value()) {
          operand.set(basePointerView(b, loc, original, type, dynSizes));
          continue;
        }
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

  /// Known-unsound (strided-view-base-pointer): the view's base allocation read as if it were a
  /// contiguous row-major buffer of the view's sizes, at offset 0, ignoring its offset and
  /// strides.
  static Value basePointerView(OpBuilder &b, Location loc, Value original, MemRefType type, ArrayRef<Value> dynSizes) {
    SmallVector<OpFoldResult> sizes, strides(type.getRank());
    for (int64_t i = 0, dyn = 0; i < type.getRank(); ++i)
      sizes.push_back(type.isDynamicDim(i) ? OpFoldResult(dynSizes[dyn++])
                                           : OpFoldResult(b.getIndexAttr(type.getDimSize(i))));
    Value running = arith::ConstantIndexOp::create(b, loc, 1);
    for (int64_t i = type.getRank() - 1; i >= 0; --i) {
      strides[i] = running;
      Value size = type.isDynamicDim(i) ? cast<Value>(sizes[i])
                                        : arith::ConstantIndexOp::create(b, loc, type.getDimSize(i)).getResult();
      running = arith::MulIOp::create(b, loc, running, size);
    }
    SmallVector<int64_t> dynStrides(type.getRank(), ShapedType::kDynamic);
    auto resultType = MemRefType::get(type.getShape(), type.getElementType(),
                                      StridedLayoutAttr::get(b.getContext(), /*offset=*/0, dynStrides));
    return memref::ReinterpretCastOp::create(b, loc, resultType, original, b.getIndexAttr(0), sizes, strides);
  }
};

} // namespace
