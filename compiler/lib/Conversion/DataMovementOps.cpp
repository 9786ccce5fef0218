//===- DataMovementOps.cpp - Reshape, Slice, Expand and friends -> dq/tensor ===//
#include "ONNXLowering.h"

#include "dq/Dialect/DQDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include "llvm/ADT/StringSet.h"

#include <set>

using namespace mlir;
using namespace mlir::dq;
using namespace mlir::dq::onnx_lowering;

namespace {

SmallVector<OpFoldResult> foldResults(ArrayRef<Value> dims) {
  SmallVector<OpFoldResult> out;
  for (Value d : dims)
    out.push_back(getAsOpFoldResult(d));
  return out;
}

/// True when `t`'s type has a static 0 dim: the tensor holds no elements.
// Bufferization multiplies a static 0 into the collapsed size of a group that also holds a
// dynamic dim (0 * ? = 0) and the memref verifier then rejects the collapse (a dynamic group must
// collapse to a dynamic dim); an empty source has no data to move, so reshapes of it are fresh
// empty tensors of the target shape instead of collapse/expand views.
bool staticallyEmpty(Value t) {
  auto type = dyn_cast<RankedTensorType>(t.getType());
  return type && llvm::is_contained(type.getShape(), 0);
}

} // namespace

LogicalResult onnx_lowering::defineReshaped(Lowering &L, Value result, LoweredValue &in, ArrayRef<Value> outDims) {
  auto t = reshapeTensor(L, in, outDims);
  if (failed(t)) return failure();
  L.define(result, L.fromTensor(*t, outDims));
  return success();
}

FailureOr<Value> onnx_lowering::reshapeTensor(Lowering &L, LoweredValue &in, ArrayRef<Value> outDims) {
  Value src = L.tensorOf(in);
  Type et = in.elementType;
  int64_t outRank = outDims.size();
  if (outRank == 0 || in.rank == 0) {
    // Rank 0 <-> all-ones shapes: make the unit dims static, then a reassociation-free reshape.
    ArrayRef<Value> unitDims = outRank == 0 ? ArrayRef<Value>(in.dims) : outDims;
    for (Value d : unitDims)
      if (auto c = L.constOf(d); c && *c != 1) {
        (void)L.error("Reshape: a tensor with one element cannot take a dim of " + Twine(*c));
        return failure();
      }
    SmallVector<int64_t> ones(unitDims.size(), 1);
    auto onesType = RankedTensorType::get(ones, et);
    if (outRank == 0 && in.rank == 0) return src;
    if (outRank == 0)
      return tensor::CollapseShapeOp::create(L.b, L.loc, L.castTo(src, onesType), ArrayRef<ReassociationIndices>{})
          .getResult();
    // expand_shape takes one output extent per result dim, static ones included.
    SmallVector<OpFoldResult> onesShape(ones.size(), L.b.getIndexAttr(1));
    Value expanded =
        tensor::ExpandShapeOp::create(L.b, L.loc, onesType, src, ArrayRef<ReassociationIndices>{}, onesShape);
    return L.castTo(expanded, L.tensorType(outDims, et));
  }
  if (staticallyEmpty(src)) {
    bool anyDynamic = false;
    int64_t product = 1;
    for (Value d : outDims) {
      if (auto c = L.constOf(d))
        product *= *c;
      else
        anyDynamic = true;
    }
    if (!anyDynamic && product != 0) {
      (void)L.error("Reshape: cannot reshape 0 elements into a shape of " + Twine(product) + " elements");
      return failure();
    }
    return L.emptyTensor(outDims, et);
  }
  Value flat = src;
  if (in.rank > 1) {
    ReassociationIndices all;
    for (int64_t i = 0; i < in.rank; ++i)
      all.push_back(i);
    flat = tensor::CollapseShapeOp::create(L.b, L.loc, src, ArrayRef<ReassociationIndices>{all});
  }
  bool anyDynamic = false;
  int64_t product = 1;
  for (Value d : outDims) {
    if (auto c = L.constOf(d))
      product *= *c;
    else
      anyDynamic = true;
  }
  auto flatType = cast<RankedTensorType>(flat.getType());
  if (!anyDynamic && !flatType.isDynamicDim(0) && flatType.getDimSize(0) != product) {
    (void)L.error("Reshape: cannot reshape " + Twine(flatType.getDimSize(0)) + " elements into a shape of " +
                  Twine(product) + " elements");
    return failure();
  }
  flat = L.castTo(flat, RankedTensorType::get({anyDynamic ? ShapedType::kDynamic : product}, et));
  if (outRank == 1) return L.castTo(flat, L.tensorType(outDims, et));
  ReassociationIndices all;
  for (int64_t i = 0; i < outRank; ++i)
    all.push_back(i);
  return tensor::ExpandShapeOp::create(L.b, L.loc, L.tensorType(outDims, et), flat, ArrayRef<ReassociationIndices>{all},
                                       foldResults(outDims))
      .getResult();
}

namespace {

/// Groups `n` positions into `keptCount` contiguous groups, each holding one kept position
/// (those not in `unit`) and the unit positions next to it.
SmallVector<ReassociationIndices> unitDimGroups(int64_t n, const std::set<int64_t> &unit, int64_t keptCount) {
  SmallVector<ReassociationIndices> groups(keptCount);
  if (keptCount == 0) return groups;
  int64_t cur = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (unit.count(j)) {
      groups[std::min(cur, keptCount - 1)].push_back(j);
    } else {
      groups[cur].push_back(j);
      ++cur;
    }
  }
  return groups;
}

/// Constant axes of Unsqueeze/Squeeze: input 1 when present, else the `axes` attribute.
FailureOr<std::optional<SmallVector<int64_t>>> axesOf(Lowering &L, Operation *op) {
  if (LoweredValue *axes = L.operand(op, 1)) {
    auto c = L.constantInts(*axes);
    if (failed(c)) return failure(); // axes known only at run time
    return std::optional<SmallVector<int64_t>>(*c);
  }
  if (auto a = L.intsAttr(op, "axes")) return std::optional<SmallVector<int64_t>>(*a);
  return std::optional<SmallVector<int64_t>>();
}

/// Runtime axes (Unsqueeze/Squeeze): normalized against `rank`, as index values.
FailureOr<SmallVector<Value>> runtimeAxes(Lowering &L, Operation *op, int64_t rank) {
  auto h = L.hostOf(*L.operand(op, 1), "axes of " + op->getName().getStringRef());
  if (failed(h)) return failure();
  SmallVector<Value> out;
  for (Value a : *h)
    out.push_back(L.select(L.lt(a, L.idx(0)), L.add(a, L.idx(rank)), a));
  return out;
}

/// i1: position `j` is one of `axes`; and the count of axes below `j`.
std::pair<Value, Value> axisInfo(Lowering &L, ArrayRef<Value> axes, int64_t j) {
  Value hits = L.idx(0), below = L.idx(0);
  for (Value a : axes) {
    hits = L.add(hits, L.boolToIndex(L.eq(a, L.idx(j))));
    below = L.add(below, L.boolToIndex(L.lt(a, L.idx(j))));
  }
  return {L.lt(L.idx(0), hits), below};
}

/// Unsqueeze/Squeeze whose axes are known only at run time: the output dims are selected on the
/// host and the data goes through the general reshape.
LogicalResult lowerRuntimeAxes(Lowering &L, Operation *op, bool unsqueeze) {
  LoweredValue &in = *L.operand(op, 0);
  LoweredValue &axesValue = *L.operand(op, 1);
  if (axesValue.rank != 1 || !L.constOf(axesValue.dims[0]))
    return L.unsupported("axes of " + op->getName().getStringRef() + " must have a static length");
  int64_t k = *L.constOf(axesValue.dims[0]);
  int64_t outRank = unsqueeze ? in.rank + k : in.rank - k;
  if (outRank < 0) return L.error("Squeeze: more axes than dims");
  auto axes = runtimeAxes(L, op, unsqueeze ? outRank : in.rank);
  if (failed(axes)) return failure();
  SmallVector<Value> out(outRank, L.idx(0));
  if (unsqueeze) {
    for (int64_t j = 0; j < outRank; ++j) {
      auto [isAxis, below] = axisInfo(L, *axes, j);
      Value src = L.sub(L.idx(j), below);
      Value d = L.idx(1);
      for (int64_t p = 0; p < in.rank; ++p)
        d = L.select(L.eq(src, L.idx(p)), in.dims[p], d);
      out[j] = L.select(isAxis, L.idx(1), d);
    }
  } else {
    for (int64_t j = 0; j < in.rank; ++j) {
      auto [isAxis, below] = axisInfo(L, *axes, j);
      Value dst = L.sub(L.idx(j), below);
      for (int64_t i = 0; i < outRank; ++i)
        out[i] = L.select(isAxis, out[i], L.select(L.eq(dst, L.idx(i)), in.dims[j], out[i]));
    }
  }
  if (in.host && outRank <= 1) {
    L.define(op->getResult(0), L.fromHost(in.elementType, outRank, *in.host));
    return success();
  }
  return defineReshaped(L, op->getResult(0), in, out);
}

LogicalResult lowerShape(Lowering &L, Operation *op) {
  LoweredValue &in = *L.operand(op, 0);
  int64_t r = in.rank;
  auto clampAxis = [&](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + r : a, 0, r); };
  int64_t start = clampAxis(L.intAttr(op, "start").value_or(0));
  int64_t end = clampAxis(L.intAttr(op, "end").value_or(r));
  SmallVector<Value> elems;
  for (int64_t i = start; i < end; ++i)
    elems.push_back(in.dims[i]);
  L.define(op->getResult(0), L.fromHost(L.b.getI64Type(), 1, elems));
  return success();
}

LogicalResult lowerReshape(Lowering &L, Operation *op) {
  LoweredValue &in = *L.operand(op, 0);
  SmallVector<Value> shape;
  if (LoweredValue *s = L.operand(op, 1)) {
    auto h = L.hostOf(*s, "shape of Reshape");
    if (failed(h)) return failure();
    shape = *h;
  } else if (auto a = L.intsAttr(op, "shape")) {
    for (int64_t v : *a)
      shape.push_back(L.idx(v));
  } else {
    return L.error("Reshape has no shape");
  }
  bool allowZero = L.intAttr(op, "allowzero").value_or(0) != 0;
  int64_t n = shape.size();

  // Entries after the 0 rule; then the -1 entry (definite, or possible for a runtime value).
  SmallVector<Value> e(n);
  for (int64_t i = 0; i < n; ++i) {
    Value s = shape[i];
    if (!allowZero && i < in.rank) {
      auto c = L.constOf(s);
      if (L.same(s, in.dims[i]) || (c && *c == 0))
        e[i] = in.dims[i];
      else if (c)
        e[i] = s;
      else
        e[i] = L.select(L.eq(s, L.idx(0)), in.dims[i], s);
    } else {
      e[i] = s;
    }
  }
  enum class MinusOne { No, Yes, Maybe };
  SmallVector<MinusOne> kind(n, MinusOne::No);
  int definite = 0;
  bool anyMinusOne = false;
  for (int64_t i = 0; i < n; ++i) {
    if (auto c = L.constOf(e[i])) {
      if (*c == -1) {
        kind[i] = MinusOne::Yes;
        ++definite;
      } else if (*c < 0) {
        return L.error("Reshape: invalid shape entry " + Twine(*c));
      }
    } else if (!L.isNonNegative(e[i])) {
      kind[i] = MinusOne::Maybe;
    }
    anyMinusOne |= kind[i] != MinusOne::No;
  }
  if (definite > 1) return L.error("Reshape: more than one -1 in the shape");
  SmallVector<Value> out(e);
  if (anyMinusOne) {
    Value numel = L.idx(1);
    for (Value d : in.dims)
      numel = L.mul(numel, d);
    Value others = L.idx(1);
    for (int64_t i = 0; i < n; ++i) {
      if (kind[i] == MinusOne::No)
        others = L.mul(others, e[i]);
      else if (kind[i] == MinusOne::Maybe)
        others = L.mul(others, L.select(L.eq(e[i], L.idx(-1)), L.idx(1), e[i]));
    }
    // max(others, 1): the quotient is also computed when no entry turns out to be -1 at run
    // time, and a zero-size dim must not trap there. A -1 next to a zero-size dim infers 0.
    Value inferred = L.divTrunc(numel, L.max(others, L.idx(1)));
    for (int64_t i = 0; i < n; ++i) {
      if (kind[i] == MinusOne::Yes)
        out[i] = inferred;
      else if (kind[i] == MinusOne::Maybe)
        out[i] = L.select(L.eq(e[i], L.idx(-1)), inferred, e[i]);
    }
  }

  if (L.knob == ::dq::InjectKnob::ReshapeByTypeEquality && n == in.rank &&
      L.tensorType(out, in.elementType) == L.tensorType(in.dims, in.elementType)) {
    // Known-unsound: equal types (e.g. both ?x?) are taken as a proof that the dims are equal.
    L.alias(op->getResult(0), in);
    return success();
  }
  if (L.knob == ::dq::InjectKnob::SplitDimSizeAlias && n > in.rank && in.rank >= 1) {
    // Known-unsound: every dynamic extent of the split takes the size of the split source dim,
    // so [N] -> [a, b] is described as [N, N] over N elements.
    Value source = in.dims[in.rank - 1];
    for (int64_t i = in.rank - 1; i < n; ++i)
      if (!L.constOf(out[i])) out[i] = source;
  }
  // Proof that nothing changes: same rank and every dim provably the same runtime value.
  if (n == in.rank && llvm::all_of(llvm::seq<int64_t>(0, n), [&](int64_t i) { return L.same(out[i], in.dims[i]); })) {
    L.alias(op->getResult(0), in);
    return success();
  }
  if (in.host && n <= 1) {
    int64_t len = in.host->size();
    if (n == 0 ? len == 1 : L.constOf(out[0]) == len) {
      L.define(op->getResult(0), L.fromHost(in.elementType, n, *in.host));
      return success();
    }
  }
  return defineReshaped(L, op->getResult(0), in, out);
}

LogicalResult lowerFlatten(Lowering &L, Operation *op) {
  LoweredValue &in = *L.operand(op, 0);
  int64_t r = in.rank;
  int64_t axis = L.intAttr(op, "axis").value_or(1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return L.error("Flatten: axis out of range for rank " + Twine(r));
  Value outer = L.idx(1), inner = L.idx(1);
  for (int64_t i = 0; i < r; ++i)
    (i < axis ? outer : inner) = L.mul(i < axis ? outer : inner, in.dims[i]);
  SmallVector<Value> out{outer, inner};
  if (axis > 0 && axis < r && !staticallyEmpty(L.tensorOf(in))) {
    ReassociationIndices lo, hi;
    for (int64_t i = 0; i < r; ++i)
      (i < axis ? lo : hi).push_back(i);
    Value t = tensor::CollapseShapeOp::create(L.b, L.loc, L.tensorOf(in), ArrayRef<ReassociationIndices>{lo, hi});
    L.define(op->getResult(0), L.fromTensor(L.castTo(t, L.tensorType(out, in.elementType)), out));
    return success();
  }
  return defineReshaped(L, op->getResult(0), in, out);
}

LogicalResult lowerUnsqueeze(Lowering &L, Operation *op) {
  LoweredValue &in = *L.operand(op, 0);
  auto axesOr = axesOf(L, op);
  if (failed(axesOr)) return lowerRuntimeAxes(L, op, /*unsqueeze=*/true);
  if (!*axesOr) return L.error("Unsqueeze has no axes");
  int64_t outRank = in.rank + (int64_t)(*axesOr)->size();
  std::set<int64_t> axes;
  for (int64_t a : **axesOr) {
    auto na = L.normalizeAxis(a, outRank);
    if (failed(na)) return failure();
    if (!axes.insert(*na).second) return L.error("Unsqueeze: repeated axis " + Twine(a));
  }
  SmallVector<Value> out;
  int64_t next = 0;
  for (int64_t j = 0; j < outRank; ++j)
    out.push_back(axes.count(j) ? L.idx(1) : in.dims[next++]);
  if (in.host && outRank == 1) {
    L.define(op->getResult(0), L.fromHost(in.elementType, 1, *in.host));
    return success();
  }
  if (staticallyEmpty(L.tensorOf(in))) {
    L.define(op->getResult(0), L.fromTensor(L.emptyTensor(out, in.elementType), out));
    return success();
  }
  Value t = tensor::ExpandShapeOp::create(L.b, L.loc, L.tensorType(out, in.elementType), L.tensorOf(in),
                                          unitDimGroups(outRank, axes, in.rank), foldResults(out));
  L.define(op->getResult(0), L.fromTensor(t, out));
  return success();
}

LogicalResult lowerSqueeze(Lowering &L, Operation *op) {
  LoweredValue &in = *L.operand(op, 0);
  auto axesOr = axesOf(L, op);
  if (failed(axesOr)) return lowerRuntimeAxes(L, op, /*unsqueeze=*/false);
  std::set<int64_t> axes;
  if (*axesOr) {
    for (int64_t a : **axesOr) {
      auto na = L.normalizeAxis(a, in.rank);
      if (failed(na)) return failure();
      axes.insert(*na);
    }
  } else {
    for (int64_t i = 0; i < in.rank; ++i) {
      auto c = L.constOf(in.dims[i]);
      if (!c) return L.unsupported("Squeeze without axes on a tensor with a dynamic dim");
      if (*c == 1) axes.insert(i);
    }
  }
  SmallVector<Value> out;
  SmallVector<int64_t> unitShape;
  for (int64_t i = 0; i < in.rank; ++i) {
    auto c = L.constOf(in.dims[i]);
    if (axes.count(i)) {
      if (c && *c != 1) return L.error("Squeeze: dim " + Twine(i) + " has size " + Twine(*c) + ", not 1");
      unitShape.push_back(1);
    } else {
      out.push_back(in.dims[i]);
      unitShape.push_back(c.value_or(ShapedType::kDynamic));
    }
  }
  if (in.host && out.empty()) {
    L.define(op->getResult(0), L.fromHost(in.elementType, 0, *in.host));
    return success();
  }
  if (staticallyEmpty(L.tensorOf(in))) {
    L.define(op->getResult(0), L.fromTensor(L.emptyTensor(out, in.elementType), out));
    return success();
  }
  Value src = L.castTo(L.tensorOf(in), RankedTensorType::get(unitShape, in.elementType));
  Value t = tensor::CollapseShapeOp::create(L.b, L.loc, src, unitDimGroups(in.rank, axes, out.size()));
  L.define(op->getResult(0), L.fromTensor(t, out));
  return success();
}

/// Every user of `v` lowers to ops that read strided operands in place: not a graph output, and
/// not Transpose / Gather / Concat (kernels that need contiguous operands, so a view would only
/// move the copy into dq-promote-strided-operands) nor a reshape that would collapse the view
/// (bufferization copies a collapse it cannot prove). Unsqueeze and Squeeze only add or drop unit
/// dims and keep the view.
bool usersWalkStrides(Value v) {
  static const llvm::StringSet<> contiguousUsers = {"onnx.Transpose", "onnx.Gather", "onnx.Concat", "onnx.Reshape",
                                                    "onnx.Flatten"};
  if (v.use_empty()) return false;
  for (Operation *user : v.getUsers())
    if (user->hasTrait<OpTrait::IsTerminator>() || contiguousUsers.contains(user->getName().getStringRef()))
      return false;
  return true;
}

LogicalResult lowerTranspose(Lowering &L, Operation *op) {
  LoweredValue &in = *L.operand(op, 0);
  SmallVector<int64_t> perm;
  if (auto p = L.intsAttr(op, "perm"))
    perm = *p;
  else
    for (int64_t i = in.rank - 1; i >= 0; --i)
      perm.push_back(i);
  std::set<int64_t> seen(perm.begin(), perm.end());
  if ((int64_t)perm.size() != in.rank || (int64_t)seen.size() != in.rank ||
      (in.rank && (*seen.begin() < 0 || *seen.rbegin() >= in.rank)))
    return L.error("Transpose: perm is not a permutation of the " + Twine(in.rank) + " axes");
  if (in.rank <= 1) {
    L.alias(op->getResult(0), in);
    return success();
  }
  SmallVector<Value> out;
  for (int64_t p : perm)
    out.push_back(in.dims[p]);
  if (L.views && usersWalkStrides(op->getResult(0))) {
    Value v = TransposeViewOp::create(L.b, L.loc, L.tensorType(out, in.elementType), L.tensorOf(in),
                                      L.b.getDenseI64ArrayAttr(perm));
    L.define(op->getResult(0), L.fromTensor(v, out));
    return success();
  }
  Value init = L.emptyTensor(out, in.elementType);
  auto t = TransposeOp::create(L.b, L.loc, TypeRange{init.getType()}, ValueRange{L.tensorOf(in)}, ValueRange{init},
                               L.b.getDenseI64ArrayAttr(perm));
  L.define(op->getResult(0), L.fromTensor(t.getResult(0), out));
  return success();
}

LogicalResult lowerConcat(Lowering &L, Operation *op) {
  SmallVector<LoweredValue *> ins;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    if (LoweredValue *v = L.operand(op, i)) ins.push_back(v);
  if (ins.empty()) return L.error("Concat has no inputs");
  auto axisAttr = L.intAttr(op, "axis");
  if (!axisAttr) return L.error("Concat has no axis");
  int64_t rank = ins[0]->rank;
  auto axis = L.normalizeAxis(*axisAttr, rank);
  if (failed(axis)) return failure();
  for (LoweredValue *v : ins)
    if (v->rank != rank || v->elementType != ins[0]->elementType)
      return L.error("Concat: inputs differ in rank or element type");
  if (rank == 1 && llvm::all_of(ins, [](LoweredValue *v) { return v->host.has_value(); })) {
    SmallVector<Value> elems;
    for (LoweredValue *v : ins)
      elems.append(v->host->begin(), v->host->end());
    if ((int64_t)elems.size() <= kMaxHostElements) {
      L.define(op->getResult(0), L.fromHost(ins[0]->elementType, 1, elems));
      return success();
    }
  }
  SmallVector<Value> out(rank);
  SmallVector<Value> tensors;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == *axis) {
      Value sum = L.idx(0);
      for (LoweredValue *v : ins)
        sum = L.add(sum, v->dims[d]);
      out[d] = sum;
      continue;
    }
    out[d] = ins[0]->dims[d];
    for (LoweredValue *v : ins)
      if (L.constOf(v->dims[d])) out[d] = v->dims[d];
  }
  for (LoweredValue *v : ins)
    tensors.push_back(L.tensorOf(*v));
  Value init = L.emptyTensor(out, ins[0]->elementType);
  auto t =
      ConcatOp::create(L.b, L.loc, TypeRange{init.getType()}, tensors, ValueRange{init}, L.b.getI64IntegerAttr(*axis));
  L.define(op->getResult(0), L.fromTensor(t.getResult(0), out));
  return success();
}

LogicalResult lowerGather(Lowering &L, Operation *op) {
  LoweredValue &data = *L.operand(op, 0);
  LoweredValue &indices = *L.operand(op, 1);
  auto axis = L.normalizeAxis(L.intAttr(op, "axis").value_or(0), data.rank);
  if (failed(axis)) return failure();
  auto it = dyn_cast<IntegerType>(indices.elementType);
  if (!it || !it.isSignless() || (it.getWidth() != 32 && it.getWidth() != 64))
    return L.unsupported("Gather indices must be i32 or i64");
  if (data.host && data.rank == 1 && indices.rank <= 1) {
    auto c = L.constantInts(indices);
    if (succeeded(c)) {
      int64_t n = data.host->size();
      SmallVector<Value> elems;
      for (int64_t i : *c) {
        int64_t k = i < 0 ? i + n : i;
        if (k < 0 || k >= n)
          return L.error("Gather: index " + Twine(i) + " is out of range for " + Twine(n) + " elements");
        elems.push_back((*data.host)[k]);
      }
      L.define(op->getResult(0), L.fromHost(data.elementType, indices.rank, elems));
      return success();
    }
  }
  SmallVector<Value> out(data.dims.begin(), data.dims.begin() + *axis);
  out.append(indices.dims.begin(), indices.dims.end());
  out.append(data.dims.begin() + *axis + 1, data.dims.end());
  Value init = L.emptyTensor(out, data.elementType);
  auto t = GatherOp::create(L.b, L.loc, TypeRange{init.getType()}, ValueRange{L.tensorOf(data), L.tensorOf(indices)},
                            ValueRange{init}, L.b.getI64IntegerAttr(*axis));
  L.define(op->getResult(0), L.fromTensor(t.getResult(0), out));
  return success();
}

/// Normalized start and extent of one sliced axis, following the ONNX Slice rules: negative
/// start/end count from the end, then clamp to [0, d] (step > 0) or [0, d-1] / [-1, d-1]
/// (step < 0); extent = max(ceil((end - start) / step), 0).
std::pair<Value, Value> sliceAxis(Lowering &L, Value d, Value s, Value e, Value t) {
  // A constant bound beyond +-2^62 clamps like +-infinity for any dim that fits in memory; taming
  // it keeps the canonicalizer from reassociating (d - 1) + INT64_MIN into d + INT64_MAX (wrapped),
  // whose checked add on the host then overflows.
  auto tame = [&](Value v) {
    constexpr int64_t lim = int64_t(1) << 62;
    if (auto c = L.constOf(v); c && (*c > lim || *c < -lim)) return L.idx(*c > 0 ? lim : -lim);
    return v;
  };
  s = tame(s);
  e = tame(e);
  auto wrap = [&](Value v) {
    if (L.isNonNegative(v)) return v;
    return L.select(L.lt(v, L.idx(0)), L.add(v, d), v);
  };
  Value sw = wrap(s), ew = wrap(e);
  auto forward = [&]() { return std::make_pair(L.min(L.max(sw, L.idx(0)), d), L.min(L.max(ew, L.idx(0)), d)); };
  auto backward = [&]() {
    Value last = L.sub(d, L.idx(1));
    return std::make_pair(L.min(L.max(sw, L.idx(0)), last), L.min(L.max(ew, L.idx(-1)), last));
  };
  Value start, end;
  auto tc = L.constOf(t);
  if ((tc && *tc > 0) || (!tc && L.isNonNegative(t))) {
    std::tie(start, end) = forward();
  } else if (tc) {
    std::tie(start, end) = backward();
  } else {
    auto [fs, fe] = forward();
    auto [bs, be] = backward();
    Value neg = L.lt(t, L.idx(0));
    start = L.select(neg, bs, fs);
    end = L.select(neg, be, fe);
  }
  Value len = L.max(L.ceilDiv(L.sub(end, start), t), L.idx(0));
  return {start, len};
}

LogicalResult lowerSlice(Lowering &L, Operation *op) {
  LoweredValue &data = *L.operand(op, 0);
  SmallVector<Value> starts, ends, steps, runtimeAxes;
  SmallVector<int64_t> axes;
  if (L.knob == ::dq::InjectKnob::SliceUpperBound && op->getNumOperands() >= 3 &&
      (!L.operand(op, 1)->host || !L.operand(op, 2)->host)) {
    // Known-unsound: bounds the host cannot resolve are not read back; every sliced axis keeps
    // its upper bound, the whole data dim.
    L.alias(op->getResult(0), data);
    return success();
  }
  if (op->getNumOperands() >= 3) {
    auto s = L.hostOf(*L.operand(op, 1), "starts of Slice");
    if (failed(s)) return failure();
    auto e = L.hostOf(*L.operand(op, 2), "ends of Slice");
    if (failed(e)) return failure();
    starts = *s;
    ends = *e;
    if (LoweredValue *a = L.operand(op, 3)) {
      auto c = L.constantInts(*a);
      if (succeeded(c)) {
        axes = *c;
      } else {
        auto h = L.hostOf(*a, "axes of Slice");
        if (failed(h)) return failure();
        runtimeAxes = *h;
      }
    }
    if (LoweredValue *st = L.operand(op, 4)) {
      auto h = L.hostOf(*st, "steps of Slice");
      if (failed(h)) return failure();
      steps = *h;
    }
  } else {
    auto s = L.intsAttr(op, "starts"), e = L.intsAttr(op, "ends");
    if (!s || !e) return L.error("Slice has no starts/ends");
    for (int64_t v : *s)
      starts.push_back(L.idx(v));
    for (int64_t v : *e)
      ends.push_back(L.idx(v));
    if (auto a = L.intsAttr(op, "axes")) axes = *a;
  }
  size_t k = starts.size();
  if (!runtimeAxes.empty()) {
    // Axes known only at run time: every data axis takes the bounds of the entry naming it
    // (select chains on the host), else the full range.
    if (runtimeAxes.size() != k || ends.size() != k || (!steps.empty() && steps.size() != k))
      return L.error("Slice: starts, ends, axes and steps differ in length");
    if (steps.empty()) steps.assign(k, L.idx(1));
    Value rank = L.idx(data.rank);
    SmallVector<Value> allStarts, allEnds, allSteps;
    for (int64_t j = 0; j < data.rank; ++j) {
      Value s = L.idx(0), e = data.dims[j], t = L.idx(1);
      for (size_t i = 0; i < k; ++i) {
        Value a = runtimeAxes[i];
        Value norm = L.select(L.lt(a, L.idx(0)), L.add(a, rank), a);
        Value hit = L.eq(norm, L.idx(j));
        s = L.select(hit, starts[i], s);
        e = L.select(hit, ends[i], e);
        t = L.select(hit, steps[i], t);
      }
      allStarts.push_back(s);
      allEnds.push_back(e);
      allSteps.push_back(t);
    }
    starts = allStarts;
    ends = allEnds;
    steps = allSteps;
    k = data.rank;
  }
  if (axes.empty())
    for (size_t i = 0; i < k; ++i)
      axes.push_back(i);
  if (steps.empty()) steps.assign(k, L.idx(1));
  if (ends.size() != k || axes.size() != k || steps.size() != k)
    return L.error("Slice: starts, ends, axes and steps differ in length");

  SmallVector<Value> outStarts, outSteps, out(data.dims);
  for (int64_t i = 0; i < data.rank; ++i) {
    outStarts.push_back(L.idx(0));
    outSteps.push_back(L.idx(1));
  }
  std::set<int64_t> seen;
  for (size_t i = 0; i < k; ++i) {
    auto a = L.normalizeAxis(axes[i], data.rank);
    if (failed(a)) return failure();
    if (!seen.insert(*a).second) return L.error("Slice: repeated axis " + Twine(axes[i]));
    if (auto tc = L.constOf(steps[i]); tc && *tc == 0) return L.error("Slice: step must not be 0");
    auto [start, len] = sliceAxis(L, data.dims[*a], starts[i], ends[i], steps[i]);
    outStarts[*a] = start;
    outSteps[*a] = steps[i];
    out[*a] = len;
  }

  if (data.host && data.rank == 1) {
    auto s = L.constOf(outStarts[0]), t = L.constOf(outSteps[0]), n = L.constOf(out[0]);
    if (s && t && n) {
      SmallVector<Value> elems;
      for (int64_t i = 0; i < *n; ++i)
        elems.push_back((*data.host)[*s + i * *t]);
      L.define(op->getResult(0), L.fromHost(data.elementType, 1, elems));
      return success();
    }
  }
  if (L.views && llvm::all_of(outSteps, [&](Value t) {
        auto c = L.constOf(t);
        return c && *c > 0;
      })) {
    // Positive constant steps: a strided view of the data (offset start, stride step, extent
    // len), read in place by its consumers. An extent that folds to 0 gets a fresh empty tensor
    // instead, so that no view starts one past the end of a static dim.
    if (llvm::any_of(out, [&](Value d) { return L.constOf(d) == 0; })) {
      L.define(op->getResult(0), L.fromTensor(L.emptyTensor(out, data.elementType), out));
      return success();
    }
    Value v = tensor::ExtractSliceOp::create(L.b, L.loc, L.tensorType(out, data.elementType), L.tensorOf(data),
                                             foldResults(outStarts), foldResults(out), foldResults(outSteps));
    L.define(op->getResult(0), L.fromTensor(v, out));
    return success();
  }
  Value init = L.emptyTensor(out, data.elementType);
  auto t = SliceOp::create(L.b, L.loc, TypeRange{init.getType()}, ValueRange{L.tensorOf(data)}, ValueRange{init},
                           outStarts, outSteps);
  L.define(op->getResult(0), L.fromTensor(t.getResult(0), out));
  return success();
}

LogicalResult lowerExpand(Lowering &L, Operation *op) {
  LoweredValue &in = *L.operand(op, 0);
  auto shape = L.hostOf(*L.operand(op, 1), "shape of Expand");
  if (failed(shape)) return failure();
  SmallVector<Value> out = L.broadcastDims({in.dims, *shape});
  if ((int64_t)out.size() == in.rank &&
      llvm::all_of(llvm::seq<int64_t>(0, in.rank), [&](int64_t i) { return L.same(out[i], in.dims[i]); })) {
    L.alias(op->getResult(0), in);
    return success();
  }
  if (in.host && out.size() == 1) {
    auto n = L.constOf(out[0]);
    if (n && *n <= kMaxHostElements && (in.host->size() == 1 || (int64_t)in.host->size() == *n)) {
      SmallVector<Value> elems;
      for (int64_t i = 0; i < *n; ++i)
        elems.push_back((*in.host)[in.host->size() == 1 ? 0 : i]);
      L.define(op->getResult(0), L.fromHost(in.elementType, 1, elems));
      return success();
    }
  }
  Value init = L.emptyTensor(out, in.elementType);
  auto t = ExpandOp::create(L.b, L.loc, TypeRange{init.getType()}, ValueRange{L.tensorOf(in)}, ValueRange{init});
  L.define(op->getResult(0), L.fromTensor(t.getResult(0), out));
  return success();
}

} // namespace

void onnx_lowering::addDataMovementLowerings(llvm::StringMap<LowerFn> &table) {
  table["Shape"] = lowerShape;
  table["Reshape"] = lowerReshape;
  table["Flatten"] = lowerFlatten;
  table["Unsqueeze"] = lowerUnsqueeze;
  table["Squeeze"] = lowerSqueeze;
  table["Transpose"] = lowerTranspose;
  table["Concat"] = lowerConcat;
  table["Gather"] = lowerGather;
  table["Slice"] = lowerSlice;
  table["Expand"] = lowerExpand;
}
