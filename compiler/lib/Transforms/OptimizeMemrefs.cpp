//===- OptimizeMemrefs.cpp - lifetime-based buffer reuse ------------------===//
//
// Liveness rule: a memref.alloc in the function's entry block is live from the alloc op to the
// last op of that block that uses it or any view derived from it (uses nested in regions count at
// their ancestor op in the block). An allocation that escapes (returned, passed to a call, or
// stored into memory) is live to the end. A later allocation of the identical type (dynamic
// sizes: the identical SSA values) whose alloc op comes strictly after that last use takes over
// the earlier buffer. Host-written buffers (memref.store users) and buffers with an explicit
// memref.dealloc are left alone.
//
//===----------------------------------------------------------------------===//
#include "dq/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::dq {
#define GEN_PASS_DEF_OPTIMIZEMEMREFS
#include "dq/Transforms/Passes.h.inc"
} // namespace mlir::dq

using namespace mlir;

namespace {

constexpr unsigned kLiveToEnd = ~0u;

struct Buffer {
  memref::AllocOp rep;
  unsigned lastUse;
};

struct OptimizeMemrefsPass : public dq::impl::OptimizeMemrefsBase<OptimizeMemrefsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &block = func.getBody().front();
    llvm::DenseMap<Operation *, unsigned> position;
    for (auto [i, op] : llvm::enumerate(block))
      position[&op] = i;

    SmallVector<Buffer> buffers;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      auto alloc = dyn_cast<memref::AllocOp>(op);
      if (!alloc)
        continue;
      std::optional<unsigned> last = lastUse(alloc, block, position);
      if (!last)
        continue;
      unsigned start = position[alloc];
      Buffer *reuse = nullptr;
      for (Buffer &b : buffers)
        if (b.lastUse < start && b.rep.getType() == alloc.getType() &&
            b.rep.getDynamicSizes() == alloc.getDynamicSizes()) {
          reuse = &b;
          break;
        }
      if (!reuse) {
        buffers.push_back({alloc, *last});
        continue;
      }
      alloc.getResult().replaceAllUsesWith(reuse->rep.getResult());
      reuse->lastUse = std::max(reuse->lastUse, *last);
      alloc.erase();
    }
  }

  /// Position of the last use of `alloc` or its views; kLiveToEnd if it escapes; nullopt when
  /// the buffer must not take part in reuse.
  static std::optional<unsigned> lastUse(memref::AllocOp alloc, Block &block,
                                         llvm::DenseMap<Operation *, unsigned> &position) {
    unsigned last = position[alloc];
    SmallVector<Value> worklist{alloc.getResult()};
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (auto store = dyn_cast<memref::StoreOp>(user)) {
          if (store.getMemref() == v)
            return std::nullopt; // host-written
          return kLiveToEnd;     // the buffer itself is stored somewhere: escapes
        }
        if (isa<memref::DeallocOp>(user))
          return std::nullopt;
        if (isa<func::ReturnOp, func::CallOp>(user))
          return kLiveToEnd;
        Operation *anc = block.findAncestorOpInBlock(*user);
        if (!anc)
          return kLiveToEnd;
        last = std::max(last, position[anc]);
        if (isa<memref::CastOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
                memref::SubViewOp, memref::ReinterpretCastOp, memref::ViewOp>(user) &&
            use.getOperandNumber() == 0)
          for (Value r : user->getResults())
            worklist.push_back(r);
      }
    }
    return last;
  }
};

} // namespace
