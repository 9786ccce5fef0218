//===- MaterializeHostScalars.cpp - host-written staging to host scratch --===//
//
// A memref.alloc written by host stores (bufferized tensor.from_elements, shape vectors) lives in
// device memory, where a host store traps. The stores are redirected to a dq.get_host_scratch
// buffer of the same type, host loads before the first device use read the scratch, and one copy
// moves the scratch into the device buffer just before that first device use. The device buffer
// is then an ordinary device allocation that later passes may reuse or pool.
//
// A graph output allocated by dq.alloc_output (dq-use-output-allocator) is device memory too: a
// shape-valued output (Shape, or shape arithmetic folded to host scalars) is written by host
// stores into the output buffer or into the whole-buffer view that replaced its allocation. Those
// stores are staged the same way; the copy is the one upload into the caller's buffer.
//
//===----------------------------------------------------------------------===//
#include "dq/Dialect/DQDialect.h"
#include "dq/Transforms/Passes.h"
#include "dq/Transforms/TransformUtils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::dq {
#define GEN_PASS_DEF_MATERIALIZEHOSTSCALARS
#include "dq/Transforms/Passes.h.inc"
} // namespace mlir::dq

using namespace mlir;

namespace {

struct Staging {
  Value buffer;                          // the device buffer the host stores write
  Operation *root;                       // memref.alloc or dq.alloc_output behind `buffer`
  SmallVector<Operation *> hostAccesses; // stores and the loads that precede the device use
  Operation *firstDeviceUse;             // in the buffer's block; null when never used on device
};

/// The value a dq.alloc_output's uses go through: dq-use-output-allocator replaces the original
/// allocation by a chain of whole-buffer views of the output (each with that one use), so the
/// host stores sit on the last view of the chain.
static Value outputAccessValue(dq::AllocOutputOp out) {
  Value v = out.getResult();
  while (v.hasOneUse()) {
    Operation *user = *v.getUsers().begin();
    if (!isa<memref::CastOp, memref::ExpandShapeOp, memref::CollapseShapeOp>(user) || user->getOperand(0) != v) break;
    v = user->getResult(0);
  }
  return v;
}

struct MaterializeHostScalarsPass : public dq::impl::MaterializeHostScalarsBase<MaterializeHostScalarsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Staging> staged;
    func.walk([&](Operation *op) {
      std::optional<Staging> s;
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        s = analyze(alloc.getResult(), op);
      else if (auto out = dyn_cast<dq::AllocOutputOp>(op))
        s = analyze(outputAccessValue(out), op);
      if (s) staged.push_back(*s);
    });
    OpBuilder b(func.getContext());
    for (Staging &s : staged) {
      Location loc = s.root->getLoc();
      Value ctx = dq::getOrCreateContext(func, b);
      auto type = cast<MemRefType>(s.buffer.getType());
      SmallVector<Value> sizes;
      if (auto alloc = dyn_cast<memref::AllocOp>(s.root)) {
        b.setInsertionPoint(alloc);
        sizes.append(alloc.getDynamicSizes().begin(), alloc.getDynamicSizes().end());
      } else {
        // After the view that the stores address, so its dynamic dims can be read from it.
        b.setInsertionPointAfterValue(s.buffer);
        for (int64_t i = 0; i < type.getRank(); ++i)
          if (type.isDynamicDim(i)) sizes.push_back(memref::DimOp::create(b, loc, s.buffer, i));
      }
      auto scratch = dq::GetHostScratchOp::create(b, loc, type, ctx, sizes);
      for (Operation *access : s.hostAccesses) {
        if (auto store = dyn_cast<memref::StoreOp>(access))
          store.getMemrefMutable().assign(scratch);
        else
          cast<memref::LoadOp>(access).getMemrefMutable().assign(scratch);
      }
      if (s.firstDeviceUse) {
        b.setInsertionPoint(s.firstDeviceUse);
        memref::CopyOp::create(b, loc, scratch, s.buffer);
      } else if (isa<dq::AllocOutputOp>(s.root)) {
        // A graph output is read by the caller after the function returns.
        b.setInsertionPoint(s.root->getBlock()->getTerminator());
        memref::CopyOp::create(b, loc, scratch, s.buffer);
      } else if (s.root->use_empty()) {
        s.root->erase();
      }
    }
  }

  /// Returns the staging description when `buffer` is host-written and every store precedes the
  /// first device use in the same block (otherwise one copy would not be enough: left alone).
  static std::optional<Staging> analyze(Value buffer, Operation *root) {
    Block *block = root->getBlock();
    if (buffer.getParentBlock() != block) return std::nullopt;
    Staging s{buffer, root, {}, nullptr};
    bool hasStore = false;
    // Users sorted by their position in the buffer's block.
    SmallVector<std::pair<Operation *, Operation *>> users; // (ancestor in block, user)
    for (Operation *user : buffer.getUsers()) {
      Operation *anc = block->findAncestorOpInBlock(*user);
      if (!anc) return std::nullopt;
      users.push_back({anc, user});
    }
    llvm::sort(users, [](auto &l, auto &r) { return l.first != r.first && l.first->isBeforeInBlock(r.first); });
    for (auto [anc, user] : users) {
      bool isHost = isa<memref::StoreOp, memref::LoadOp>(user) && anc == user;
      if (isHost && !s.firstDeviceUse) {
        hasStore |= isa<memref::StoreOp>(user);
        s.hostAccesses.push_back(user);
        continue;
      }
      if (isa<memref::StoreOp>(user)) return std::nullopt; // host write after a device use
      if (!s.firstDeviceUse && !isa<memref::LoadOp>(user)) s.firstDeviceUse = anc;
    }
    if (!hasStore) return std::nullopt;
    return s;
  }
};

} // namespace
