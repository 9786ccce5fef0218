//===- MaterializeHostScalars.cpp - host-written staging to host scratch --===//
//
// A memref.alloc written by host stores (bufferized tensor.from_elements, shape vectors) lives in
// device memory, where a host store traps. The stores are redirected to a dq.get_host_scratch
// buffer of the same type, host loads before the first device use read the scratch, and one copy
// moves the scratch into the device buffer just before that first device use. The device buffer
// is then an ordinary device allocation that later passes may reuse or pool.
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
  memref::AllocOp alloc;
  SmallVector<Operation *> hostAccesses; // stores and the loads that precede the device use
  Operation *firstDeviceUse;             // in the alloc's block; null when never used on device
};

struct MaterializeHostScalarsPass
    : public dq::impl::MaterializeHostScalarsBase<MaterializeHostScalarsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Staging> staged;
    func.walk([&](memref::AllocOp alloc) {
      if (auto s = analyze(alloc))
        staged.push_back(*s);
    });
    OpBuilder b(func.getContext());
    for (Staging &s : staged) {
      Location loc = s.alloc.getLoc();
      Value ctx = dq::getOrCreateContext(func, b);
      b.setInsertionPoint(s.alloc);
      auto scratch = dq::GetHostScratchOp::create(b, loc, s.alloc.getType(), ctx,
                                                  s.alloc.getDynamicSizes());
      for (Operation *access : s.hostAccesses) {
        if (auto store = dyn_cast<memref::StoreOp>(access))
          store.getMemrefMutable().assign(scratch);
        else
          cast<memref::LoadOp>(access).getMemrefMutable().assign(scratch);
      }
      if (s.firstDeviceUse) {
        b.setInsertionPoint(s.firstDeviceUse);
        memref::CopyOp::create(b, loc, scratch, s.alloc);
      } else if (s.alloc->use_empty()) {
        s.alloc.erase();
      }
    }
  }

  /// Returns the staging description when `alloc` is host-written and every store precedes the
  /// first device use in the same block (otherwise one copy would not be enough: left alone).
  static std::optional<Staging> analyze(memref::AllocOp alloc) {
    Block *block = alloc->getBlock();
    Staging s{alloc, {}, nullptr};
    bool hasStore = false;
    // Users sorted by their position in the alloc's block.
    SmallVector<std::pair<Operation *, Operation *>> users; // (ancestor in block, user)
    for (Operation *user : alloc->getUsers()) {
      Operation *anc = block->findAncestorOpInBlock(*user);
      if (!anc)
        return std::nullopt;
      users.push_back({anc, user});
    }
    llvm::sort(users, [](auto &l, auto &r) {
      return l.first != r.first && l.first->isBeforeInBlock(r.first);
    });
    for (auto [anc, user] : users) {
      bool isHost = isa<memref::StoreOp, memref::LoadOp>(user) && anc == user;
      if (isHost && !s.firstDeviceUse) {
        hasStore |= isa<memref::StoreOp>(user);
        s.hostAccesses.push_back(user);
        continue;
      }
      if (isa<memref::StoreOp>(user))
        return std::nullopt; // host write after a device use
      if (!s.firstDeviceUse && !isa<memref::LoadOp>(user))
        s.firstDeviceUse = anc;
    }
    if (!hasStore)
      return std::nullopt;
    return s;
  }
};

} // namespace
