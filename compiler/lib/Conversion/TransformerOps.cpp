//===- TransformerOps.cpp - MatMul, normalization, reductions, Split -> dq ===//
//
// Ops whose kernels take attributes lower to dq.kernel (names and immediates as in Program.h).
// Shapes stay host index arithmetic; rank changes (1-D MatMul operands, flattened Softmax,
// keepdims = 0) go through the Reshape path.
//
//===----------------------------------------------------------------------===//
#include "ONNXLowering.h"

#include "dq/Dialect/DQDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringSwitch.h"

#include <set>

using namespace mlir;
using namespace mlir::dq;
using namespace mlir::dq::onnx_lowering;

namespace {

/// dq.kernel `name` on `ins` into a fresh outType[outDims] tensor.
LoweredValue kernel(Lowering &L, StringRef name, ArrayRef<Value> ins, ArrayRef<Value> outDims, Type outType,
                    ArrayRef<int64_t> imm = {}, ArrayRef<double> fimm = {}, ArrayRef<Value> scalars = {}) {
  Value init = L.emptyTensor(outDims, outType);
  auto k = KernelOp::create(L.b, L.loc, TypeRange{init.getType()}, name, ins, ValueRange{init}, scalars, imm, fimm);
  return L.fromTensor(k.getResult(0), outDims);
}

/// dq.elementwise `kind` on `a` and `b` (numpy broadcast), in a's element type.
LoweredValue binary(Lowering &L, StringRef kind, LoweredValue &a, LoweredValue &b) {
  SmallVector<Value> out = L.broadcastDims({a.dims, b.dims});
  Value init = L.emptyTensor(out, a.elementType);
  auto t = ElementwiseOp::create(L.b, L.loc, TypeRange{init.getType()}, kind, ValueRange{L.tensorOf(a), L.tensorOf(b)},
                                 ValueRange{init});
  return L.fromTensor(t.getResult(0), out);
}

/// A rank-0 constant `value` of float or integer type `et`.
LoweredValue scalarConstant(Lowering &L, Type et, double value) {
  auto type = RankedTensorType::get({}, et);
  DenseElementsAttr attr = isa<FloatType>(et)
                               ? DenseElementsAttr::get(type, L.b.getFloatAttr(et, value).getValue())
                               : DenseElementsAttr::get(type, L.b.getIntegerAttr(et, (int64_t)value).getValue());
  Value c = arith::ConstantOp::create(L.b, L.loc, type, attr);
  return L.fromTensor(c, {});
}

/// Reshapes `v` to `dims` and returns the new record.
FailureOr<LoweredValue> reshaped(Lowering &L, LoweredValue &v, ArrayRef<Value> dims) {
  auto t = reshapeTensor(L, v, dims);
  if (failed(t)) return failure();
  return L.fromTensor(*t, dims);
}

int64_t opsetOf(Operation *op) {
  if (auto m = op->getParentOfType<ModuleOp>())
    if (auto a = m->getAttrOfType<IntegerAttr>("onnx.opset")) return a.getInt();
  return 0;
}

bool isFloatType(Type t) { return isa<FloatType>(t); }

/// Product of dims[from, to).
Value product(Lowering &L, ArrayRef<Value> dims, size_t from, size_t to) {
  Value p = L.idx(1);
  for (size_t i = from; i < to; ++i)
    p = L.mul(p, dims[i]);
  return p;
}

//===----------------------------------------------------------------------===//
// MatMul, Gemm
//===----------------------------------------------------------------------===//

/// numpy matmul: 1-D operands get a unit dim (a: [1, K], b: [K, 1]) removed again afterwards.
FailureOr<LoweredValue> matmul(Lowering &L, LoweredValue &a0, LoweredValue &b0) {
  if (a0.rank == 0 || b0.rank == 0) {
    (void)L.error("MatMul: operands must have rank >= 1");
    return failure();
  }
  if (a0.elementType != b0.elementType) {
    (void)L.error("MatMul: inputs differ in element type");
    return failure();
  }
  LoweredValue a = a0, b = b0;
  if (a0.rank == 1) {
    auto r = reshaped(L, a0, {L.idx(1), a0.dims[0]});
    if (failed(r)) return failure();
    a = *r;
  }
  if (b0.rank == 1) {
    auto r = reshaped(L, b0, {b0.dims[0], L.idx(1)});
    if (failed(r)) return failure();
    b = *r;
  }
  Value k1 = a.dims.back(), k2 = b.dims[b.rank - 2];
  auto c1 = L.constOf(k1), c2 = L.constOf(k2);
  if (c1 && c2 && *c1 != *c2) {
    (void)L.error("MatMul: inner dims differ (" + Twine(*c1) + " vs " + Twine(*c2) + ")");
    return failure();
  }
  SmallVector<Value> batchA(a.dims.begin(), a.dims.end() - 2);
  SmallVector<Value> batchB(b.dims.begin(), b.dims.end() - 2);
  SmallVector<Value> out = L.broadcastDims({batchA, batchB});
  out.push_back(a.dims[a.rank - 2]);
  out.push_back(b.dims.back());
  LoweredValue r = kernel(L, "matmul", {L.tensorOf(a), L.tensorOf(b)}, out, a.elementType);
  if (a0.rank > 1 && b0.rank > 1) return r;
  SmallVector<Value> final(out.begin(), out.end() - 2);
  if (a0.rank > 1) final.push_back(out[out.size() - 2]);
  if (b0.rank > 1) final.push_back(out.back());
  return reshaped(L, r, final);
}

LogicalResult lowerMatMul(Lowering &L, Operation *op) {
  auto r = matmul(L, *L.operand(op, 0), *L.operand(op, 1));
  if (failed(r)) return failure();
  L.define(op->getResult(0), *r);
  return success();
}

LoweredValue transpose2d(Lowering &L, LoweredValue &v) {
  SmallVector<Value> out{v.dims[1], v.dims[0]};
  Value init = L.emptyTensor(out, v.elementType);
  auto t = TransposeOp::create(L.b, L.loc, TypeRange{init.getType()}, ValueRange{L.tensorOf(v)}, ValueRange{init},
                               L.b.getDenseI64ArrayAttr({1, 0}));
  return L.fromTensor(t.getResult(0), out);
}

/// Y = alpha * A' B' + beta * C as transpose, matmul and elementwise mul / add.
LogicalResult lowerGemm(Lowering &L, Operation *op) {
  LoweredValue *a = L.operand(op, 0), *b = L.operand(op, 1), *c = L.operand(op, 2);
  if (!a || !b) return L.error("Gemm expects inputs A and B");
  if (a->rank != 2 || b->rank != 2) return L.error("Gemm: A and B must be 2-D");
  LoweredValue ta = L.intAttr(op, "transA").value_or(0) ? transpose2d(L, *a) : *a;
  LoweredValue tb = L.intAttr(op, "transB").value_or(0) ? transpose2d(L, *b) : *b;
  auto fattr = [&](StringRef name) {
    auto f = op->getAttrOfType<FloatAttr>(name);
    return f ? f.getValueAsDouble() : 1.0;
  };
  double alpha = fattr("alpha"), beta = fattr("beta");
  auto y = matmul(L, ta, tb);
  if (failed(y)) return failure();
  LoweredValue r = *y;
  Type et = r.elementType;
  if (alpha != 1.0) {
    LoweredValue s = scalarConstant(L, et, alpha);
    r = binary(L, "mul", r, s);
  }
  if (c && beta != 0.0) {
    if (c->elementType != et) return L.error("Gemm: C differs from A in element type");
    LoweredValue cc = *c;
    if (beta != 1.0) {
      LoweredValue s = scalarConstant(L, et, beta);
      cc = binary(L, "mul", cc, s);
    }
    r = binary(L, "add", r, cc);
  }
  L.define(op->getResult(0), r);
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax, LayerNormalization
//===----------------------------------------------------------------------===//

/// Softmax and LogSoftmax. Opset >= 13: along one axis (default -1). Before: the input is
/// flattened to 2-D at `axis` (default 1) and normalized along the second dim.
LogicalResult lowerSoftmax(Lowering &L, Operation *op) {
  StringRef opType = op->getName().getStringRef().drop_front(5);
  StringRef kname = opType == "LogSoftmax" ? "log_softmax" : "softmax";
  LoweredValue &in = *L.operand(op, 0);
  if (!isFloatType(in.elementType)) return L.error(opType + ": the input must be a float tensor");
  bool legacy = opsetOf(op) < 13;
  int64_t rawAxis = L.intAttr(op, "axis").value_or(legacy ? 1 : -1);
  if (in.rank == 0) return L.error(opType + ": the input must have rank >= 1");
  auto axis = L.normalizeAxis(rawAxis, in.rank);
  if (failed(axis)) return failure();
  if (!legacy || *axis == in.rank - 1) {
    L.define(op->getResult(0), kernel(L, kname, {L.tensorOf(in)}, in.dims, in.elementType, {*axis}));
    return success();
  }
  SmallVector<Value> flat{product(L, in.dims, 0, *axis), product(L, in.dims, *axis, in.rank)};
  auto f = reshaped(L, in, flat);
  if (failed(f)) return failure();
  LoweredValue s = kernel(L, kname, {L.tensorOf(*f)}, flat, in.elementType, {1});
  auto r = reshaped(L, s, in.dims);
  if (failed(r)) return failure();
  L.define(op->getResult(0), *r);
  return success();
}

/// Y through the layer_norm kernel. Mean and InvStdDev, when requested, are computed from
/// reduce_mean, sub, mul, add, sqrt and reciprocal over the same axes (keepdims shape).
LogicalResult lowerLayerNorm(Lowering &L, Operation *op) {
  LoweredValue *x = L.operand(op, 0), *scale = L.operand(op, 1), *bias = L.operand(op, 2);
  if (!x || !scale) return L.error("LayerNormalization expects X and Scale");
  if (!isFloatType(x->elementType)) return L.error("LayerNormalization: X must be a float tensor");
  if (scale->elementType != x->elementType || (bias && bias->elementType != x->elementType))
    return L.unsupported("LayerNormalization with Scale or B of another element type than X");
  auto axis = L.normalizeAxis(L.intAttr(op, "axis").value_or(-1), x->rank);
  if (failed(axis)) return failure();
  double eps = 1e-5;
  if (auto e = op->getAttrOfType<FloatAttr>("epsilon")) eps = e.getValueAsDouble();
  SmallVector<Value> ins{L.tensorOf(*x), L.tensorOf(*scale)};
  if (bias) ins.push_back(L.tensorOf(*bias));
  L.define(op->getResult(0), kernel(L, "layer_norm", ins, x->dims, x->elementType, {*axis}, {eps}));
  if (op->getNumResults() == 1) return success();
  bool wantsStats = llvm::any_of(op->getResults().drop_front(),
                                 [](Value r) { return !r.use_empty() && !isa<NoneType>(r.getType()); });
  if (!wantsStats) {
    for (Value r : op->getResults().drop_front())
      L.define(r, L.fromTensor(L.tensorOf(*x), x->dims)); // never read
    return success();
  }
  SmallVector<int64_t> axes;
  SmallVector<Value> statDims(x->dims);
  for (int64_t i = *axis; i < x->rank; ++i) {
    axes.push_back(i);
    statDims[i] = L.idx(1);
  }
  Type et = x->elementType;
  LoweredValue mean = kernel(L, "reduce_mean", {L.tensorOf(*x)}, statDims, et, axes);
  LoweredValue diff = binary(L, "sub", *x, mean);
  LoweredValue sq = binary(L, "mul", diff, diff);
  LoweredValue var = kernel(L, "reduce_mean", {L.tensorOf(sq)}, statDims, et, axes);
  LoweredValue epsC = scalarConstant(L, et, eps);
  LoweredValue varEps = binary(L, "add", var, epsC);
  auto unary = [&](StringRef kind, LoweredValue &v) {
    Value init = L.emptyTensor(v.dims, et);
    auto t =
        ElementwiseOp::create(L.b, L.loc, TypeRange{init.getType()}, kind, ValueRange{L.tensorOf(v)}, ValueRange{init});
    return L.fromTensor(t.getResult(0), v.dims);
  };
  LoweredValue sd = unary("sqrt", varEps);
  LoweredValue inv = unary("reciprocal", sd);
  SmallVector<LoweredValue *> stats{&mean, &inv};
  for (unsigned i = 1; i < op->getNumResults() && i < 3; ++i) {
    Value r = op->getResult(i);
    auto declared = dyn_cast<RankedTensorType>(r.getType());
    if (declared && declared.getElementType() != et)
      return L.unsupported("LayerNormalization statistics in another element type than X");
    L.define(r, *stats[i - 1]);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// ReduceSum / ReduceMean / ReduceMax: axes from the input (opset 13+ for ReduceSum, 18+ for the
/// others) or the attribute; an empty list reduces every axis unless noop_with_empty_axes.
LogicalResult lowerReduce(Lowering &L, Operation *op) {
  StringRef opType = op->getName().getStringRef().drop_front(5);
  std::string name = llvm::StringSwitch<std::string>(opType)
                         .Case("ReduceSum", "reduce_sum")
                         .Case("ReduceMean", "reduce_mean")
                         .Case("ReduceMax", "reduce_max")
                         .Case("ReduceMin", "reduce_min")
                         .Case("ReduceProd", "reduce_prod")
                         .Case("ReduceL2", "reduce_l2")
                         .Case("ReduceSumSquare", "reduce_sum_square")
                         .Case("ReduceLogSumExp", "reduce_log_sum_exp");
  LoweredValue &in = *L.operand(op, 0);
  bool keep = L.intAttr(op, "keepdims").value_or(1) != 0;
  bool noop = L.intAttr(op, "noop_with_empty_axes").value_or(0) != 0;
  SmallVector<int64_t> axes;
  std::optional<SmallVector<Value>> runtimeAxes;
  if (LoweredValue *a = L.operand(op, 1)) {
    auto c = L.constantInts(*a);
    if (succeeded(c)) {
      axes = *c;
    } else {
      auto h = L.hostOf(*a, "axes of " + opType);
      if (failed(h)) return failure();
      if (h->empty()) {
        axes = {};
      } else {
        runtimeAxes = *h;
      }
    }
  } else if (auto attr = L.intsAttr(op, "axes")) {
    axes = *attr;
  }
  Value t = L.tensorOf(in);
  if (runtimeAxes) {
    SmallVector<Value> flags, out;
    for (int64_t d = 0; d < in.rank; ++d) {
      Value f = L.idx(0);
      for (Value a : *runtimeAxes)
        f = L.max(f, L.boolToIndex(L.eq(a, L.idx(d))));
      for (Value a : *runtimeAxes)
        f = L.max(f, L.boolToIndex(L.eq(a, L.idx(d - in.rank))));
      flags.push_back(f);
      out.push_back(L.select(L.eq(f, L.idx(1)), L.idx(1), in.dims[d]));
    }
    LoweredValue r = kernel(L, name, {t}, out, in.elementType, {}, {}, flags);
    if (!keep) {
      // Output dim k is the input dim j that is the k-th one kept: sum over j of
      // [flag_j == 0 and (kept dims before j) == k] * d_j. Repeated axes are not detected here.
      int64_t outRank = in.rank - (int64_t)runtimeAxes->size();
      if (outRank < 0) return L.error(opType + ": more axes than input dims");
      SmallVector<Value> dims;
      for (int64_t k = 0; k < outRank; ++k) {
        Value dim = L.idx(0), before = L.idx(0);
        for (int64_t j = 0; j < in.rank; ++j) {
          Value kept = L.sub(L.idx(1), flags[j]);
          Value hit = L.mul(kept, L.boolToIndex(L.eq(before, L.idx(k))));
          dim = L.add(dim, L.mul(hit, in.dims[j]));
          before = L.add(before, kept);
        }
        dims.push_back(dim);
      }
      auto d = reshaped(L, r, dims);
      if (failed(d)) return failure();
      r = *d;
    }
    L.define(op->getResult(0), r);
    return success();
  }
  if (axes.empty()) {
    if (noop) {
      L.alias(op->getResult(0), in);
      return success();
    }
    for (int64_t d = 0; d < in.rank; ++d)
      axes.push_back(d);
  }
  std::set<int64_t> reduced;
  for (int64_t a : axes) {
    auto n = L.normalizeAxis(a, in.rank);
    if (failed(n)) return failure();
    if (!reduced.insert(*n).second) return L.error(opType + ": repeated axis " + Twine(a));
  }
  SmallVector<Value> keptDims(in.dims), dropped;
  for (int64_t d = 0; d < in.rank; ++d) {
    if (reduced.count(d))
      keptDims[d] = L.idx(1);
    else
      dropped.push_back(in.dims[d]);
  }
  SmallVector<int64_t> sorted(reduced.begin(), reduced.end());
  LoweredValue r = kernel(L, name, {t}, keptDims, in.elementType, sorted);
  if (!keep) {
    auto d = reshaped(L, r, dropped);
    if (failed(d)) return failure();
    r = *d;
  }
  L.define(op->getResult(0), r);
  return success();
}

//===----------------------------------------------------------------------===//
// Trilu, CumSum, GatherElements, GatherND
//===----------------------------------------------------------------------===//

LogicalResult lowerTrilu(Lowering &L, Operation *op) {
  LoweredValue &in = *L.operand(op, 0);
  if (in.rank < 2) return L.error("Trilu: the input must have rank >= 2");
  Value k = L.idx(0);
  if (LoweredValue *kv = L.operand(op, 1)) {
    auto h = L.hostOf(*kv, "k of Trilu");
    if (failed(h)) return failure();
    if (h->size() != 1) return L.error("Trilu: k must hold one element");
    k = (*h)[0];
  }
  int64_t upper = L.intAttr(op, "upper").value_or(1) != 0;
  L.define(op->getResult(0), kernel(L, "trilu", {L.tensorOf(in)}, in.dims, in.elementType, {upper}, {}, {k}));
  return success();
}

LogicalResult lowerCumSum(Lowering &L, Operation *op) {
  LoweredValue *in = L.operand(op, 0), *axisV = L.operand(op, 1);
  if (!in || !axisV) return L.error("CumSum expects x and axis");
  if (in->rank == 0) return L.error("CumSum: x must have rank >= 1");
  int64_t exclusive = L.intAttr(op, "exclusive").value_or(0) != 0;
  int64_t reverse = L.intAttr(op, "reverse").value_or(0) != 0;
  auto h = L.hostOf(*axisV, "axis of CumSum");
  if (failed(h)) return failure();
  if (h->size() != 1) return L.error("CumSum: axis must hold one element");
  Value t = L.tensorOf(*in);
  if (auto c = L.constOf((*h)[0])) {
    auto a = L.normalizeAxis(*c, in->rank);
    if (failed(a)) return failure();
    L.define(op->getResult(0), kernel(L, "cumsum", {t}, in->dims, in->elementType, {*a, exclusive, reverse}));
    return success();
  }
  L.define(op->getResult(0),
           kernel(L, "cumsum", {t}, in->dims, in->elementType, {0, exclusive, reverse}, {}, {(*h)[0]}));
  return success();
}

LogicalResult lowerGatherElements(Lowering &L, Operation *op) {
  LoweredValue &data = *L.operand(op, 0), &indices = *L.operand(op, 1);
  if (data.rank != indices.rank || data.rank == 0)
    return L.error("GatherElements: data and indices must have the same rank >= 1");
  auto axis = L.normalizeAxis(L.intAttr(op, "axis").value_or(0), data.rank);
  if (failed(axis)) return failure();
  L.define(op->getResult(0), kernel(L, "gather_elements", {L.tensorOf(data), L.tensorOf(indices)}, indices.dims,
                                    data.elementType, {*axis}));
  return success();
}

LogicalResult lowerGatherND(Lowering &L, Operation *op) {
  LoweredValue &data = *L.operand(op, 0), &indices = *L.operand(op, 1);
  int64_t b = L.intAttr(op, "batch_dims").value_or(0);
  if (indices.rank < 1 || b < 0 || b >= std::min(data.rank, indices.rank))
    return L.error("GatherND: batch_dims must be in [0, min(data rank, indices rank))");
  auto m = L.constOf(indices.dims.back());
  if (!m) return L.unsupported("GatherND with a last indices dim known only at run time");
  if (*m < 1 || *m > data.rank - b)
    return L.error("GatherND: the last indices dim must be in [1, data rank - batch_dims]");
  SmallVector<Value> out(indices.dims.begin(), indices.dims.end() - 1);
  out.append(data.dims.begin() + b + *m, data.dims.end());
  L.define(op->getResult(0),
           kernel(L, "gather_nd", {L.tensorOf(data), L.tensorOf(indices)}, out, data.elementType, {b}));
  return success();
}

//===----------------------------------------------------------------------===//
// Split, Dropout
//===----------------------------------------------------------------------===//

/// Each output is a dq.slice of consecutive extents along `axis`: `split` from the input (opset
/// 13+) or the attribute, else equal parts (the last one smaller with num_outputs, opset 18).
LogicalResult lowerSplit(Lowering &L, Operation *op) {
  LoweredValue &in = *L.operand(op, 0);
  if (in.rank == 0) return L.error("Split: the input must have rank >= 1");
  auto axis = L.normalizeAxis(L.intAttr(op, "axis").value_or(0), in.rank);
  if (failed(axis)) return failure();
  int64_t n = op->getNumResults();
  Value d = in.dims[*axis];
  SmallVector<Value> sizes;
  if (LoweredValue *s = L.operand(op, 1)) {
    auto h = L.hostOf(*s, "split of Split");
    if (failed(h)) return failure();
    sizes = *h;
  } else if (auto attr = L.intsAttr(op, "split")) {
    for (int64_t v : *attr)
      sizes.push_back(L.idx(v));
  } else {
    if (auto k = L.intAttr(op, "num_outputs"); k && *k != n)
      return L.error("Split: num_outputs differs from the number of outputs");
    Value part = L.intAttr(op, "num_outputs") ? L.ceilDiv(d, L.idx(n)) : L.divTrunc(d, L.idx(n));
    if (auto cd = L.constOf(d); cd && !L.intAttr(op, "num_outputs") && *cd % n != 0)
      return L.error("Split: axis extent " + Twine(*cd) + " is not divisible into " + Twine(n) + " equal parts");
    Value offset = L.idx(0);
    for (int64_t i = 0; i < n; ++i) {
      // With num_outputs the last part takes what is left.
      Value rest = L.max(L.sub(d, offset), L.idx(0));
      Value size = i + 1 < n ? L.min(part, rest) : rest;
      sizes.push_back(size);
      offset = L.add(offset, size);
    }
  }
  if ((int64_t)sizes.size() != n)
    return L.error("Split: " + Twine(sizes.size()) + " split sizes for " + Twine(n) + " outputs");
  Value offset = L.idx(0);
  for (int64_t i = 0; i < n; ++i) {
    SmallVector<Value> out(in.dims), starts, steps;
    out[*axis] = sizes[i];
    for (int64_t a = 0; a < in.rank; ++a) {
      starts.push_back(a == *axis ? offset : L.idx(0));
      steps.push_back(L.idx(1));
    }
    auto so = L.constOf(offset), ss = L.constOf(sizes[i]);
    if (in.host && in.rank == 1 && so && ss && *so + *ss <= (int64_t)in.host->size()) {
      SmallVector<Value> elems(in.host->begin() + *so, in.host->begin() + *so + *ss);
      L.define(op->getResult(i), L.fromHost(in.elementType, 1, elems));
    } else {
      Value init = L.emptyTensor(out, in.elementType);
      auto t = SliceOp::create(L.b, L.loc, TypeRange{init.getType()}, ValueRange{L.tensorOf(in)}, ValueRange{init},
                               starts, steps);
      L.define(op->getResult(i), L.fromTensor(t.getResult(0), out));
    }
    offset = L.add(offset, sizes[i]);
  }
  return success();
}

/// Inference: output = input; the mask, when requested, is all true.
LogicalResult lowerDropout(Lowering &L, Operation *op) {
  LoweredValue &in = *L.operand(op, 0);
  if (LoweredValue *mode = L.operand(op, 2)) {
    auto c = L.constantInts(*mode);
    if (failed(c) || c->size() != 1 || (*c)[0] != 0)
      return L.unsupported("Dropout in training mode (training_mode not a constant false)");
  }
  if (L.intAttr(op, "is_test").value_or(1) == 0 && opsetOf(op) < 7) return L.unsupported("Dropout with is_test = 0");
  L.alias(op->getResult(0), in);
  if (op->getNumResults() > 1 && !isa<NoneType>(op->getResult(1).getType())) {
    Value init = L.emptyTensor(in.dims, L.b.getI1Type());
    auto t =
        FillOp::create(L.b, L.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, L.b.getBoolAttr(true));
    L.define(op->getResult(1), L.fromTensor(t.getResult(0), in.dims));
  }
  return success();
}

} // namespace

void onnx_lowering::addTransformerLowerings(llvm::StringMap<LowerFn> &table) {
  table["MatMul"] = lowerMatMul;
  table["Gemm"] = lowerGemm;
  table["Softmax"] = lowerSoftmax;
  table["LogSoftmax"] = lowerSoftmax;
  table["LayerNormalization"] = lowerLayerNorm;
  for (const char *name : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSumExp"})
    table[name] = lowerReduce;
  table["Trilu"] = lowerTrilu;
  table["CumSum"] = lowerCumSum;
  table["GatherElements"] = lowerGatherElements;
  table["GatherND"] = lowerGatherND;
  table["Split"] = lowerSplit;
  table["Dropout"] = lowerDropout;
}
