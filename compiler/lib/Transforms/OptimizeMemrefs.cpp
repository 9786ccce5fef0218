//===- OptimizeMemrefs.cpp - lifetime-based buffer reuse ------------------===//
//
// Liveness rule: a memref.alloc in the function's entry block is live from the alloc op to the
// last op of that block that uses it or any view derived from it (uses nested in regions count at
// their ancestor op in the block; mlir::dq::analyzeBufferLiveness). An allocation that escapes
// (returned, passed to a call, stored into memory, or aliased by an op the walk cannot follow) is
// live to the end. A later allocation of the identical type (dynamic
// sizes: the identical SSA values) whose alloc op comes strictly after that last use takes over
// the earlier buffer. Host-written buffers (memref.store users) and buffers with an explicit
// memref.dealloc are left alone.
//
//===----------------------------------------------------------------------===//
#include "dq/Transforms/InjectOption.h"
#include "dq/Transforms/Passes.h"
#include "dq/Transforms/TransformUtils.h"
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

struct OptimizeMemrefsPass : public mlir::dq::impl::OptimizeMemrefsBase<OptimizeMemrefsPass> {
  using OptimizeMemrefsBase::OptimizeMemrefsBase;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    FailureOr<std::optional<::dq::InjectKnob>> knob =
        mlir::dq::parseInjectOption(func, "dq-optimize-memrefs", inject, {::dq::InjectKnob::HostScalarsAfterReuse});
    if (failed(knob)) return signalPassFailure();
    // Known-unsound with the knob: host-written buffers take part in reuse, as they did when
    // host scalars were materialized after this pass.
    includeHostWritten = knob->has_value();
    if (func.isExternal()) return;
    Block &block = func.getBody().front();
    llvm::DenseMap<Operation *, unsigned> position;
    for (auto [i, op] : llvm::enumerate(block))
      position[&op] = i;

    SmallVector<Buffer> buffers;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      auto alloc = dyn_cast<memref::AllocOp>(op);
      if (!alloc) continue;
      std::optional<unsigned> last = lastUse(alloc, block, position);
      if (!last) continue;
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
  std::optional<unsigned> lastUse(memref::AllocOp alloc, Block &block,
                                  const llvm::DenseMap<Operation *, unsigned> &position) const {
    mlir::dq::BufferLiveness live = mlir::dq::analyzeBufferLiveness(alloc.getResult(), block, position);
    if ((live.hostWritten && !includeHostWritten) || live.deallocated) return std::nullopt;
    return live.escapes ? kLiveToEnd : live.lastUse;
  }

  bool includeHostWritten = false;
};

} // namespace
