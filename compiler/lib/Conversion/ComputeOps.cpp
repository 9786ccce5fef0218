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
  return it && it.isSignless() && (it.getWidth() == 1 || it.getWidth() == 32 ||
                                   it.getWidth() == 64);
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
    value = DenseElementsAttr::get(RankedTensorType::get({(int64_t)is->size()}, b.getI64Type()),
                                   ArrayRef<int64_t>(*is));
  } else if (auto f = op->getAttrOfType<FloatAttr>("value_float")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                   (float)f.getValueAsDouble());
  } else if (auto fs = op->getAttrOfType<DenseF32ArrayAttr>("value_floats")) {
    value = DenseElementsAttr::get(RankedTensorType::get({(int64_t)fs.size()}, b.getF32Type()),
                                   fs.asArrayRef());
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
  if (!to)
    return L.error("Cast has no 'to' attribute");
  Type outType = elementTypeForOnnxCode(op->getContext(), *to);
  if (!outType)
    return L.unsupported("Cast to ONNX dtype " + Twine(*to));
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
  auto t = ElementwiseOp::create(L.b, L.loc, TypeRange{init.getType()}, "cast",
                                 ValueRange{L.tensorOf(in)}, ValueRange{init});
  L.define(op->getResult(0), L.fromTensor(t.getResult(0), in.dims));
  return success();
}

/// Add Sub Mul Div Equal Where: on host values when every input is one and the result is a
/// short vector, else dq.elementwise on the broadcast shape.
LogicalResult lowerElementwise(Lowering &L, Operation *op) {
  StringRef opType = op->getName().getStringRef().drop_front(5);
  std::string kind = opType.lower();
  unsigned arity = kind == "where" ? 3 : 2;
  SmallVector<LoweredValue *> ins;
  for (unsigned i = 0; i < arity; ++i) {
    LoweredValue *v = L.operand(op, i);
    if (!v)
      return L.error(opType + " expects " + Twine(arity) + " inputs");
    ins.push_back(v);
  }
  LoweredValue &data = *ins[kind == "where" ? 1 : 0];
  for (unsigned i = kind == "where" ? 1 : 0; i < arity; ++i)
    if (ins[i]->elementType != data.elementType)
      return L.error(opType + ": inputs differ in element type");
  if (kind == "where" && !ins[0]->elementType.isInteger(1))
    return L.error("Where: the condition must be bool");
  Type outType = kind == "equal" ? L.b.getI1Type() : data.elementType;

  SmallVector<SmallVector<Value>> shapes;
  for (LoweredValue *v : ins)
    shapes.push_back(v->dims);
  SmallVector<Value> out = L.broadcastDims(shapes);

  bool allHost = llvm::all_of(ins, [](LoweredValue *v) {
    return v->host && isHostType(v->elementType);
  });
  if (allHost && out.size() <= 1) {
    int64_t n = out.empty() ? 1 : L.constOf(out[0]).value_or(-1);
    if (n >= 0 && n <= kMaxHostElements) {
      SmallVector<Value> elems;
      for (int64_t i = 0; i < n; ++i) {
        auto at = [&](unsigned k) {
          auto &h = *ins[k]->host;
          return h[h.size() == 1 ? 0 : i];
        };
        Value r;
        if (kind == "add")
          r = L.add(at(0), at(1));
        else if (kind == "sub")
          r = L.sub(at(0), at(1));
        else if (kind == "mul")
          r = L.mul(at(0), at(1));
        else if (kind == "div") {
          if (auto c = L.constOf(at(1)); c && *c == 0)
            return L.error("Div: integer division by zero");
          r = L.divTrunc(at(0), at(1));
        } else if (kind == "equal")
          r = L.boolToIndex(L.eq(at(0), at(1)));
        else
          r = L.select(L.eq(at(0), L.idx(0)), at(2), at(1));
        elems.push_back(r);
      }
      L.define(op->getResult(0), L.fromHost(outType, out.size(), elems));
      return success();
    }
  }
  SmallVector<Value> tensors;
  for (LoweredValue *v : ins)
    tensors.push_back(L.tensorOf(*v));
  Value init = L.emptyTensor(out, outType);
  auto t = ElementwiseOp::create(L.b, L.loc, TypeRange{init.getType()}, kind, tensors,
                                 ValueRange{init});
  L.define(op->getResult(0), L.fromTensor(t.getResult(0), out));
  return success();
}

LogicalResult lowerConstantOfShape(Lowering &L, Operation *op) {
  auto shape = L.hostOf(*L.operand(op, 0), "shape of ConstantOfShape");
  if (failed(shape))
    return failure();
  TypedAttr scalar = L.b.getF32FloatAttr(0.0f);
  if (Attribute a = op->getAttr("value")) {
    auto dense = dyn_cast<DenseElementsAttr>(a);
    if (!dense || dense.getNumElements() != 1)
      return L.error("ConstantOfShape: 'value' must be a one-element tensor");
    scalar = cast<TypedAttr>(*dense.value_begin<Attribute>());
  }
  Type et = scalar.getType();
  if (L.operand(op, 0)->rank != 1)
    return L.error("ConstantOfShape: the shape input must be 1-D");
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
  auto t = FillOp::create(L.b, L.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
                          scalar);
  L.define(op->getResult(0), L.fromTensor(t.getResult(0), dims));
  return success();
}

LogicalResult lowerRange(Lowering &L, Operation *op) {
  LoweredValue *start = L.operand(op, 0), *limit = L.operand(op, 1), *delta = L.operand(op, 2);
  if (!start || !limit || !delta)
    return L.error("Range expects start, limit and delta");
  if (start->rank != 0 || limit->rank != 0 || delta->rank != 0)
    return L.error("Range: start, limit and delta must be scalars");
  Type et = start->elementType;
  Value len;
  if (isa<IntegerType>(et)) {
    auto s = L.hostOf(*start, "start of Range");
    if (failed(s))
      return failure();
    auto l = L.hostOf(*limit, "limit of Range");
    if (failed(l))
      return failure();
    auto d = L.hostOf(*delta, "delta of Range");
    if (failed(d))
      return failure();
    Value s0 = (*s)[0], l0 = (*l)[0], d0 = (*d)[0];
    if (auto c = L.constOf(d0); c && *c == 0)
      return L.error("Range: delta must not be 0");
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
    if (!start->constant || !limit->constant || !delta->constant)
      return L.unsupported("Range on floating-point inputs that are not constants");
    auto val = [](LoweredValue *v) {
      return (*v->constant.value_begin<APFloat>()).convertToDouble();
    };
    double s = val(start), l = val(limit), d = val(delta);
    if (d == 0)
      return L.error("Range: delta must not be 0");
    len = L.idx(std::max<int64_t>((int64_t)std::ceil((l - s) / d), 0));
  }
  SmallVector<Value> dims{len};
  Value init = L.emptyTensor(dims, et);
  auto t = RangeOp::create(L.b, L.loc, TypeRange{init.getType()},
                           ValueRange{L.tensorOf(*start), L.tensorOf(*delta)}, ValueRange{init});
  L.define(op->getResult(0), L.fromTensor(t.getResult(0), dims));
  return success();
}

} // namespace

void onnx_lowering::addComputeLowerings(llvm::StringMap<LowerFn> &table) {
  table["Constant"] = lowerConstant;
  table["Identity"] = lowerIdentity;
  table["Cast"] = lowerCast;
  for (const char *name : {"Add", "Sub", "Mul", "Div", "Equal", "Where"})
    table[name] = lowerElementwise;
  table["ConstantOfShape"] = lowerConstantOfShape;
  table["Range"] = lowerRange;
}
