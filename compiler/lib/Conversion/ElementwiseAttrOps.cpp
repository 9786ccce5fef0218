//===- ElementwiseAttrOps.cpp - Clip, LeakyRelu, Mod, Mean, CastLike -> dq ===//
//
// Elementwise ops whose ONNX form carries attributes, optional bounds or a variable input count.
// They lower to the Program.h elementwise kernels (max / min / add / div / mod / fmod / cast) or,
// for LeakyRelu, to the leaky_relu kernel with alpha as a float immediate.
//
//===----------------------------------------------------------------------===//
#include "ONNXLowering.h"

#include "dq/Dialect/DQDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::dq;
using namespace mlir::dq::onnx_lowering;

namespace {

int64_t opsetOf(Operation *op) {
  if (auto m = op->getParentOfType<ModuleOp>())
    if (auto a = m->getAttrOfType<IntegerAttr>("onnx.opset")) return a.getInt();
  return 0;
}

/// dq.elementwise `kind` on `ins` (numpy broadcast) with result element type `outType`.
LoweredValue elementwise(Lowering &L, StringRef kind, ArrayRef<LoweredValue *> ins, Type outType) {
  SmallVector<SmallVector<Value>> shapes;
  SmallVector<Value> tensors;
  for (LoweredValue *v : ins) {
    shapes.push_back(v->dims);
    tensors.push_back(L.tensorOf(*v));
  }
  SmallVector<Value> out = L.broadcastDims(shapes);
  Value init = L.emptyTensor(out, outType);
  auto t = ElementwiseOp::create(L.b, L.loc, TypeRange{init.getType()}, kind, tensors, ValueRange{init});
  return L.fromTensor(t.getResult(0), out);
}

/// A rank-0 constant `value` of float type `et`.
LoweredValue floatConstant(Lowering &L, Type et, double value) {
  auto type = RankedTensorType::get({}, et);
  Value c =
      arith::ConstantOp::create(L.b, L.loc, type, DenseElementsAttr::get(type, L.b.getFloatAttr(et, value).getValue()));
  return L.fromTensor(c, {});
}

/// Clip = min(max(x, lo), hi) (numpy clip: hi wins when lo > hi; NaN stays NaN). Bounds are
/// optional inputs from opset 11 and float attributes before.
LogicalResult lowerClip(Lowering &L, Operation *op) {
  LoweredValue &x = *L.operand(op, 0);
  if (x.elementType.isInteger(1)) return L.error("Clip: the input must be numeric, not bool");
  LoweredValue acc = x;
  bool bounded = false;
  auto apply = [&](StringRef kind, LoweredValue &bound) -> LogicalResult {
    if (bound.elementType != x.elementType) return L.error("Clip: a bound differs from the input in element type");
    if (bound.rank != 0 && !(bound.rank == 1 && L.constOf(bound.dims[0]) == 1))
      return L.error("Clip: min and max must be scalars");
    acc = elementwise(L, kind, {&acc, &bound}, x.elementType);
    bounded = true;
    return success();
  };
  if (opsetOf(op) < 11) {
    if (!isa<FloatType>(x.elementType)) return L.unsupported("Clip before opset 11 on a non-float input");
    for (auto [name, kind] : {std::pair<StringRef, StringRef>{"min", "max"}, {"max", "min"}})
      if (auto a = op->getAttrOfType<FloatAttr>(name)) {
        LoweredValue c = floatConstant(L, x.elementType, a.getValueAsDouble());
        if (failed(apply(kind, c))) return failure();
      }
  } else {
    if (LoweredValue *lo = L.operand(op, 1))
      if (failed(apply("max", *lo))) return failure();
    if (LoweredValue *hi = L.operand(op, 2))
      if (failed(apply("min", *hi))) return failure();
  }
  if (!bounded)
    L.alias(op->getResult(0), x);
  else
    L.define(op->getResult(0), acc);
  return success();
}

/// LeakyRelu: x < 0 ? alpha * x : x (alpha defaults to 0.01).
LogicalResult lowerLeakyRelu(Lowering &L, Operation *op) {
  LoweredValue &x = *L.operand(op, 0);
  if (!isa<FloatType>(x.elementType)) return L.error("LeakyRelu: the input must be a float tensor");
  double alpha = 0.01f;
  if (auto a = op->getAttrOfType<FloatAttr>("alpha")) alpha = a.getValueAsDouble();
  Value init = L.emptyTensor(x.dims, x.elementType);
  auto k = KernelOp::create(L.b, L.loc, TypeRange{init.getType()}, "leaky_relu", ValueRange{L.tensorOf(x)},
                            ValueRange{init}, ValueRange{}, ArrayRef<int64_t>{}, ArrayRef<double>{alpha});
  L.define(op->getResult(0), L.fromTensor(k.getResult(0), x.dims));
  return success();
}

/// Mod: fmod = 0 is the integer remainder with the divisor's sign ("mod"); fmod = 1 the
/// remainder with the dividend's sign ("fmod"), the only form ONNX allows for floats.
LogicalResult lowerMod(Lowering &L, Operation *op) {
  LoweredValue &a = *L.operand(op, 0), &b = *L.operand(op, 1);
  if (a.elementType != b.elementType) return L.error("Mod: inputs differ in element type");
  if (a.elementType.isInteger(1)) return L.error("Mod: inputs must be numeric, not bool");
  int64_t fmod = L.intAttr(op, "fmod").value_or(0);
  if (fmod != 0 && fmod != 1) return L.error("Mod: fmod must be 0 or 1");
  if (fmod == 0 && isa<FloatType>(a.elementType))
    return L.unsupported("Mod with fmod = 0 on float inputs (ONNX requires fmod = 1 for floats)");
  L.define(op->getResult(0), elementwise(L, fmod ? "fmod" : "mod", {&a, &b}, a.elementType));
  return success();
}

/// Mean = (x0 + x1 + ...) / n, summed left to right in the element type as ONNX does.
LogicalResult lowerMean(Lowering &L, Operation *op) {
  SmallVector<LoweredValue *> ins;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    if (LoweredValue *v = L.operand(op, i)) ins.push_back(v);
  if (ins.empty()) return L.error("Mean expects at least one input");
  Type et = ins[0]->elementType;
  if (!isa<FloatType>(et)) return L.error("Mean: inputs must be float tensors");
  for (LoweredValue *v : ins)
    if (v->elementType != et) return L.error("Mean: inputs differ in element type");
  if (ins.size() == 1) {
    L.alias(op->getResult(0), *ins[0]);
    return success();
  }
  LoweredValue acc = *ins[0];
  for (size_t i = 1; i < ins.size(); ++i)
    acc = elementwise(L, "add", {&acc, ins[i]}, et);
  LoweredValue n = floatConstant(L, et, (double)ins.size());
  L.define(op->getResult(0), elementwise(L, "div", {&acc, &n}, et));
  return success();
}

/// CastLike: Cast to the element type of the second input.
LogicalResult lowerCastLike(Lowering &L, Operation *op) {
  LoweredValue &in = *L.operand(op, 0), &like = *L.operand(op, 1);
  if (auto s = L.intAttr(op, "saturate"); s && *s != 1) return L.unsupported("CastLike with saturate = 0");
  if (like.elementType == in.elementType) {
    L.alias(op->getResult(0), in);
    return success();
  }
  L.define(op->getResult(0), elementwise(L, "cast", {&in}, like.elementType));
  return success();
}

} // namespace

void onnx_lowering::addElementwiseAttrLowerings(llvm::StringMap<LowerFn> &table) {
  table["Clip"] = lowerClip;
  table["LeakyRelu"] = lowerLeakyRelu;
  table["Mod"] = lowerMod;
  table["Mean"] = lowerMean;
  table["CastLike"] = lowerCastLike;
}
