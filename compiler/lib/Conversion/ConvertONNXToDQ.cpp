//===- ConvertONNXToDQ.cpp - dq-convert-onnx pass and shared lowering state ===//
#include "dq/Transforms/InjectOption.h"
#include "ONNXLowering.h"

#include "dq/Conversion/Passes.h"
#include "dq/Dialect/DQDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dq {
#define GEN_PASS_DEF_CONVERTONNXTODQ
#include "dq/Conversion/Passes.h.inc"
} // namespace mlir::dq

using namespace mlir;
using namespace mlir::dq;
using namespace mlir::dq::onnx_lowering;

Type onnx_lowering::elementTypeForOnnxCode(MLIRContext *ctx, int64_t code) {
  switch (code) {
  case 1:
    return Float32Type::get(ctx);
  case 2:
    return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case 3:
    return IntegerType::get(ctx, 8);
  case 6:
    return IntegerType::get(ctx, 32);
  case 7:
    return IntegerType::get(ctx, 64);
  case 9:
    return IntegerType::get(ctx, 1);
  case 10:
    return Float16Type::get(ctx);
  case 11:
    return Float64Type::get(ctx);
  case 16:
    return BFloat16Type::get(ctx);
  default:
    return {};
  }
}

static bool isSupportedElementType(Type t) {
  if (isa<Float32Type, Float16Type, BFloat16Type, Float64Type>(t)) return true;
  auto it = dyn_cast<IntegerType>(t);
  if (!it) return false;
  if (it.isUnsigned()) return it.getWidth() == 8;
  return it.isSignless() && (it.getWidth() == 1 || it.getWidth() == 8 || it.getWidth() == 32 || it.getWidth() == 64);
}

Lowering::Lowering(func::FuncOp func) : b(func.getContext()), loc(func.getLoc()), func(func) {}

//===----------------------------------------------------------------------===//
// Operands and results
//===----------------------------------------------------------------------===//

LoweredValue &Lowering::lookup(Value v) {
  auto it = values.find(v);
  if (it != values.end()) return *it->second;
  // A value not produced by an onnx op (function argument, or a tensor op already in the IR).
  auto rt = cast<RankedTensorType>(v.getType());
  SmallVector<Value> dims;
  for (int64_t i = 0; i < rt.getRank(); ++i)
    dims.push_back(rt.isDynamicDim(i) ? tensor::DimOp::create(b, loc, v, idx(i)).getResult() : idx(rt.getDimSize(i)));
  auto record = std::make_shared<LoweredValue>(fromTensor(v, dims));
  values[v] = record;
  return *record;
}

LoweredValue *Lowering::operand(Operation *op, unsigned i) {
  if (i >= op->getNumOperands() || isa<NoneType>(op->getOperand(i).getType())) return nullptr;
  return &lookup(op->getOperand(i));
}

void Lowering::define(Value result, LoweredValue value) {
  values[result] = std::make_shared<LoweredValue>(std::move(value));
}

void Lowering::alias(Value result, LoweredValue &source) {
  for (auto &[k, v] : values)
    if (v.get() == &source) {
      values[result] = v;
      return;
    }
}

LoweredValue Lowering::fromTensor(Value tensor, ArrayRef<Value> dims) {
  LoweredValue v;
  auto rt = cast<RankedTensorType>(tensor.getType());
  v.elementType = rt.getElementType();
  v.rank = rt.getRank();
  v.dims.assign(dims.begin(), dims.end());
  v.tensor = tensor;
  return v;
}

LoweredValue Lowering::fromHost(Type elementType, int64_t rank, ArrayRef<Value> elements) {
  LoweredValue v;
  v.elementType = elementType;
  v.rank = rank;
  if (rank == 1) v.dims.push_back(idx(elements.size()));
  v.host = SmallVector<Value>(elements.begin(), elements.end());
  return v;
}

Value Lowering::tensorOf(LoweredValue &v) {
  if (v.tensor) return v.tensor;
  RankedTensorType type = tensorType(v.dims, v.elementType);
  if (v.constant) {
    v.tensor = arith::ConstantOp::create(b, loc, type, v.constant);
    return v.tensor;
  }
  // Host values: a constant when all fold, else tensor.from_elements.
  SmallVector<APInt> consts;
  unsigned width = v.elementType.getIntOrFloatBitWidth();
  for (Value e : *v.host)
    if (auto c = constOf(e)) consts.push_back(APInt(width, *c, /*isSigned=*/true, /*implicitTrunc=*/true));
  if (consts.size() == v.host->size()) {
    v.tensor = arith::ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, consts));
    return v.tensor;
  }
  SmallVector<Value> elems;
  for (Value e : *v.host)
    elems.push_back(b.createOrFold<arith::IndexCastOp>(loc, v.elementType, e));
  v.tensor = tensor::FromElementsOp::create(b, loc, type, elems);
  return v.tensor;
}

FailureOr<SmallVector<Value>> Lowering::hostOf(LoweredValue &v, const Twine &what) {
  if (v.host) return *v.host;
  if (!isa<IntegerType>(v.elementType)) {
    (void)unsupported(what + " must be an integer tensor");
    return failure();
  }
  if (v.rank > 1) {
    (void)unsupported(what + " must have rank 0 or 1, got rank " + Twine(v.rank));
    return failure();
  }
  int64_t n = 1;
  if (v.rank == 1) {
    auto len = constOf(v.dims[0]);
    if (!len) {
      (void)unsupported(what + " must have a static length");
      return failure();
    }
    n = *len;
  }
  if (n > kMaxHostElements) {
    (void)unsupported(what + " has " + Twine(n) + " elements (at most " + Twine(kMaxHostElements) + ")");
    return failure();
  }
  Value t = tensorOf(v);
  SmallVector<Value> elems;
  for (int64_t i = 0; i < n; ++i) {
    SmallVector<Value> indices;
    if (v.rank == 1) indices.push_back(idx(i));
    elems.push_back(readbackScalar(t, indices));
  }
  v.host = elems;
  return elems;
}

Value Lowering::readbackScalar(Value tensor, ValueRange indices) {
  auto rb = ReadbackScalarOp::create(b, loc, b.getIndexType(), tensor, indices);
  if (knob == ::dq::InjectKnob::ReadbackWithoutSync) // the read no longer waits for the device
    rb->setAttr("unsynchronized", b.getUnitAttr());
  return rb;
}

FailureOr<SmallVector<int64_t>> Lowering::constantInts(LoweredValue &v) {
  SmallVector<int64_t> out;
  if (v.constant && isa<IntegerType>(v.elementType)) {
    for (const APInt &x : v.constant.getValues<APInt>())
      out.push_back(v.elementType.getIntOrFloatBitWidth() == 1 ? x.getZExtValue() : x.getSExtValue());
    return out;
  }
  if (!v.host) return failure();
  for (Value e : *v.host) {
    auto c = constOf(e);
    if (!c) return failure();
    out.push_back(*c);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Index arithmetic
//===----------------------------------------------------------------------===//

Value Lowering::idx(int64_t c) {
  // One constant per value, at the top of the function, so it dominates every use.
  Value &cached = indexConstants[c];
  if (!cached) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&func.getBody().front());
    cached = arith::ConstantIndexOp::create(b, func.getLoc(), c);
  }
  return cached;
}

std::optional<int64_t> Lowering::constOf(Value v) const {
  APInt value;
  if (v && matchPattern(v, m_ConstantInt(&value))) return value.getSExtValue();
  return std::nullopt;
}

bool Lowering::same(Value a, Value b) const {
  if (a == b) return true;
  auto ca = constOf(a), cb = constOf(b);
  return ca && cb && *ca == *cb;
}

bool Lowering::isNonNegative(Value v, int depth) const {
  if (auto c = constOf(v)) return *c >= 0;
  if (depth > 8) return false;
  Operation *def = v.getDefiningOp();
  if (!def) return false;
  if (isa<tensor::DimOp>(def)) return true;
  auto nn = [&](Value x) { return isNonNegative(x, depth + 1); };
  if (isa<arith::AddIOp, arith::MulIOp, arith::MinSIOp>(def)) return nn(def->getOperand(0)) && nn(def->getOperand(1));
  if (isa<arith::MaxSIOp>(def)) return nn(def->getOperand(0)) || nn(def->getOperand(1));
  if (isa<arith::DivSIOp, arith::CeilDivSIOp>(def)) return nn(def->getOperand(0)) && nn(def->getOperand(1));
  if (auto sel = dyn_cast<arith::SelectOp>(def)) return nn(sel.getTrueValue()) && nn(sel.getFalseValue());
  return false;
}

Value Lowering::add(Value a, Value c) { return b.createOrFold<arith::AddIOp>(loc, a, c); }
Value Lowering::sub(Value a, Value c) { return b.createOrFold<arith::SubIOp>(loc, a, c); }
Value Lowering::mul(Value a, Value c) { return b.createOrFold<arith::MulIOp>(loc, a, c); }
Value Lowering::divTrunc(Value a, Value c) { return b.createOrFold<arith::DivSIOp>(loc, a, c); }
Value Lowering::ceilDiv(Value a, Value c) { return b.createOrFold<arith::CeilDivSIOp>(loc, a, c); }
Value Lowering::min(Value a, Value c) {
  if (same(a, c)) return a;
  // min(0, dim) == 0.
  if (auto cc = constOf(c); cc && *cc == 0 && isNonNegative(a)) return c;
  if (auto ca = constOf(a); ca && *ca == 0 && isNonNegative(c)) return a;
  return b.createOrFold<arith::MinSIOp>(loc, a, c);
}
Value Lowering::max(Value a, Value c) {
  if (same(a, c)) return a;
  // max(dim, 0) == dim.
  if (auto cc = constOf(c); cc && *cc == 0 && isNonNegative(a)) return a;
  if (auto ca = constOf(a); ca && *ca == 0 && isNonNegative(c)) return c;
  return b.createOrFold<arith::MaxSIOp>(loc, a, c);
}

Value Lowering::eq(Value a, Value c) {
  if (same(a, c)) return arith::ConstantIntOp::create(b, loc, 1, 1);
  auto ca = constOf(a), cc = constOf(c);
  if ((ca && *ca < 0 && isNonNegative(c)) || (cc && *cc < 0 && isNonNegative(a)))
    return arith::ConstantIntOp::create(b, loc, 0, 1);
  return b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, a, c);
}

Value Lowering::lt(Value a, Value c) {
  auto cc = constOf(c);
  if (cc && *cc <= 0 && isNonNegative(a)) return arith::ConstantIntOp::create(b, loc, 0, 1);
  return b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, a, c);
}

Value Lowering::select(Value cond, Value a, Value c) {
  if (same(a, c)) return a;
  return b.createOrFold<arith::SelectOp>(loc, cond, a, c);
}

Value Lowering::boolToIndex(Value cond) { return select(cond, idx(1), idx(0)); }

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

RankedTensorType Lowering::tensorType(ArrayRef<Value> dims, Type elementType) {
  SmallVector<int64_t> shape;
  for (Value d : dims)
    shape.push_back(constOf(d).value_or(ShapedType::kDynamic));
  return RankedTensorType::get(shape, elementType);
}

Value Lowering::emptyTensor(ArrayRef<Value> dims, Type elementType) {
  SmallVector<Value> dynamic;
  for (Value d : dims)
    if (!constOf(d)) dynamic.push_back(d);
  return tensor::EmptyOp::create(b, loc, tensorType(dims, elementType), dynamic);
}

SmallVector<Value> Lowering::broadcastDims(ArrayRef<SmallVector<Value>> shapes) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<Value> out(rank);
  for (const auto &s : shapes) {
    size_t offset = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      Value d = s[i];
      Value &o = out[offset + i];
      if (!o) {
        o = d;
        continue;
      }
      auto co = constOf(o), cd = constOf(d);
      if (same(o, d) || (cd && *cd == 1)) continue;
      if (co && *co == 1) {
        o = d;
        continue;
      }
      if (co) // a static extent other than 1 is the result (d must be 1 or equal)
        continue;
      if (cd) {
        o = d;
        continue;
      }
      o = select(eq(o, idx(1)), d, o);
    }
  }
  return out;
}

Value Lowering::castTo(Value t, Type type) {
  if (t.getType() == type) return t;
  return tensor::CastOp::create(b, loc, type, t);
}

//===----------------------------------------------------------------------===//
// Attributes and diagnostics
//===----------------------------------------------------------------------===//

std::optional<int64_t> Lowering::intAttr(Operation *op, StringRef name) const {
  if (auto a = op->getAttrOfType<IntegerAttr>(name)) return a.getInt();
  return std::nullopt;
}

std::optional<SmallVector<int64_t>> Lowering::intsAttr(Operation *op, StringRef name) const {
  Attribute a = op->getAttr(name);
  if (auto arr = dyn_cast_or_null<DenseI64ArrayAttr>(a)) return SmallVector<int64_t>(arr.asArrayRef());
  if (auto arr = dyn_cast_or_null<ArrayAttr>(a)) {
    SmallVector<int64_t> out;
    for (Attribute e : arr)
      if (auto i = dyn_cast<IntegerAttr>(e)) out.push_back(i.getInt());
    return out;
  }
  if (auto dense = dyn_cast_or_null<DenseIntElementsAttr>(a)) {
    SmallVector<int64_t> out;
    for (const APInt &x : dense)
      out.push_back(x.getSExtValue());
    return out;
  }
  return std::nullopt;
}

LogicalResult Lowering::unsupported(const Twine &msg) { return current->emitError("unsupported: ") << msg; }

LogicalResult Lowering::error(const Twine &msg) { return current->emitError(msg); }

FailureOr<int64_t> Lowering::normalizeAxis(int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    (void)error("axis " + Twine(axis) + " is out of range for rank " + Twine(rank));
    return failure();
  }
  return a;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

static StringRef nodeName(Operation *op) {
  if (auto n = op->getAttrOfType<StringAttr>("onnx.name")) return n.getValue();
  return "<unnamed>";
}

LogicalResult Lowering::run(const llvm::StringMap<LowerFn> &table) {
  if (func.isExternal()) return success();
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    auto rt = dyn_cast<RankedTensorType>(arg.getType());
    if (!rt || !isSupportedElementType(rt.getElementType()))
      return func.emitError("unsupported: argument ")
             << arg.getArgNumber() << " has type " << arg.getType()
             << " (expected a ranked tensor of f32 f16 bf16 f64 i8 ui8 i32 i64 i1)";
  }

  SmallVector<Operation *> onnxOps;
  for (Operation &op : body) {
    StringRef name = op.getName().getStringRef();
    if (!name.starts_with("onnx.")) {
      if (isa<func::ReturnOp>(op)) continue;
      for (Value v : op.getOperands())
        if (v.getDefiningOp() && v.getDefiningOp()->getName().getStringRef().starts_with("onnx."))
          return op.emitError("unsupported: non-onnx op uses an onnx value");
      continue;
    }
    onnxOps.push_back(&op);
    if (name == "onnx.None") continue;
    current = &op;
    loc = op.getLoc();
    b.setInsertionPoint(&op);
    StringRef opType = name.drop_front(5);
    // Ops of another domain are keyed "domain.OpType" (com.microsoft.MatMulNBits).
    std::string key = opType.str();
    if (auto domain = op.getAttrOfType<StringAttr>("onnx.domain")) key = (domain.getValue() + "." + opType).str();
    auto it = table.find(key);
    if (it == table.end()) {
      if (op.hasAttr("onnx.domain"))
        return unsupported("op '" + key + "' in node '" + nodeName(&op) +
                           "' (of other domains only the onnxruntime contrib ops of docs/contrib-ops.md are)");
      return unsupported("ONNX op '" + opType + "' in node '" + nodeName(&op) + "'");
    }
    for (Value v : op.getOperands()) {
      if (isa<NoneType>(v.getType())) continue;
      if (!isa<RankedTensorType>(v.getType()) && !values.count(v))
        return unsupported("operand of type " + Twine(v.getType().getAbstractType().getName()) + " in node '" +
                           nodeName(&op) + "'");
    }
    if (failed(it->second(*this, &op))) return failure();
    for (Value r : op.getResults()) {
      auto found = values.find(r);
      if (found == values.end()) return error("internal: result of node '" + nodeName(&op) + "' was not lowered");
      if (!isSupportedElementType(found->second->elementType))
        return unsupported("element type in node '" + nodeName(&op) + "'");
    }
  }

  // Results: cast back to the declared types.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  b.setInsertionPoint(ret);
  loc = ret.getLoc();
  TypeRange declared = func.getFunctionType().getResults();
  for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
    Value v = ret.getOperand(i);
    if (!v.getDefiningOp() || !v.getDefiningOp()->getName().getStringRef().starts_with("onnx.")) continue;
    Value t = tensorOf(*values[v]);
    if (t.getType() != declared[i]) {
      if (!tensor::CastOp::areCastCompatible(t.getType(), declared[i]))
        return ret.emitError("graph output ")
               << i << ": computed type " << t.getType() << " is incompatible with the declared type " << declared[i];
      t = tensor::CastOp::create(b, loc, declared[i], t);
    }
    ret.setOperand(i, t);
  }

  for (Operation *op : llvm::reverse(onnxOps)) {
    op->dropAllUses();
    op->erase();
  }
  // Drop host arithmetic that ended up unused.
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op)) op->erase();
  return success();
}

namespace {
struct ConvertONNXToDQPass : public mlir::dq::impl::ConvertONNXToDQBase<ConvertONNXToDQPass> {
  using ConvertONNXToDQBase::ConvertONNXToDQBase;
  void runOnOperation() override {
    using ::dq::InjectKnob;
    FailureOr<std::optional<InjectKnob>> knob = mlir::dq::parseInjectOption(
        getOperation(), "dq-convert-onnx", inject,
        {InjectKnob::ReshapeByTypeEquality, InjectKnob::SliceUpperBound, InjectKnob::SplitDimSizeAlias,
         InjectKnob::ReadbackWithoutSync, InjectKnob::GqaIgnoresSeqlens, InjectKnob::NBitsZeroPointPitch,
         InjectKnob::RotaryLayoutSwap});
    if (failed(knob)) return signalPassFailure();
    llvm::StringMap<LowerFn> table;
    addDataMovementLowerings(table);
    addComputeLowerings(table);
    addTransformerLowerings(table);
    addElementwiseAttrLowerings(table);
    addIndexLowerings(table);
    addDataDependentLowerings(table);
    addContribLowerings(table);
    for (auto func : llvm::make_early_inc_range(getOperation().getOps<func::FuncOp>())) {
      Lowering lowering(func);
      lowering.knob = *knob;
      lowering.views = views;
      if (failed(lowering.run(table))) return signalPassFailure();
    }
  }
};
} // namespace
