//===- DataDependentOps.cpp - NonZero, Compress, TopK, Tile, Pad, Scatter -> dq ===//
//
// Data-dependent extents (NonZero, Compress): a count kernel writes the element count into a
// one-element device tensor, one dq.readback_scalar brings it to the host, and the result is a
// fresh tensor.empty with exactly that extent, filled by a second kernel. Bufferization turns the
// tensor.empty into an allocation sized by the read-back value (dq.alloc_output when it is a graph
// output), so no capacity buffer or view of one ever exists. Extents from shape inputs (TopK's k,
// Tile's repeats, Pad's pads) are host values: folded shape arithmetic, else one readback per
// element (Lowering::hostOf).
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

Type i64Type(Lowering &L) { return L.b.getIntegerType(64); }

/// dq.kernel `name` on `ins` with one fresh init per (dims, element type) pair; returns results.
SmallVector<Value> kernelOuts(Lowering &L, StringRef name, ArrayRef<Value> ins,
                              ArrayRef<std::pair<SmallVector<Value>, Type>> outs, ArrayRef<int64_t> imm = {},
                              ArrayRef<Value> scalars = {}) {
  SmallVector<Value> inits;
  SmallVector<Type> types;
  for (const auto &[dims, et] : outs) {
    inits.push_back(L.emptyTensor(dims, et));
    types.push_back(inits.back().getType());
  }
  auto k = KernelOp::create(L.b, L.loc, types, name, ins, inits, scalars, imm, ArrayRef<double>{});
  return SmallVector<Value>(k.getResults().begin(), k.getResults().end());
}

/// The number of nonzero elements of `t`: "count_nonzero" into a rank-0 i64 device tensor, then
/// one synchronized readback (the only readback of a data-dependent op).
Value readCount(Lowering &L, Value t) {
  Value count = kernelOuts(L, "count_nonzero", {t}, {{{}, i64Type(L)}})[0];
  return ReadbackScalarOp::create(L.b, L.loc, L.b.getIndexType(), count, ValueRange{});
}

/// NonZero-9/13: out i64[rank, n] with n read back from the count kernel.
LogicalResult lowerNonZero(Lowering &L, Operation *op) {
  LoweredValue &x = *L.operand(op, 0);
  Value xt = L.tensorOf(x);
  Value n = readCount(L, xt);
  SmallVector<Value> dims = {L.idx(x.rank), n};
  L.define(op->getResult(0), L.fromTensor(kernelOuts(L, "nonzero", {xt}, {{dims, i64Type(L)}})[0], dims));
  return success();
}

/// Compress-9/11: without axis the input is flattened first; the kept extent is read back.
LogicalResult lowerCompress(Lowering &L, Operation *op) {
  LoweredValue &data = *L.operand(op, 0), &cond = *L.operand(op, 1);
  if (cond.rank != 1) return L.error("Compress: the condition must have rank 1, got rank " + Twine(cond.rank));
  LoweredValue in = data;
  int64_t axis = 0;
  if (auto a = L.intAttr(op, "axis")) {
    auto n = L.normalizeAxis(*a, data.rank);
    if (failed(n)) return failure();
    axis = *n;
  } else {
    Value numel = L.idx(1);
    for (Value d : data.dims)
      numel = L.mul(numel, d);
    auto flat = reshapeTensor(L, data, {numel});
    if (failed(flat)) return failure();
    in = L.fromTensor(*flat, {numel});
  }
  Value ct = L.tensorOf(cond);
  Value n = readCount(L, ct);
  SmallVector<Value> dims = in.dims;
  dims[axis] = n;
  Value out = kernelOuts(L, "compress", {L.tensorOf(in), ct}, {{dims, in.elementType}}, {axis})[0];
  L.define(op->getResult(0), L.fromTensor(out, dims));
  return success();
}

/// TopK-1/10/11: k from the attribute (opset < 10, no K operand) or the host value of the k input; outputs keep
/// sorted order (also for sorted = 0, where ONNX leaves the order open).
LogicalResult lowerTopK(Lowering &L, Operation *op) {
  LoweredValue &x = *L.operand(op, 0);
  if (x.rank == 0) return L.error("TopK: the input must have rank >= 1");
  Value k;
  // The operand count tells the signature apart (opset < 10 has no K input).
  if (op->getNumOperands() < 2) {
    auto attr = L.intAttr(op, "k");
    if (!attr) return L.error("TopK: attribute 'k' is required before opset 10");
    k = L.idx(*attr);
  } else {
    LoweredValue *kv = L.operand(op, 1);
    if (!kv) return L.error("TopK: input 'K' is required from opset 10");
    auto h = L.hostOf(*kv, "K of TopK");
    if (failed(h)) return failure();
    if (h->size() != 1) return L.error("TopK: K must hold one value, got " + Twine(h->size()));
    k = (*h)[0];
  }
  auto axis = L.normalizeAxis(L.intAttr(op, "axis").value_or(-1), x.rank);
  if (failed(axis)) return failure();
  int64_t largest = L.intAttr(op, "largest").value_or(1) != 0;
  SmallVector<Value> dims = x.dims;
  dims[*axis] = k;
  auto outs = kernelOuts(L, "top_k", {L.tensorOf(x)}, {{dims, x.elementType}, {dims, i64Type(L)}}, {*axis, largest});
  L.define(op->getResult(0), L.fromTensor(outs[0], dims));
  L.define(op->getResult(1), L.fromTensor(outs[1], dims));
  return success();
}

/// Tile-6/13: out dims = dims * repeats, repeats as host values.
LogicalResult lowerTile(Lowering &L, Operation *op) {
  LoweredValue &x = *L.operand(op, 0);
  auto reps = L.hostOf(*L.operand(op, 1), "repeats of Tile");
  if (failed(reps)) return failure();
  if ((int64_t)reps->size() != x.rank)
    return L.error("Tile: repeats has " + Twine(reps->size()) + " values for an input of rank " + Twine(x.rank));
  SmallVector<Value> dims;
  for (int64_t d = 0; d < x.rank; ++d)
    dims.push_back(L.mul(x.dims[d], (*reps)[d]));
  Value out = kernelOuts(L, "tile", {L.tensorOf(x)}, {{dims, x.elementType}})[0];
  L.define(op->getResult(0), L.fromTensor(out, dims));
  return success();
}

/// Pad-2/11/13/18: pads from the attribute or host values; the constant value stays a device
/// tensor (a kernel input, no readback); opset 18's axes must be constant.
LogicalResult lowerPad(Lowering &L, Operation *op) {
  LoweredValue &x = *L.operand(op, 0);
  int64_t mode = 0;
  if (auto m = op->getAttrOfType<StringAttr>("mode")) {
    if (m.getValue() == "reflect")
      mode = 1;
    else if (m.getValue() == "edge")
      mode = 2;
    else if (m.getValue() != "constant")
      return L.unsupported("Pad mode '" + m.getValue() + "'");
  }
  SmallVector<Value> pads;
  SmallVector<Value> ins = {L.tensorOf(x)};
  if (op->getNumOperands() < 2) { // opset < 11: pads and value are attributes
    auto attr = L.intsAttr(op, "pads");
    if (!attr) return L.error("Pad: attribute 'pads' is required before opset 11");
    for (int64_t p : *attr)
      pads.push_back(L.idx(p));
    double value = 0;
    if (auto f = op->getAttrOfType<FloatAttr>("value")) value = f.getValueAsDouble();
    if (value != 0) {
      if (!isa<FloatType>(x.elementType)) return L.unsupported("Pad value attribute on a non-float input");
      auto type = RankedTensorType::get({}, x.elementType);
      ins.push_back(arith::ConstantOp::create(
          L.b, L.loc, type, DenseElementsAttr::get(type, L.b.getFloatAttr(x.elementType, value).getValue())));
    }
  } else {
    auto h = L.hostOf(*L.operand(op, 1), "pads of Pad");
    if (failed(h)) return failure();
    pads = *h;
    if (LoweredValue *v = L.operand(op, 2)) {
      if (v->elementType != x.elementType) return L.error("Pad: constant_value must have the input's element type");
      ins.push_back(L.tensorOf(*v));
    }
  }
  SmallVector<int64_t> axes;
  if (LoweredValue *a = L.operand(op, 3)) {
    auto c = L.constantInts(*a);
    if (failed(c)) return L.unsupported("Pad axes known only at run time");
    for (int64_t ax : *c) {
      auto n = L.normalizeAxis(ax, x.rank);
      if (failed(n)) return failure();
      if (llvm::is_contained(axes, *n)) return L.error("Pad: axis " + Twine(ax) + " is repeated");
      axes.push_back(*n);
    }
  } else {
    for (int64_t d = 0; d < x.rank; ++d)
      axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size())
    return L.error("Pad: pads has " + Twine(pads.size()) + " values, expected " + Twine(2 * axes.size()));
  SmallVector<Value> begins(x.rank, L.idx(0));
  SmallVector<Value> dims = x.dims;
  for (size_t i = 0; i < axes.size(); ++i) {
    begins[axes[i]] = pads[i];
    dims[axes[i]] = L.add(L.add(x.dims[axes[i]], pads[i]), pads[i + axes.size()]);
  }
  Value out = kernelOuts(L, "pad", ins, {{dims, x.elementType}}, {mode}, begins)[0];
  L.define(op->getResult(0), L.fromTensor(out, dims));
  return success();
}

/// reduction attribute of ScatterND / ScatterElements as the kernel's code (Program.h).
FailureOr<int64_t> reductionCode(Lowering &L, Operation *op) {
  auto r = op->getAttrOfType<StringAttr>("reduction");
  if (!r || r.getValue() == "none") return 0;
  static const StringRef names[] = {"add", "mul", "max", "min"};
  for (int64_t code = 0; code < 4; ++code)
    if (r.getValue() == names[code]) return code + 1;
  (void)L.unsupported("reduction '" + r.getValue() + "'");
  return failure();
}

/// ScatterND-11/13/16/18, ScatterElements-11/13/16/18 and Scatter-9/11: out has data's dims.
LogicalResult lowerScatter(Lowering &L, Operation *op) {
  // Scatter-9/11 is the deprecated name of ScatterElements (same semantics, no reduction).
  bool elements = op->getName().getStringRef() != "onnx.ScatterND";
  LoweredValue &data = *L.operand(op, 0), &indices = *L.operand(op, 1), &updates = *L.operand(op, 2);
  auto red = reductionCode(L, op);
  if (failed(red)) return failure();
  SmallVector<int64_t> imm = {*red};
  if (elements) {
    auto axis = L.normalizeAxis(L.intAttr(op, "axis").value_or(0), data.rank);
    if (failed(axis)) return failure();
    imm = {*axis, *red};
  }
  Value out =
      kernelOuts(L, elements ? "scatter_elements" : "scatter_nd",
                 {L.tensorOf(data), L.tensorOf(indices), L.tensorOf(updates)}, {{data.dims, data.elementType}}, imm)[0];
  L.define(op->getResult(0), L.fromTensor(out, data.dims));
  return success();
}

} // namespace

void onnx_lowering::addDataDependentLowerings(llvm::StringMap<LowerFn> &table) {
  table["NonZero"] = lowerNonZero;
  table["Compress"] = lowerCompress;
  table["TopK"] = lowerTopK;
  table["Tile"] = lowerTile;
  table["Pad"] = lowerPad;
  table["ScatterND"] = lowerScatter;
  table["ScatterElements"] = lowerScatter;
  table["Scatter"] = lowerScatter;
}
