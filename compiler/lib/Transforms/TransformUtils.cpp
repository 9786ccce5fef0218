//===- TransformUtils.cpp - helpers shared by the memref passes -----------===//
#include "dq/Transforms/TransformUtils.h"

#include "dq/Dialect/DQDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"

using namespace mlir;

Value dq::getOrCreateContext(func::FuncOp func, OpBuilder &builder) {
  Block &entry = func.getBody().front();
  for (Operation &op : entry)
    if (auto ctx = dyn_cast<GetContextOp>(op)) return ctx.getResult();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&entry);
  return GetContextOp::create(builder, func.getLoc(), ContextType::get(func.getContext()));
}

Operation *dq::insertionPointAfterDefinitions(ArrayRef<Value> values, Operation *start, DominanceInfo &dom) {
  Block *block = start->getBlock();
  Operation *point = start;
  // A definition at the point itself must move it too: with `point->isBeforeInBlock(def)` alone,
  // a value defined by the op the point had just moved to was left after its use.
  for (Value v : values)
    if (Operation *def = v.getDefiningOp(); def && def->getBlock() == block && !def->isBeforeInBlock(point)) {
      point = def->getNextNode();
      if (!point) return nullptr;
    }
  for (Value v : values)
    if (!dom.properlyDominates(v, point)) return nullptr;
  return point;
}

bool dq::isProvablyContiguous(MemRefType type) {
  if (type.getLayout().isIdentity()) return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset))) return false;
  // `expected` is the stride the next non-singleton dim must have; dynamic once a dynamic extent
  // has been crossed, after which no further dim can be proven contiguous.
  int64_t expected = 1;
  for (int64_t i = type.getRank() - 1; i >= 0; --i) {
    int64_t size = type.getDimSize(i);
    if (size == 1) continue;
    if (ShapedType::isDynamic(expected) || strides[i] != expected) return false;
    expected = ShapedType::isDynamic(size) ? ShapedType::kDynamic : expected * size;
  }
  return true;
}

int64_t dq::elementByteSize(Type t) {
  if (t.isIndex()) return 8;
  if (t.isInteger(1)) return 1;
  if (t.isIntOrFloat()) return t.getIntOrFloatBitWidth() % 8 == 0 ? t.getIntOrFloatBitWidth() / 8 : 0;
  return 0;
}

bool dq::isAliasingView(Operation *op) {
  return isa<memref::CastOp, memref::ExpandShapeOp, memref::CollapseShapeOp, memref::SubViewOp,
             memref::ReinterpretCastOp, memref::ViewOp, memref::TransposeOp>(op);
}

dq::BufferLiveness dq::analyzeBufferLiveness(Value buffer, Block &block,
                                             const llvm::DenseMap<Operation *, unsigned> &position) {
  BufferLiveness result;
  if (Operation *def = buffer.getDefiningOp())
    if (Operation *anc = block.findAncestorOpInBlock(*def)) result.lastUse = position.lookup(anc);
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      Operation *anc = block.findAncestorOpInBlock(*user);
      if (!anc) {
        result.escapes = true;
        continue;
      }
      result.lastUse = std::max(result.lastUse, position.lookup(anc));
      if (isAliasingView(user) && use.getOperandNumber() == 0) {
        for (Value r : user->getResults())
          worklist.push_back(r);
        continue;
      }
      if (auto store = dyn_cast<memref::StoreOp>(user)) {
        if (store.getMemref() == v)
          result.hostWritten = true;
        else
          result.escapes = true; // the buffer itself is stored into memory
        continue;
      }
      if (isa<memref::DeallocOp>(user)) {
        result.deallocated = true;
        continue;
      }
      // A terminator or call hands the buffer on; an op with memref results may return an alias.
      if (user->hasTrait<OpTrait::IsTerminator>() || isa<CallOpInterface>(user) ||
          llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>))
        result.escapes = true;
    }
  }
  return result;
}

Value dq::stripWholeBufferViews(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto c = dyn_cast<memref::CastOp>(def))
      value = c.getSource();
    else if (auto e = dyn_cast<memref::ExpandShapeOp>(def))
      value = e.getSrc();
    else if (auto c = dyn_cast<memref::CollapseShapeOp>(def))
      value = c.getSrc();
    else
      break;
  }
  return value;
}
