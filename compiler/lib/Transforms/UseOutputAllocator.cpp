//===- UseOutputAllocator.cpp - graph outputs via dq.alloc_output ---------===//
//
// A returned value that is a whole-buffer view chain (memref.cast, expand_shape,
// collapse_shape) of a memref.alloc is allocated by the caller instead: dq.alloc_output requests
// the returned type's dims (static dims from the type, dynamic ones reified through the chain,
// so a rank-expanding view supplies each of its independent runtime sizes), and the original
// buffer becomes a view of that allocation. The chain itself, ABI casts included, stays. Every
// output is analysed before any allocation is touched.
//
//===----------------------------------------------------------------------===//
#include "dq/Dialect/DQDialect.h"
#include "dq/Transforms/InjectOption.h"
#include "dq/Transforms/Passes.h"
#include "dq/Transforms/TransformUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"

namespace mlir::dq {
#define GEN_PASS_DEF_USEOUTPUTALLOCATOR
#include "dq/Transforms/Passes.h.inc"
} // namespace mlir::dq

using namespace mlir;

namespace {

/// One dim as a product of factors (constants and SSA values); not yet materialized so that
/// analysis never mutates the IR.
using DimProduct = SmallVector<OpFoldResult, 2>;

struct OutputPlan {
  unsigned index;
  memref::AllocOp alloc;
  MemRefType outType;
  SmallVector<DimProduct> dynamicDims; // one per dynamic dim of outType
  Operation *insertBefore;
};

/// Reifies dim `i` of `v` through the whole-buffer view chain down to the allocation.
static FailureOr<DimProduct> reifyDim(Value v, int64_t i) {
  auto type = cast<MemRefType>(v.getType());
  MLIRContext *ctx = v.getContext();
  if (!type.isDynamicDim(i)) return DimProduct{IntegerAttr::get(IndexType::get(ctx), type.getDimSize(i))};
  Operation *def = v.getDefiningOp();
  if (!def) return failure();
  if (auto c = dyn_cast<memref::CastOp>(def)) return reifyDim(c.getSource(), i);
  if (auto e = dyn_cast<memref::ExpandShapeOp>(def)) return DimProduct{e.getMixedOutputShape()[i]};
  if (auto c = dyn_cast<memref::CollapseShapeOp>(def)) {
    DimProduct product;
    // getReassociationIndices() returns by value; a range-for over `temporary[i]` would iterate
    // storage the temporary already freed (C++20 does not extend its lifetime), so name it.
    SmallVector<ReassociationIndices> groups = c.getReassociationIndices();
    for (int64_t j : groups[i]) {
      FailureOr<DimProduct> inner = reifyDim(c.getSrc(), j);
      if (failed(inner)) return failure();
      product.append(inner->begin(), inner->end());
    }
    return product;
  }
  if (auto a = dyn_cast<memref::AllocOp>(def)) return DimProduct{a.getDynamicSizes()[type.getDynamicDimIndex(i)]};
  return failure();
}

static Value materialize(OpBuilder &b, Location loc, const DimProduct &product) {
  Value result;
  int64_t constant = 1;
  for (OpFoldResult f : product) {
    if (auto attr = dyn_cast<Attribute>(f)) {
      constant *= cast<IntegerAttr>(attr).getInt();
      continue;
    }
    Value v = cast<Value>(f);
    result = result ? arith::MulIOp::create(b, loc, result, v).getResult() : v;
  }
  if (!result || constant != 1) {
    Value c = arith::ConstantIndexOp::create(b, loc, constant);
    result = result ? arith::MulIOp::create(b, loc, result, c).getResult() : c;
  }
  return result;
}

static bool sameSizes(ArrayRef<OpFoldResult> x, ArrayRef<OpFoldResult> y) {
  if (x.size() != y.size()) return false;
  for (auto [a, c] : llvm::zip(x, y)) {
    std::optional<int64_t> ca = getConstantIntValue(a), cc = getConstantIntValue(c);
    if (ca && cc ? *ca != *cc : a != c) return false;
  }
  return true;
}

/// Reshapes the contiguous identity-layout buffer `src`, whose sizes are `srcSizes`, into
/// `target` (same element count), whose sizes are `targetSizes`. Equal types are not enough to
/// skip the reshape: memref<?x?xf32> holds [2,3] and [3,2] alike, so only equal sizes are.
static Value viewAs(OpBuilder &b, Location loc, Value src, ArrayRef<OpFoldResult> srcSizes, MemRefType target,
                    ArrayRef<OpFoldResult> targetSizes) {
  auto srcType = cast<MemRefType>(src.getType());
  if (srcType == target && sameSizes(srcSizes, targetSizes)) return src;
  Type elem = srcType.getElementType();
  Value flat = src;
  if (srcType.getRank() == 0) {
    flat = memref::ExpandShapeOp::create(b, loc, MemRefType::get({1}, elem), src, ArrayRef<ReassociationIndices>{},
                                         ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  } else if (srcType.getRank() > 1) {
    ReassociationIndices all;
    for (int64_t i = 0; i < srcType.getRank(); ++i)
      all.push_back(i);
    // The collapsed size is dynamic when any size is: the builder's own inference folds 0 x ? to a
    // static 0, which the op's verifier then refuses.
    int64_t n = srcType.hasStaticShape() ? srcType.getNumElements() : ShapedType::kDynamic;
    flat =
        memref::CollapseShapeOp::create(b, loc, MemRefType::get({n}, elem), src, ArrayRef<ReassociationIndices>{all});
  }
  bool targetStatic = target.hasStaticShape();
  int64_t numElements = targetStatic ? target.getNumElements() : ShapedType::kDynamic;
  auto flatType = MemRefType::get({numElements}, elem);
  if (flat.getType() != flatType) flat = memref::CastOp::create(b, loc, flatType, flat);
  if (target.getRank() == 0)
    return memref::CollapseShapeOp::create(b, loc, target, flat, ArrayRef<ReassociationIndices>{});
  if (target.getRank() == 1) return flat.getType() == target ? flat : memref::CastOp::create(b, loc, target, flat);
  ReassociationIndices all;
  for (int64_t i = 0; i < target.getRank(); ++i)
    all.push_back(i);
  return memref::ExpandShapeOp::create(b, loc, target, flat, ArrayRef<ReassociationIndices>{all}, targetSizes);
}

struct UseOutputAllocatorPass : public mlir::dq::impl::UseOutputAllocatorBase<UseOutputAllocatorPass> {
  using UseOutputAllocatorBase::UseOutputAllocatorBase;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    using ::dq::InjectKnob;
    FailureOr<std::optional<InjectKnob>> knob =
        mlir::dq::parseInjectOption(func, "dq-use-output-allocator", inject,
                                    {InjectKnob::OutputRankCollapse, InjectKnob::EraseAllocBeforeViewAnalysis});
    if (failed(knob)) return signalPassFailure();
    // Decided once, engaged flag first: with `*knob == K` inside the loop GCC tested the payload
    // of the empty optional before its engaged flag (legal, same result), and memcheck stopped
    // every run of this pass on that branch on an uninitialised value.
    bool eraseEarly = false, collapseRank = false;
    if (knob->has_value()) {
      eraseEarly = **knob == InjectKnob::EraseAllocBeforeViewAnalysis;
      collapseRank = **knob == InjectKnob::OutputRankCollapse;
    }
    if (func.isExternal() || !func.isPublic()) return;
    DominanceInfo dom(func);
    SmallVector<OutputPlan> plans;
    llvm::SmallPtrSet<Operation *, 4> claimed;

    func.walk([&](func::ReturnOp ret) {
      for (auto [index, operand] : llvm::enumerate(ret.getOperands())) {
        auto outType = dyn_cast<MemRefType>(operand.getType());
        if (!outType || !outType.getLayout().isIdentity()) continue;
        auto alloc = stripWholeBufferViewsToAlloc(operand);
        if (!alloc || !alloc.getType().getLayout().isIdentity() || !claimed.insert(alloc).second)
          continue; // an input or an already claimed buffer: the runtime copies
        OutputPlan plan{static_cast<unsigned>(index), alloc, outType, {}, alloc};
        bool ok = true;
        for (int64_t i = 0; i < outType.getRank() && ok; ++i) {
          if (!outType.isDynamicDim(i)) continue;
          FailureOr<DimProduct> dim = reifyDim(operand, i);
          if (failed(dim)) {
            ok = false;
            break;
          }
          plan.dynamicDims.push_back(*dim);
        }
        if (ok) ok = placeAfterDims(plan, dom);
        if (ok)
          plans.push_back(std::move(plan));
        else
          claimed.erase(alloc);
      }
    });

    // Analysis is complete: only now are allocations replaced. They are erased after the last
    // plan, because one plan's insertion point may be another output's allocation.
    OpBuilder b(func.getContext());
    SmallVector<memref::AllocOp> replaced;
    for (OutputPlan &plan : plans) {
      Location loc = plan.alloc.getLoc();
      Value ctx = mlir::dq::getOrCreateContext(func, b);
      Value original = plan.alloc.getResult();
      if (eraseEarly) plan.alloc->erase(); // known-unsound: everything below still reads the erased op
      b.setInsertionPoint(plan.insertBefore);
      SmallVector<Value> sizes;
      for (const DimProduct &d : plan.dynamicDims)
        sizes.push_back(materialize(b, loc, d));
      MemRefType requestType = plan.outType;
      if (collapseRank && plan.outType.getRank() != 1) {
        // Known-unsound: one dim, the product of all of them, so enough bytes but the wrong rank.
        DimProduct all;
        for (int64_t i = 0, dyn = 0; i < plan.outType.getRank(); ++i)
          all.push_back(plan.outType.isDynamicDim(i) ? OpFoldResult(sizes[dyn++])
                                                     : OpFoldResult(b.getIndexAttr(plan.outType.getDimSize(i))));
        requestType =
            MemRefType::get({plan.outType.hasStaticShape() ? plan.outType.getNumElements() : ShapedType::kDynamic},
                            plan.outType.getElementType());
        sizes.clear();
        if (!plan.outType.hasStaticShape()) sizes.push_back(materialize(b, loc, all));
      }
      auto out = mlir::dq::AllocOutputOp::create(b, loc, requestType, ctx, b.getI64IntegerAttr(plan.index), sizes);
      MemRefType allocType = plan.alloc.getType();
      SmallVector<OpFoldResult> allocSizes;
      unsigned dyn = 0;
      for (int64_t i = 0; i < allocType.getRank(); ++i)
        allocSizes.push_back(allocType.isDynamicDim(i) ? OpFoldResult(plan.alloc.getDynamicSizes()[dyn++])
                                                       : OpFoldResult(b.getIndexAttr(allocType.getDimSize(i))));
      SmallVector<OpFoldResult> outSizes;
      for (int64_t i = 0, d = 0; i < requestType.getRank(); ++i)
        outSizes.push_back(requestType.isDynamicDim(i) ? OpFoldResult(sizes[d++])
                                                       : OpFoldResult(b.getIndexAttr(requestType.getDimSize(i))));
      Value view = viewAs(b, loc, out, outSizes, allocType, allocSizes);
      original.replaceAllUsesWith(view);
      if (!eraseEarly) replaced.push_back(plan.alloc);
    }
    for (memref::AllocOp alloc : replaced)
      alloc.erase();
  }

  static memref::AllocOp stripWholeBufferViewsToAlloc(Value v) {
    return mlir::dq::stripWholeBufferViews(v).getDefiningOp<memref::AllocOp>();
  }

  /// Picks the earliest point where every reified dim and the allocation's own sizes exist; it
  /// must still precede every use of the allocation.
  static bool placeAfterDims(OutputPlan &plan, DominanceInfo &dom) {
    Operation *alloc = plan.alloc;
    Block *block = alloc->getBlock();
    SmallVector<Value> dims;
    for (const DimProduct &d : plan.dynamicDims)
      for (OpFoldResult f : d)
        if (auto v = dyn_cast<Value>(f)) dims.push_back(v);
    Operation *point = mlir::dq::insertionPointAfterDefinitions(dims, alloc, dom);
    if (!point) return false;
    for (Operation *user : alloc->getUsers()) {
      Operation *anc = block->findAncestorOpInBlock(*user);
      if (!anc || (anc != point && anc->isBeforeInBlock(point))) return false;
    }
    plan.insertBefore = point;
    return true;
  }
};

} // namespace
