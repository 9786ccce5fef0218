//===- EmitViews.cpp - memref view ops -> View instructions ---------------===//
//
// Each view gets a descriptor (offset, sizes, strides as scalar registers) computed from its
// source's descriptor, and a View instruction that the runtime checks against the allocation.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

using namespace mlir;
using namespace mlir::dq::emit_detail;

std::optional<LogicalResult> Emitter::emitViewOp(Operation *op) {
  if (auto cast = dyn_cast<memref::CastOp>(op)) {
    auto src = buffer(cast.getSource());
    if (failed(src)) return failure();
    auto from = cast.getSource().getType();
    auto to = cast.getType();
    auto fromType = dyn_cast<MemRefType>(from);
    auto toType = dyn_cast<MemRefType>(to);
    if (!fromType || !toType) return unsupported(op, "memref.cast involving unranked memrefs");
    bool demands = false;
    for (int64_t i = 0; i < toType.getRank(); ++i)
      demands |= !toType.isDynamicDim(i) && fromType.isDynamicDim(i);
    if (demands) {
      rt::Instr &in = emit(rt::Opcode::CheckShape);
      in.name = "memref.cast to " + std::to_string(toType.getRank()) + "-d static dims";
      if (!program.code.back().loc.empty()) in.name += " at " + program.code.back().loc;
      in.b = {*src};
      for (int64_t d : toType.getShape())
        in.imm.push_back(ShapedType::isDynamic(d) ? -1 : d);
    }
    bregs[cast] = *src;
    // Copied out first: inserting `cast` may grow the map and move the source's entry.
    ViewDesc desc = views[cast.getSource()];
    views[cast] = std::move(desc);
    return success();
  }
  if (auto sub = dyn_cast<memref::SubViewOp>(op)) {
    if (failed(buffer(sub.getSource()))) return failure();
    ViewDesc src = views[sub.getSource()];
    ViewDesc d{src.offset, {}, {}};
    llvm::SmallBitVector dropped = sub.getDroppedDims();
    auto offsets = sub.getMixedOffsets(), sizes = sub.getMixedSizes(), steps = sub.getMixedStrides();
    for (size_t i = 0; i < offsets.size(); ++i) {
      auto off = scalar(offsets[i]), size = scalar(sizes[i]), step = scalar(steps[i]);
      if (failed(off) || failed(size) || failed(step)) return failure();
      d.offset = add(d.offset, mul(*off, src.strides[i]));
      if (dropped.test(i)) continue;
      d.sizes.push_back(*size);
      d.strides.push_back(mul(src.strides[i], *step));
    }
    return bindView(sub, sub.getSource(), std::move(d));
  }
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(op)) {
    if (failed(buffer(expand.getSrc()))) return failure();
    ViewDesc src = views[expand.getSrc()];
    ViewDesc d{src.offset, {}, {}};
    for (OpFoldResult size : expand.getMixedOutputShape()) {
      auto r = scalar(size);
      if (failed(r)) return failure();
      d.sizes.push_back(*r);
    }
    d.strides.assign(d.sizes.size(), constReg(1));
    for (auto [g, group] : llvm::enumerate(expand.getReassociationIndices())) {
      int32_t stride = src.strides[g];
      for (int64_t j = static_cast<int64_t>(group.size()) - 1; j >= 0; --j) {
        d.strides[group[j]] = stride;
        stride = mul(stride, d.sizes[group[j]]);
      }
    }
    return bindView(expand, expand.getSrc(), std::move(d));
  }
  if (auto collapse = dyn_cast<memref::CollapseShapeOp>(op)) {
    if (failed(buffer(collapse.getSrc()))) return failure();
    ViewDesc src = views[collapse.getSrc()];
    MemRefType srcType = collapse.getSrcType();
    ViewDesc d{src.offset, {}, {}};
    for (const ReassociationIndices &group : collapse.getReassociationIndices()) {
      int32_t size = constReg(1);
      for (int64_t j : group)
        size = mul(size, src.sizes[j]);
      d.sizes.push_back(size);
      // The group's stride is the one of its innermost dim that is not statically 1: a unit
      // dim's descriptor stride comes from the inner layout, which is not the group's stride
      // when the group is a strided view (e.g. [n, 1] rows of a column window).
      int64_t inner = group.back();
      for (int64_t j : llvm::reverse(group))
        if (srcType.getDimSize(j) != 1) {
          inner = j;
          break;
        }
      d.strides.push_back(src.strides[inner]);
    }
    return bindView(collapse, collapse.getSrc(), std::move(d));
  }
  if (auto transpose = dyn_cast<memref::TransposeOp>(op)) {
    if (failed(buffer(transpose.getIn()))) return failure();
    ViewDesc src = views[transpose.getIn()];
    ViewDesc d{src.offset, {}, {}};
    AffineMap perm = transpose.getPermutation();
    for (unsigned i = 0; i < perm.getNumResults(); ++i) {
      unsigned p = perm.getDimPosition(i);
      d.sizes.push_back(src.sizes[p]);
      d.strides.push_back(src.strides[p]);
    }
    return bindView(transpose, transpose.getIn(), std::move(d));
  }
  if (auto rc = dyn_cast<memref::ReinterpretCastOp>(op)) {
    if (failed(buffer(rc.getSource()))) return failure();
    ViewDesc d;
    auto off = scalar(rc.getMixedOffsets()[0]);
    if (failed(off)) return failure();
    d.offset = *off;
    for (auto [size, stride] : llvm::zip(rc.getMixedSizes(), rc.getMixedStrides())) {
      auto s = scalar(size), st = scalar(stride);
      if (failed(s) || failed(st)) return failure();
      d.sizes.push_back(*s);
      d.strides.push_back(*st);
    }
    return bindView(rc, rc.getSource(), std::move(d));
  }
  return std::nullopt;
}
