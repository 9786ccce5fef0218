//===- FuseElementwise.cpp - chains of elementwise ops into one kernel ----===//
//
// Each dq.elementwise is a kernel launch, and on a GPU a decode step is bound by the host time
// of its launches; RMSNorm's tail (add eps, sqrt, div, mul weight) and SiLU (sigmoid, mul, mul
// up) are chains of them. This pass merges such chains into one dq.kernel "fused_elementwise"
// whose `imm` is the step program of Program.h. It works on tensors, before bufferization, so
// the intermediates never get buffers.
//
// Legality (docs/passes/fuse-elementwise.md): a producer P (a dq.elementwise of a supported
// float kind, or a fused kernel) merges into its consumer C when P's result has exactly one use,
// in C; P and C lie in one block; every leaf, intermediate and result has one float element type
// (no bool, no integer, no cast, no where); P's result type broadcasts to C's init type; and the
// merged kernel has at most kFusedMaxInputs leaves and kFusedMaxSteps steps (a longer chain stays
// several kernels). A leaf broadcasts to its intermediate and the intermediate to the output, so
// the leaf broadcasts to the output at the same element: the kernel reads every leaf at the
// output index and recomputes a broadcast intermediate per output element.
//
//===----------------------------------------------------------------------===//
#include "dq/Dialect/DQDialect.h"
#include "dq/Transforms/Passes.h"
#include "dq/runtime/Program.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>

namespace mlir::dq {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "dq/Transforms/Passes.h.inc"
} // namespace mlir::dq

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kFused = "fused_elementwise";

/// An operand of a step: leaf `index` or the result of step `index`.
struct Ref {
  bool leaf = true;
  unsigned index = 0;
};

struct Step {
  int64_t code = 0;
  Ref a;
  std::optional<Ref> b; ///< absent for unary ops
};

/// A chain under construction: its leaves (distinct values) and steps in evaluation order.
struct Chain {
  SmallVector<Value> leaves;
  SmallVector<Step> steps;

  Ref leafRef(Value v) {
    for (unsigned i = 0; i < leaves.size(); ++i)
      if (leaves[i] == v) return {true, i};
    leaves.push_back(v);
    return {true, static_cast<unsigned>(leaves.size() - 1)};
  }

  /// The step program of Program.h: refs become leaf k or leaves.size() + step j.
  SmallVector<int64_t> encode() const {
    auto index = [&](Ref r) -> int64_t { return r.leaf ? r.index : leaves.size() + r.index; };
    SmallVector<int64_t> imm;
    for (const Step &s : steps) {
      imm.push_back(s.code);
      imm.push_back(index(s.a));
      imm.push_back(s.b ? index(*s.b) : -1);
    }
    return imm;
  }
};

/// The one float element type of every shaped operand of `op`, or null when they differ or are
/// not floats.
FloatType commonFloatType(Operation *op) {
  FloatType element;
  for (Value v : op->getOperands()) {
    auto shaped = dyn_cast<RankedTensorType>(v.getType());
    if (!shaped) return nullptr;
    auto f = dyn_cast<FloatType>(shaped.getElementType());
    if (!f || (element && f != element)) return nullptr;
    element = f;
  }
  return element;
}

/// The chain computed by `op` when it is a fusible op on tensors, else nothing.
std::optional<Chain> chainOf(Operation *op) {
  if (op->getNumResults() != 1 || !commonFloatType(op)) return std::nullopt;
  Chain chain;
  if (auto e = dyn_cast<mlir::dq::ElementwiseOp>(op)) {
    int64_t code = ::dq::rt::fusedOpCode(e.getKind().str());
    int arity = ::dq::rt::fusedOpArity(code);
    if (code < 0 || e.getOutputs().size() != 1 || e.getInputs().size() != static_cast<size_t>(arity))
      return std::nullopt;
    Step s{code, chain.leafRef(e.getInputs()[0]), std::nullopt};
    if (arity == 2) s.b = chain.leafRef(e.getInputs()[1]);
    chain.steps.push_back(s);
    return chain;
  }
  auto k = dyn_cast<mlir::dq::KernelOp>(op);
  if (!k || k.getKernel() != kFused) return std::nullopt;
  // The verifier checked the program, so every operand index is in range.
  chain.leaves.assign(k.getInputs().begin(), k.getInputs().end());
  const int64_t n = chain.leaves.size();
  auto ref = [&](int64_t i) -> Ref {
    return i < n ? Ref{true, static_cast<unsigned>(i)} : Ref{false, static_cast<unsigned>(i - n)};
  };
  ArrayRef<int64_t> imm = k.getImm();
  for (size_t j = 0; j + 2 < imm.size(); j += ::dq::rt::kFusedStepImms) {
    Step s{imm[j], ref(imm[j + 1]), std::nullopt};
    if (::dq::rt::fusedOpArity(imm[j]) == 2) s.b = ref(imm[j + 2]);
    chain.steps.push_back(s);
  }
  return chain;
}

/// `from` broadcasts to `to` by the static types alone: ranks right-aligned, `from` no larger,
/// each dim a static 1, equal static extents, or dynamic on both sides.
bool broadcastsTo(RankedTensorType from, RankedTensorType to) {
  if (from.getRank() > to.getRank()) return false;
  const int64_t shift = to.getRank() - from.getRank();
  for (int64_t d = 0; d < from.getRank(); ++d) {
    int64_t f = from.getDimSize(d), t = to.getDimSize(d + shift);
    bool ok = f == 1 || (ShapedType::isDynamic(f) && ShapedType::isDynamic(t)) || (!ShapedType::isDynamic(f) && f == t);
    if (!ok) return false;
  }
  return true;
}

/// `consumer` with producer `p` (whose result is leaf `value` of `consumer`) evaluated first:
/// p's leaves, then consumer's other leaves; nothing when the result breaks the caps.
std::optional<Chain> merge(const Chain &p, const Chain &consumer, Value value) {
  Chain merged;
  merged.leaves = p.leaves;
  merged.steps = p.steps;
  const unsigned offset = p.steps.size();
  SmallVector<Ref> leafMap;
  for (Value v : consumer.leaves)
    leafMap.push_back(v == value ? Ref{false, offset - 1} : merged.leafRef(v));
  auto remap = [&](Ref r) { return r.leaf ? leafMap[r.index] : Ref{false, r.index + offset}; };
  for (const Step &s : consumer.steps) {
    Step t{s.code, remap(s.a), std::nullopt};
    if (s.b) t.b = remap(*s.b);
    merged.steps.push_back(t);
  }
  if (merged.leaves.size() > static_cast<size_t>(::dq::rt::kFusedMaxInputs) ||
      merged.steps.size() > static_cast<size_t>(::dq::rt::kFusedMaxSteps))
    return std::nullopt;
  return merged;
}

/// Erases `ops` (already without uses, in an order where each op's users come first) and then
/// every op they leave trivially dead (the producers' tensor.empty inits and their sizes).
void eraseWithDeadOperands(ArrayRef<Operation *> ops) {
  SmallVector<Operation *> worklist;
  // Ops of `ops` are operands of one another: the set keeps them from being visited once gone.
  llvm::SmallPtrSet<Operation *, 8> erased;
  for (Operation *op : ops) {
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp()) worklist.push_back(def);
    erased.insert(op);
    op->erase();
  }
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op)) continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp()) worklist.push_back(def);
    erased.insert(op);
    op->erase();
  }
}

/// Grows the chain of consumer `c` by every legal producer; replaces `c` (and the producers) by
/// one fused kernel when at least one merged. Returns whether it did.
bool fuseInto(Operation *c) {
  std::optional<Chain> chain = chainOf(c);
  if (!chain) return false;
  FloatType element = commonFloatType(c);
  auto dps = cast<DestinationStyleOpInterface>(c);
  auto initType = cast<RankedTensorType>(dps.getDpsInits()[0].getType());
  SmallVector<Operation *> absorbed{c};
  bool grew = true;
  while (grew) {
    grew = false;
    for (Value leaf : chain->leaves) {
      Operation *p = leaf.getDefiningOp();
      if (!p || p->getBlock() != c->getBlock() || !leaf.hasOneUse() ||
          !llvm::is_contained(absorbed, *leaf.getUsers().begin()))
        continue;
      std::optional<Chain> pc = chainOf(p);
      if (!pc || commonFloatType(p) != element || !broadcastsTo(cast<RankedTensorType>(leaf.getType()), initType))
        continue;
      std::optional<Chain> merged = merge(*pc, *chain, leaf);
      if (!merged) continue;
      chain = std::move(merged);
      absorbed.push_back(p);
      grew = true;
      break; // the leaves changed
    }
  }
  if (absorbed.size() == 1) return false;
  SmallVector<Location> locs;
  for (Operation *op : absorbed)
    locs.push_back(op->getLoc());
  OpBuilder b(c);
  auto fused = mlir::dq::KernelOp::create(
      b, FusedLoc::get(c->getContext(), locs, StringAttr::get(c->getContext(), kFused)), TypeRange{initType}, kFused,
      ValueRange(chain->leaves), ValueRange{dps.getDpsInits()[0]}, ValueRange{}, chain->encode(), ArrayRef<double>{});
  c->getResult(0).replaceAllUsesWith(fused.getResult(0));
  eraseWithDeadOperands(absorbed);
  return true;
}

struct FuseElementwisePass : public mlir::dq::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) { blocks.push_back(block); });
    // In block order every producer has had its own producers merged before its consumer is
    // visited; the fused op takes the consumer's place, behind the iterator.
    for (Block *block : blocks)
      for (Operation &op : llvm::make_early_inc_range(*block))
        fuseInto(&op);
  }
};

} // namespace
