//===- IndexOps.cpp - ArgMax, ArgMin, OneHot, Size -> dq -------------------===//
//
// ArgMax / ArgMin lower to the arg_max / arg_min kernels (keepdims shape; keepdims = 0 goes
// through the Reshape path), OneHot to the one_hot kernel with depth as a host value (read back
// when it is computed on the device), Size to a host value.
//
//===----------------------------------------------------------------------===//
#include "ONNXLowering.h"

#include "dq/Dialect/DQDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dq;
using namespace mlir::dq::onnx_lowering;

namespace {

LoweredValue kernel(Lowering &L, StringRef name, ArrayRef<Value> ins, ArrayRef<Value> outDims, Type outType,
                    ArrayRef<int64_t> imm) {
  Value init = L.emptyTensor(outDims, outType);
  auto k = KernelOp::create(L.b, L.loc, TypeRange{init.getType()}, name, ins, ValueRange{init}, ValueRange{}, imm,
                            ArrayRef<double>{});
  return L.fromTensor(k.getResult(0), outDims);
}

/// ArgMax / ArgMin along `axis` (default 0); ties and NaN as in Program.h arg_max.
LogicalResult lowerArg(Lowering &L, Operation *op) {
  StringRef opType = op->getName().getStringRef().drop_front(5);
  LoweredValue &in = *L.operand(op, 0);
  if (in.rank == 0) return L.error(opType + ": the input must have rank >= 1");
  if (in.elementType.isInteger(1)) return L.unsupported(opType + " on a bool input");
  auto axis = L.normalizeAxis(L.intAttr(op, "axis").value_or(0), in.rank);
  if (failed(axis)) return failure();
  int64_t keep = L.intAttr(op, "keepdims").value_or(1);
  int64_t last = L.intAttr(op, "select_last_index").value_or(0);
  if ((keep != 0 && keep != 1) || (last != 0 && last != 1))
    return L.error(opType + ": keepdims and select_last_index must be 0 or 1");
  if (auto n = L.constOf(in.dims[*axis]); n && *n == 0) return L.error(opType + ": the reduced axis has extent 0");
  SmallVector<Value> kept(in.dims), dropped;
  kept[*axis] = L.idx(1);
  for (int64_t d = 0; d < in.rank; ++d)
    if (d != *axis) dropped.push_back(in.dims[d]);
  LoweredValue r =
      kernel(L, opType == "ArgMax" ? "arg_max" : "arg_min", {L.tensorOf(in)}, kept, L.b.getI64Type(), {*axis, last});
  if (!keep) {
    auto t = reshapeTensor(L, r, dropped);
    if (failed(t)) return failure();
    r = L.fromTensor(*t, dropped);
  }
  L.define(op->getResult(0), r);
  return success();
}

/// OneHot(indices, depth, values): depth inserted at `axis` (default -1) of the output. A depth
/// known only at run time is read back; a depth below 1 is then caught by the kernel's shape
/// check (negative) or gives an empty output.
LogicalResult lowerOneHot(Lowering &L, Operation *op) {
  LoweredValue *indices = L.operand(op, 0), *depthV = L.operand(op, 1), *values = L.operand(op, 2);
  if (!indices || !depthV || !values) return L.error("OneHot expects indices, depth and values");
  if (indices->elementType.isInteger(1)) return L.error("OneHot: indices must be numeric, not bool");
  if (values->rank != 1 || L.constOf(values->dims[0]) != 2)
    return L.error("OneHot: values must be a 1-D tensor of 2 elements [off, on]");
  Value depth;
  if (isa<FloatType>(depthV->elementType)) {
    // A float depth is truncated toward zero (the spec casts it to an integer), as
    // dq.readback_scalar does when it is known only at run time.
    bool one = depthV->rank == 0 || (depthV->rank == 1 && L.constOf(depthV->dims[0]) == 1);
    if (!one) return L.error("OneHot: depth must hold one element");
    if (depthV->constant) {
      double d = (*depthV->constant.value_begin<APFloat>()).convertToDouble();
      if (!std::isfinite(d)) return L.error("OneHot: depth is not finite");
      depth = L.idx((int64_t)std::trunc(d));
    } else {
      SmallVector<Value> at;
      if (depthV->rank == 1) at.push_back(L.idx(0));
      depth = ReadbackScalarOp::create(L.b, L.loc, L.b.getIndexType(), L.tensorOf(*depthV), at);
    }
  } else {
    auto h = L.hostOf(*depthV, "depth of OneHot");
    if (failed(h)) return failure();
    if (h->size() != 1) return L.error("OneHot: depth must hold one element");
    depth = (*h)[0];
  }
  if (auto c = L.constOf(depth); c && *c < 1) return L.error("OneHot: depth must be positive, got " + Twine(*c));
  auto axis = L.normalizeAxis(L.intAttr(op, "axis").value_or(-1), indices->rank + 1);
  if (failed(axis)) return failure();
  SmallVector<Value> out(indices->dims);
  out.insert(out.begin() + *axis, depth);
  L.define(op->getResult(0),
           kernel(L, "one_hot", {L.tensorOf(*indices), L.tensorOf(*values)}, out, values->elementType, {*axis}));
  return success();
}

/// Size: the element count as a rank-0 i64 host value.
LogicalResult lowerSize(Lowering &L, Operation *op) {
  LoweredValue &in = *L.operand(op, 0);
  Value n = L.idx(1);
  for (Value d : in.dims)
    n = L.mul(n, d);
  L.define(op->getResult(0), L.fromHost(L.b.getI64Type(), 0, {n}));
  return success();
}

} // namespace

void onnx_lowering::addIndexLowerings(llvm::StringMap<LowerFn> &table) {
  table["ArgMax"] = lowerArg;
  table["ArgMin"] = lowerArg;
  table["OneHot"] = lowerOneHot;
  table["Size"] = lowerSize;
}
