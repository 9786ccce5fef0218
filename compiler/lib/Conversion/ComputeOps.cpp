//===- ComputeOps.cpp - elementwise, Cast, constants and Range -> dq/arith ===//
#include "ONNXLowering.h"

#include "dq/Dialect/DQDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dq;
using namespace mlir::dq::onnx_lowering;

namespace {

/// Element types whose small rank-0/1 tensors are tracked as host values.
bool isHostType(Type t) {
  auto it = dyn_cast<IntegerType>(t);
  return it && it.isSignless() && (it.getWidth() == 1 || it.getWidth() == 32 || it.getWidth() == 64);
}

LoweredValue fromConstant(Lowering &L, DenseElementsAttr value) {
  auto type = cast<RankedTensorType>(value.getType());
  LoweredValue v;
  v.elementType = type.getElementType();
  v.rank = type.getRank();
  for (int64_t d : type.getShape())
    v.dims.push_back(L.idx(d));
  v.constant = value;
  if (isHostType(v.elementType) && v.rank <= 1 && value.getNumElements() <= kMaxHostElements) {
    bool isBool = v.elementType.isInteger(1);
    SmallVector<Value> elems;
    for (const APInt &x : value.getValues<APInt>())
      elems.push_back(L.idx(isBool ? (int64_t)x.getZExtValue() : x.getSExtValue()));
    v.host = elems;
  }
  return v;
}

LogicalResult lowerConstant(Lowering &L, Operation *op) {
  Builder &b = L.b;
  DenseElementsAttr value;
  if (auto a = op->getAttrOfType<DenseElementsAttr>("value")) {
    value = a;
  } else if (auto i = L.intAttr(op, "value_int")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()), b.getI64IntegerAttr(*i).getValue());
  } else if (auto is = L.intsAttr(op, "value_ints")) {
    value =
        DenseElementsAttr::get(RankedTensorType::get({(int64_t)is->size()}, b.getI64Type()), ArrayRef<int64_t>(*is));
  } else if (auto f = op->getAttrOfType<FloatAttr>("value_float")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()), (float)f.getValueAsDouble());
  } else if (auto fs = op->getAttrOfType<DenseF32ArrayAttr>("value_floats")) {
    value = DenseElementsAttr::get(RankedTensorType::get({(int64_t)fs.size()}, b.getF32Type()), fs.asArrayRef());
  } else {
    return L.unsupported("Constant without a dense tensor value (sparse or string values)");
  }
  L.define(op->getResult(0), fromConstant(L, value));
  return success();
}

LogicalResult lowerIdentity(Lowering &L, Operation *op) {
  L.alias(op->getResult(0), *L.operand(op, 0));
  return success();
}

LogicalResult lowerCast(Lowering &L, Operation *op) {
  LoweredValue &in = *L.operand(op, 0);
  auto to = L.intAttr(op, "to");
  if (!to) return L.error("Cast has no 'to' attribute");
  Type outType = elementTypeForOnnxCode(op->getContext(), *to);
  if (!outType) return L.unsupported("Cast to ONNX dtype " + Twine(*to));
  if (outType == in.elementType) {
    L.alias(op->getResult(0), in);
    return success();
  }
  if (in.host && isHostType(outType)) {
    SmallVector<Value> elems;
    for (Value x : *in.host)
      elems.push_back(outType.isInteger(1) ? L.select(L.eq(x, L.idx(0)), L.idx(0), L.idx(1)) : x);
    L.define(op->getResult(0), L.fromHost(outType, in.rank, elems));
    return success();
  }
  Value init = L.emptyTensor(in.dims, outType);
  auto t = ElementwiseOp::create(L.b, L.loc, TypeRange{init.getType()}, "cast", ValueRange{L.tensorOf(in)},
                                 ValueRange{init});
  L.define(op->getResult(0), L.fromTensor(t.getResult(0), in.dims));
  return success();
}

/// Kernel name of an ONNX elementwise op type, its arity (0 = variadic) and whether its output
/// is bool.
struct ElementwiseKind {
  const char *onnx;
  const char *kernel;
  unsigned arity;
  bool boolOut;
};
constexpr ElementwiseKind kElementwiseKinds[] = {
    {"Add", "add", 2, false},
    {"Sub", "sub", 2, false},
    {"Mul", "mul", 2, false},
    {"Div", "div", 2, false},
    {"Equal", "equal", 2, true},
    {"Where", "where", 3, false},
    {"Pow", "pow", 2, false},
    {"Max", "max", 0, false},
    {"Min", "min", 0, false},
    {"And", "and", 2, false},
    {"Or", "or", 2, false},
    {"Less", "less", 2, true},
    {"LessOrEqual", "less_equal", 2, true},
    {"Greater", "greater", 2, true},
    {"GreaterOrEqual", "greater_equal", 2, true},
    {"Neg", "neg", 1, false},
    {"Sqrt", "sqrt", 1, false},
    {"Reciprocal", "reciprocal", 1, false},
    {"Sigmoid", "sigmoid", 1, false},
    {"Tanh", "tanh", 1, false},
    {"Erf", "erf", 1, false},
    {"Exp", "exp", 1, false},
    {"Cos", "cos", 1, false},
    {"Sin", "sin", 1, false},
    {"Not", "not", 1, false},
    {"IsNaN", "isnan", 1, true},
    {"Relu", "relu", 1, false},
    {"Abs", "abs", 1, false},
    {"Log", "log", 1, false},
    {"Floor", "floor", 1, false},
    {"Ceil", "ceil", 1, false},
    {"Round", "round", 1, false},
    {"Sign", "sign", 1, false},
    {"Xor", "xor", 2, false},
    {"Sum", "add", 0, false},
};

const ElementwiseKind *findKind(StringRef opType) {
  for (const ElementwiseKind &k : kElementwiseKinds)
    if (opType == k.onnx) return &k;
  return nullptr;
}

/// One host element of `kind` over index values, or null when the kind has no host form.
Value hostElement(Lowering &L, StringRef kind, ArrayRef<Value> x) {
  auto cmp = [&](arith::CmpIPredicate p) {
    return L.boolToIndex(L.b.createOrFold<arith::CmpIOp>(L.loc, p, x[0], x[1]));
  };
  if (kind == "add") return L.add(x[0], x[1]);
  if (kind == "sub") return L.sub(x[0], x[1]);
  if (kind == "mul") return L.mul(x[0], x[1]);
  if (kind == "div") return L.divTrunc(x[0], x[1]);
  if (kind == "equal") return L.boolToIndex(L.eq(x[0], x[1]));
  if (kind == "where") return L.select(L.eq(x[0], L.idx(0)), x[2], x[1]);
  if (kind == "max") return L.max(x[0], x[1]);
  if (kind == "min") return L.min(x[0], x[1]);
  if (kind == "and") return L.mul(x[0], x[1]);
  if (kind == "or") return L.max(x[0], x[1]);
  if (kind == "not") return L.sub(L.idx(1), x[0]);
  if (kind == "neg") return L.sub(L.idx(0), x[0]);
  if (kind == "less") return cmp(arith::CmpIPredicate::slt);
  if (kind == "less_equal") return cmp(arith::CmpIPredicate::sle);
  if (kind == "greater") return cmp(arith::CmpIPredicate::sgt);
  if (kind == "greater_equal") return cmp(arith::CmpIPredicate::sge);
  return {};
}

/// `kind` over `ins` (already checked): host values when every input is one, the kind has a
/// host form and the result is a short vector; else dq.elementwise on the broadcast shape.
FailureOr<LoweredValue> elementwise(Lowering &L, StringRef kind, ArrayRef<LoweredValue *> ins, Type outType) {
  SmallVector<SmallVector<Value>> shapes;
  for (LoweredValue *v : ins)
    shapes.push_back(v->dims);
  SmallVector<Value> out = L.broadcastDims(shapes);

  bool allHost = llvm::all_of(ins, [](LoweredValue *v) { return v->host && isHostType(v->elementType); });
  if (allHost && isHostType(outType) && out.size() <= 1) {
    int64_t n = out.empty() ? 1 : L.constOf(out[0]).value_or(-1);
    if (n >= 0 && n <= kMaxHostElements) {
      SmallVector<Value> elems;
      bool ok = true;
      for (int64_t i = 0; i < n && ok; ++i) {
        SmallVector<Value> x;
        for (LoweredValue *v : ins) {
          auto &h = *v->host;
          x.push_back(h[h.size() == 1 ? 0 : i]);
        }
        if (kind == "div")
          if (auto c = L.constOf(x[1]); c && *c == 0) {
            (void)L.error("Div: integer division by zero");
            return failure();
          }
        Value r = hostElement(L, kind, x);
        ok = (bool)r;
        elems.push_back(r);
      }
      if (ok) return L.fromHost(outType, out.size(), elems);
    }
  }
  SmallVector<Value> tensors;
  for (LoweredValue *v : ins)
    tensors.push_back(L.tensorOf(*v));
  Value init = L.emptyTensor(out, outType);
  auto t = ElementwiseOp::create(L.b, L.loc, TypeRange{init.getType()}, kind, tensors, ValueRange{init});
  return L.fromTensor(t.getResult(0), out);
}

/// Every ONNX elementwise op of kElementwiseKinds; Max / Min with several inputs chain binary
/// ops, with one input they forward it.
LogicalResult lowerElementwise(Lowering &L, Operation *op) {
  StringRef opType = op->getName().getStringRef().drop_front(5);
  const ElementwiseKind &k = *findKind(opType);
  StringRef kind = k.kernel;
  SmallVector<LoweredValue *> ins;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    if (LoweredValue *v = L.operand(op, i)) ins.push_back(v);
  if (k.arity ? ins.size() != k.arity : ins.empty())
    return L.error(opType + " expects " + (k.arity ? Twine(k.arity) : Twine("at least one")) + " inputs, got " +
                   Twine(ins.size()));
  bool isWhere = kind == "where";
  LoweredValue &data = *ins[isWhere ? 1 : 0];
  if (kind != "pow")
    for (unsigned i = isWhere ? 1 : 0; i < ins.size(); ++i)
      if (ins[i]->elementType != data.elementType) return L.error(opType + ": inputs differ in element type");
  if (isWhere && !ins[0]->elementType.isInteger(1)) return L.error("Where: the condition must be bool");
  if ((kind == "and" || kind == "or" || kind == "not" || kind == "xor") && !data.elementType.isInteger(1))
    return L.error(opType + ": inputs must be bool");
  Type outType = k.boolOut ? L.b.getI1Type() : data.elementType;
  if (k.arity == 0 && ins.size() == 1) {
    L.alias(op->getResult(0), *ins[0]);
    return success();
  }
  if (k.arity == 0) {
    LoweredValue acc = *ins[0];
    for (unsigned i = 1; i < ins.size(); ++i) {
      auto next = elementwise(L, kind, {&acc, ins[i]}, outType);
      if (failed(next)) return failure();
      acc = *next;
    }
    L.define(op->getResult(0), acc);
    return success();
  }
  auto r = elementwise(L, kind, ins, outType);
  if (failed(r)) return failure();
  L.define(op->getResult(0), *r);
  return success();
}

LogicalResult lowerConstantOfShape(Lowering &L, Operation *op) {
  auto shape = L.hostOf(*L.operand(op, 0), "shape of ConstantOfShape");
  if (failed(shape)) return failure();
  TypedAttr scalar = L.b.getF32FloatAttr(0.0f);
  if (Attribute a = op->getAttr("value")) {
    auto dense = dyn_cast<DenseElementsAttr>(a);
    if (!dense || dense.getNumElements() != 1) return L.error("ConstantOfShape: 'value' must be a one-element tensor");
    scalar = cast<TypedAttr>(*dense.value_begin<Attribute>());
  }
  Type et = scalar.getType();
  if (L.operand(op, 0)->rank != 1) return L.error("ConstantOfShape: the shape input must be 1-D");
  SmallVector<Value> dims = *shape;
  if (isHostType(et) && dims.size() == 1) {
    auto n = L.constOf(dims[0]);
    if (n && *n <= kMaxHostElements) {
      auto ia = cast<IntegerAttr>(scalar);
      int64_t v = et.isInteger(1) ? (int64_t)ia.getValue().getZExtValue() : ia.getInt();
      SmallVector<Value> elems(*n, L.idx(v));
      L.define(op->getResult(0), L.fromHost(et, 1, elems));
      return success();
    }
  }
  Value init = L.emptyTensor(dims, et);
  auto t = FillOp::create(L.b, L.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, scalar);
  L.define(op->getResult(0), L.fromTensor(t.getResult(0), dims));
  return success();
}

LogicalResult lowerRange(Lowering &L, Operation *op) {
  LoweredValue *start = L.operand(op, 0), *limit = L.operand(op, 1), *delta = L.operand(op, 2);
  if (!start || !limit || !delta) return L.error("Range expects start, limit and delta");
  if (start->rank != 0 || limit->rank != 0 || delta->rank != 0)
    return L.error("Range: start, limit and delta must be scalars");
  Type et = start->elementType;
  Value len;
  if (isa<IntegerType>(et)) {
    auto s = L.hostOf(*start, "start of Range");
    if (failed(s)) return failure();
    auto l = L.hostOf(*limit, "limit of Range");
    if (failed(l)) return failure();
    auto d = L.hostOf(*delta, "delta of Range");
    if (failed(d)) return failure();
    Value s0 = (*s)[0], l0 = (*l)[0], d0 = (*d)[0];
    if (auto c = L.constOf(d0); c && *c == 0) return L.error("Range: delta must not be 0");
    len = L.max(L.ceilDiv(L.sub(l0, s0), d0), L.idx(0));
    auto n = L.constOf(len);
    if (isHostType(et) && n && *n <= kMaxHostElements) {
      SmallVector<Value> elems;
      for (int64_t i = 0; i < *n; ++i)
        elems.push_back(L.add(s0, L.mul(L.idx(i), d0)));
      L.define(op->getResult(0), L.fromHost(et, 1, elems));
      return success();
    }
  } else {
    if (!start->constant || !limit->constant || !delta->constant) {
      // The count depends on float values known only at run time: count on the device, read
      // the one i64 back.
      Value countInit = L.emptyTensor({}, L.b.getI64Type());
      auto count = KernelOp::create(L.b, L.loc, TypeRange{countInit.getType()}, "range_length",
                                    ValueRange{L.tensorOf(*start), L.tensorOf(*limit), L.tensorOf(*delta)},
                                    ValueRange{countInit}, ValueRange{});
      len = L.readbackScalar(count.getResult(0), ValueRange{});
      SmallVector<Value> dims{len};
      Value init = L.emptyTensor(dims, et);
      auto t = RangeOp::create(L.b, L.loc, TypeRange{init.getType()},
                               ValueRange{L.tensorOf(*start), L.tensorOf(*delta)}, ValueRange{init});
      L.define(op->getResult(0), L.fromTensor(t.getResult(0), dims));
      return success();
    }
    auto val = [](LoweredValue *v) { return (*v->constant.value_begin<APFloat>()).convertToDouble(); };
    double s = val(start), l = val(limit), d = val(delta);
    if (d == 0) return L.error("Range: delta must not be 0");
    len = L.idx(std::max<int64_t>((int64_t)std::ceil((l - s) / d), 0));
  }
  SmallVector<Value> dims{len};
  Value init = L.emptyTensor(dims, et);
  auto t = RangeOp::create(L.b, L.loc, TypeRange{init.getType()}, ValueRange{L.tensorOf(*start), L.tensorOf(*delta)},
                           ValueRange{init});
  L.define(op->getResult(0), L.fromTensor(t.getResult(0), dims));
  return success();
}

} // namespace

void onnx_lowering::addComputeLowerings(llvm::StringMap<LowerFn> &table) {
  table["Constant"] = lowerConstant;
  table["Identity"] = lowerIdentity;
  table["Cast"] = lowerCast;
  for (const ElementwiseKind &k : kElementwiseKinds)
    table[k.onnx] = lowerElementwise;
  table["ConstantOfShape"] = lowerConstantOfShape;
  table["Range"] = lowerRange;
}
