//===- PoolAllocs.cpp - transient allocations into the device pool --------===//
//
// Every transient memref.alloc of the entry block (identity layout, not returned or passed to a
// call) becomes a memref.view into one dq.get_pool buffer. Regions are laid out one after the
// other in allocation order, each starting at a 256-byte aligned offset; offsets and the pool
// size are index arithmetic, so dynamic sizes are fine. The pool request is placed after the
// last definition of any packed allocation's sizes, and an allocation is only packed when that
// point still precedes all of its uses (otherwise it stays a memref.alloc).
//
//===----------------------------------------------------------------------===//
#include "dq/Dialect/DQDialect.h"
#include "dq/Transforms/Passes.h"
#include "dq/Transforms/TransformUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::dq {
#define GEN_PASS_DEF_POOLALLOCS
#include "dq/Transforms/Passes.h.inc"
} // namespace mlir::dq

using namespace mlir;

namespace {

constexpr int64_t kRegionAlignment = 256; // bytes; the widest vector access of the device

struct PoolAllocsPass : public dq::impl::PoolAllocsBase<PoolAllocsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &block = func.getBody().front();
    llvm::DenseMap<Operation *, unsigned> position;
    SmallVector<Operation *> order;
    for (Operation &op : block) {
      position[&op] = order.size();
      order.push_back(&op);
    }

    SmallVector<memref::AllocOp> packed;
    unsigned point = 0; // insert the pool before order[point]
    unsigned earliestUse = ~0u;
    for (Operation *op : order) {
      auto alloc = dyn_cast<memref::AllocOp>(op);
      if (!alloc || !isTransient(alloc) ||
          dq::elementByteSize(alloc.getType().getElementType()) == 0)
        continue;
      unsigned required = packed.empty() ? position[alloc] : point;
      for (Value size : alloc.getDynamicSizes())
        if (Operation *def = size.getDefiningOp(); def && def->getBlock() == &block)
          required = std::max(required, position[def] + 1);
      unsigned firstUse = ~0u;
      for (Operation *user : alloc->getUsers())
        firstUse = std::min(firstUse, position[block.findAncestorOpInBlock(*user)]);
      if (required > std::min(earliestUse, firstUse))
        continue;
      point = required;
      earliestUse = std::min(earliestUse, firstUse);
      packed.push_back(alloc);
    }
    if (packed.empty())
      return;

    OpBuilder b(func.getContext());
    Value ctx = dq::getOrCreateContext(func, b);
    b.setInsertionPoint(order[point]);
    Location loc = packed.front().getLoc();
    // Static parts are folded here so the IR only holds the arithmetic that is really dynamic.
    llvm::DenseMap<int64_t, Value> constants;
    auto constant = [&](int64_t v) {
      Value &c = constants[v];
      if (!c)
        c = arith::ConstantIndexOp::create(b, loc, v);
      return c;
    };
    auto value = [&](OpFoldResult f) {
      return isa<Value>(f) ? cast<Value>(f) : constant(cast<IntegerAttr>(cast<Attribute>(f)).getInt());
    };
    OpFoldResult offset = b.getIndexAttr(0);
    SmallVector<Value> offsets;
    for (memref::AllocOp alloc : packed) {
      offsets.push_back(value(offset));
      MemRefType type = alloc.getType();
      int64_t staticBytes = dq::elementByteSize(type.getElementType());
      for (int64_t d : type.getShape())
        if (!ShapedType::isDynamic(d))
          staticBytes *= d;
      std::optional<int64_t> staticOffset = getConstantIntValue(offset);
      if (staticOffset && alloc.getDynamicSizes().empty()) {
        int64_t end = *staticOffset + staticBytes;
        offset = b.getIndexAttr((end + kRegionAlignment - 1) / kRegionAlignment * kRegionAlignment);
        continue;
      }
      Value bytes = constant(staticBytes);
      for (Value size : alloc.getDynamicSizes())
        bytes = arith::MulIOp::create(b, loc, size, bytes);
      Value end = staticOffset == 0 ? bytes : arith::AddIOp::create(b, loc, bytes, value(offset)).getResult();
      Value units = arith::CeilDivSIOp::create(b, loc, end, constant(kRegionAlignment));
      offset = arith::MulIOp::create(b, loc, units, constant(kRegionAlignment)).getResult();
    }
    Value totalBytes = value(offset);
    auto pool = dq::GetPoolOp::create(
        b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type()), ctx, totalBytes);
    // The insertion point may be one of the allocations: erase only after all views exist.
    SmallVector<Value> views;
    for (auto [alloc, off] : llvm::zip(packed, offsets))
      views.push_back(memref::ViewOp::create(b, alloc.getLoc(), alloc.getType(), pool, off,
                                             alloc.getDynamicSizes()));
    for (auto [alloc, view] : llvm::zip(packed, views)) {
      alloc.getResult().replaceAllUsesWith(view);
      alloc.erase();
    }
  }

  /// Not returned, not passed to a call, identity layout, every user in this function.
  static bool isTransient(memref::AllocOp alloc) {
    if (!alloc.getType().getLayout().isIdentity())
      return false;
    SmallVector<Value> worklist{alloc.getResult()};
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      for (Operation *user : v.getUsers()) {
        if (isa<func::ReturnOp, func::CallOp>(user))
          return false;
        if (isa<memref::CastOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
                memref::SubViewOp, memref::ReinterpretCastOp>(user))
          for (Value r : user->getResults())
            worklist.push_back(r);
      }
    }
    return true;
  }
};

} // namespace
