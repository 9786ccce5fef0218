//===- PoolAllocs.cpp - transient allocations into the device pool --------===//
//
// Every transient memref.alloc of the entry block (identity layout, no escape, no explicit
// dealloc) becomes a memref.view into one dq.get_pool buffer. Each region is live from its view
// to its last use through any chain of views (dq::analyzeBufferLiveness); a memref.dealloc of the
// view after that use ends it, so the runtime poisons the bytes and checks that no live regions
// overlap. Offsets are assigned greedily in program order, and regions whose live ranges are
// disjoint may share bytes:
//   - static sizes: first fit, the lowest aligned offset clear of every placed static region
//     whose live range overlaps;
//   - dynamic sizes: bytes = c * d1 * ... * dk with static c and SSA sizes d. A slot (offset and
//     capacity fixed when it is opened after all static regions) is reused when its occupant is
//     dead and it provably holds the new region: the same multiset of SSA sizes and a capacity
//     factor >= c (sizes are never negative). Otherwise a new slot opens at the end.
// Offsets are 64-byte aligned; the pool size is the end of the last region, unrounded. The pool
// request is placed after the last definition of any packed allocation's sizes, and an
// allocation is only packed when that point still precedes all of its uses.
//
//===----------------------------------------------------------------------===//
#include "dq/Dialect/DQDialect.h"
#include "dq/Transforms/Passes.h"
#include "dq/Transforms/TransformUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <algorithm>

namespace mlir::dq {
#define GEN_PASS_DEF_POOLALLOCS
#include "dq/Transforms/Passes.h.inc"
} // namespace mlir::dq

using namespace mlir;

namespace {

// Bytes. A multiple of every element size (at most 8), and the width of a cache line and of the
// widest (512-bit) vector access, so no kernel touches a line that also holds another region.
constexpr int64_t kRegionAlignment = 64;

int64_t alignUp(int64_t v) { return (v + kRegionAlignment - 1) / kRegionAlignment * kRegionAlignment; }

/// One packed allocation: live over [start, end] (op positions in the block).
struct Region {
  memref::AllocOp alloc;
  unsigned start, end;
  bool used;
  int64_t factor;                  // element bytes times the static dims
  SmallVector<Value> dynamicSizes; // in program order: the multiset of SSA sizes
  int64_t staticOffset = -1;       // static regions
  unsigned slot = 0;               // dynamic regions
};

struct Slot {
  int64_t factor;
  SmallVector<Value> dynamicSizes;
  unsigned occupantEnd;
};

struct PoolAllocsPass : public dq::impl::PoolAllocsBase<PoolAllocsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal()) return;
    Block &block = func.getBody().front();
    llvm::DenseMap<Operation *, unsigned> position;
    SmallVector<Operation *> order;
    for (Operation &op : block) {
      position[&op] = order.size();
      order.push_back(&op);
    }

    SmallVector<Region> regions;
    unsigned point = 0; // insert the pool before order[point]
    unsigned earliestUse = ~0u;
    for (Operation *op : order) {
      auto alloc = dyn_cast<memref::AllocOp>(op);
      if (!alloc || !alloc.getType().getLayout().isIdentity() ||
          dq::elementByteSize(alloc.getType().getElementType()) == 0)
        continue;
      dq::BufferLiveness live = dq::analyzeBufferLiveness(alloc.getResult(), block, position);
      if (live.escapes || live.deallocated) continue;
      unsigned required = regions.empty() ? position[alloc] : point;
      for (Value size : alloc.getDynamicSizes())
        if (Operation *def = size.getDefiningOp(); def && def->getBlock() == &block)
          required = std::max(required, position[def] + 1);
      unsigned firstUse = ~0u;
      for (Operation *user : alloc->getUsers())
        firstUse = std::min(firstUse, position[block.findAncestorOpInBlock(*user)]);
      if (required > std::min(earliestUse, firstUse)) continue;
      point = required;
      earliestUse = std::min(earliestUse, firstUse);
      Region r{alloc, 0, live.lastUse, firstUse != ~0u, 0, {}};
      MemRefType type = alloc.getType();
      r.factor = dq::elementByteSize(type.getElementType());
      for (int64_t d : type.getShape())
        if (!ShapedType::isDynamic(d)) r.factor *= d;
      r.dynamicSizes.assign(alloc.getDynamicSizes().begin(), alloc.getDynamicSizes().end());
      // Program order, not pointer order: pointers differ from run to run, and so did the
      // order of the size products in the program of two compiles of one model.
      auto key = [&](Value v) -> std::pair<int64_t, int64_t> {
        if (auto arg = dyn_cast<BlockArgument>(v)) return {-1, arg.getArgNumber()};
        auto it = position.find(v.getDefiningOp());
        return {it == position.end() ? -2 : int64_t(it->second), cast<OpResult>(v).getResultNumber()};
      };
      std::stable_sort(r.dynamicSizes.begin(), r.dynamicSizes.end(), [&](Value a, Value b) { return key(a) < key(b); });
      regions.push_back(std::move(r));
    }
    if (regions.empty()) return;
    // Views of allocations made before the pool point are created at that point.
    for (Region &r : regions) {
      r.start = std::max(point, position[r.alloc]);
      r.end = std::max(r.end, r.start);
    }

    int64_t staticBytes = placeStatic(regions);
    SmallVector<Slot> slots = placeDynamic(regions);
    emit(func, order[point], regions, slots, staticBytes, position, order);
  }

  /// First fit of the static regions; returns the static part's size in bytes.
  static int64_t placeStatic(MutableArrayRef<Region> regions) {
    SmallVector<Region *> placed;
    int64_t size = 0;
    for (Region &r : regions) {
      if (!r.dynamicSizes.empty()) continue;
      SmallVector<Region *> live;
      for (Region *p : placed)
        if (p->start <= r.end && r.start <= p->end) live.push_back(p);
      llvm::sort(live, [](Region *a, Region *b) { return a->staticOffset < b->staticOffset; });
      int64_t offset = 0;
      for (Region *p : live)
        if (offset < p->staticOffset + p->factor && p->staticOffset < offset + r.factor)
          offset = alignUp(p->staticOffset + p->factor);
      r.staticOffset = offset;
      size = std::max(size, offset + r.factor);
      placed.push_back(&r);
    }
    return size;
  }

  /// Assigns each dynamic region a slot, reusing a dead slot that provably holds it.
  static SmallVector<Slot> placeDynamic(MutableArrayRef<Region> regions) {
    SmallVector<Slot> slots;
    for (Region &r : regions) {
      if (r.dynamicSizes.empty()) continue;
      auto fits = [&](const Slot &s) {
        return s.occupantEnd < r.start && s.dynamicSizes == r.dynamicSizes && s.factor >= r.factor;
      };
      auto it = llvm::find_if(slots, fits);
      if (it == slots.end()) {
        slots.push_back({r.factor, r.dynamicSizes, r.end});
        r.slot = slots.size() - 1;
      } else {
        it->occupantEnd = r.end;
        r.slot = it - slots.begin();
      }
    }
    return slots;
  }

  static void emit(func::FuncOp func, Operation *poolPoint, MutableArrayRef<Region> regions, ArrayRef<Slot> slots,
                   int64_t staticBytes, llvm::DenseMap<Operation *, unsigned> &position, ArrayRef<Operation *> order) {
    OpBuilder b(func.getContext());
    Value ctx = dq::getOrCreateContext(func, b);
    b.setInsertionPoint(poolPoint);
    Location loc = regions.front().alloc.getLoc();
    llvm::DenseMap<int64_t, Value> constants;
    auto constant = [&](int64_t v) {
      Value &c = constants[v];
      if (!c) c = arith::ConstantIndexOp::create(b, loc, v);
      return c;
    };
    // Slot offsets: static parts fold; only what is really dynamic becomes arith ops.
    SmallVector<Value> slotOffsets;
    std::optional<int64_t> staticEnd = staticBytes;
    Value end;
    for (const Slot &s : slots) {
      Value offset;
      if (staticEnd) {
        offset = constant(alignUp(*staticEnd));
      } else {
        Value units = arith::CeilDivSIOp::create(b, loc, end, constant(kRegionAlignment));
        offset = arith::MulIOp::create(b, loc, units, constant(kRegionAlignment));
      }
      Value bytes = constant(s.factor);
      for (Value size : s.dynamicSizes)
        bytes = arith::MulIOp::create(b, loc, size, bytes);
      end = staticEnd == 0 ? bytes : arith::AddIOp::create(b, loc, bytes, offset).getResult();
      staticEnd.reset();
      slotOffsets.push_back(offset);
    }
    Value total = slots.empty() ? constant(staticBytes) : end;
    SmallVector<Value> offsets;
    for (Region &r : regions)
      offsets.push_back(r.dynamicSizes.empty() ? constant(r.staticOffset) : slotOffsets[r.slot]);
    auto pool = dq::GetPoolOp::create(b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type()), ctx, total);

    // Views of allocations before the pool point go right after the pool, in order; the others
    // replace their allocation in place. Each region ends with a dealloc after its last use.
    OpBuilder early(func.getContext());
    early.setInsertionPointAfter(pool);
    for (auto [r, offset] : llvm::zip(regions, offsets)) {
      memref::AllocOp alloc = r.alloc;
      OpBuilder here(alloc);
      OpBuilder &at = position[alloc] >= r.start ? here : early;
      auto view = memref::ViewOp::create(at, alloc.getLoc(), alloc.getType(), pool, offset, alloc.getDynamicSizes());
      alloc.getResult().replaceAllUsesWith(view.getResult());
      OpBuilder after(func.getContext());
      if (r.used)
        after.setInsertionPointAfter(order[r.end]);
      else
        after.setInsertionPointAfter(view);
      memref::DeallocOp::create(after, alloc.getLoc(), view.getResult());
    }
    for (Region &r : regions)
      r.alloc.erase();
  }
};

} // namespace
