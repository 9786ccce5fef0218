//===- LowerCopies.cpp - memref.copy -> dq.copy by effective strides ------===//
//
// memcpy: both sides provably contiguous row-major (one linear transfer).
// copy2d: both sides split at the same dim into contiguous rows (inner dims) and a row index
//         (outer dims) with one pitch per side.
// strided: everything else (device strided-copy kernel).
// Dims whose static size is 1 are skipped: their stride never moves an address, so the effective
// stride is the one of the inner physical layout. Every copy becomes a dq.copy, a device-path
// transfer; no host loop touches device memory.
//
//===----------------------------------------------------------------------===//
#include "dq/Dialect/DQDialect.h"
#include "dq/Transforms/InjectOption.h"
#include "dq/Transforms/Passes.h"
#include "dq/Transforms/TransformUtils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::dq {
#define GEN_PASS_DEF_LOWERCOPIES
#include "dq/Transforms/Passes.h.inc"
} // namespace mlir::dq

using namespace mlir;

namespace {

struct Layout {
  ArrayRef<int64_t> sizes;
  SmallVector<int64_t> strides;
};

/// Dims [begin, end) address one contiguous run.
static bool contiguousRange(const Layout &l, int64_t begin, int64_t end) {
  int64_t expected = 1;
  for (int64_t i = end - 1; i >= begin; --i) {
    if (l.sizes[i] == 1) continue;
    if (ShapedType::isDynamic(expected) || l.strides[i] != expected) return false;
    expected = ShapedType::isDynamic(l.sizes[i]) ? ShapedType::kDynamic : expected * l.sizes[i];
  }
  return true;
}

/// Dims [0, end) collapse into one row index with a single pitch.
static bool collapsibleRows(const Layout &l, int64_t end) {
  int64_t inner = -1;
  for (int64_t i = end - 1; i >= 0; --i) {
    if (l.sizes[i] == 1) continue;
    if (inner >= 0) {
      int64_t s = l.strides[i], si = l.strides[inner], ni = l.sizes[inner];
      if (ShapedType::isDynamic(s) || ShapedType::isDynamic(si) || ShapedType::isDynamic(ni) || s != si * ni)
        return false;
    }
    inner = i;
  }
  return true;
}

static std::optional<Layout> getLayout(MemRefType t) {
  Layout l{t.getShape(), {}};
  int64_t offset;
  if (failed(t.getStridesAndOffset(l.strides, offset))) return std::nullopt;
  return l;
}

static StringRef classify(MemRefType src, MemRefType dst) {
  if (mlir::dq::isProvablyContiguous(src) && mlir::dq::isProvablyContiguous(dst)) return "memcpy";
  std::optional<Layout> s = getLayout(src), d = getLayout(dst);
  if (!s || !d) return "strided";
  int64_t rank = src.getRank();
  for (int64_t k = 1; k < rank; ++k)
    if (contiguousRange(*s, k, rank) && contiguousRange(*d, k, rank) && collapsibleRows(*s, k) &&
        collapsibleRows(*d, k))
      return "copy2d";
  return "strided";
}

/// A dim of static size 1 whose stride is dynamic (what singleton-copy-host-path looks for).
static bool singletonDynamicStride(MemRefType t) {
  std::optional<Layout> l = getLayout(t);
  if (!l) return false;
  for (int64_t i = 0; i < t.getRank(); ++i)
    if (l->sizes[i] == 1 && ShapedType::isDynamic(l->strides[i])) return true;
  return false;
}

struct LowerCopiesPass : public mlir::dq::impl::LowerCopiesBase<LowerCopiesPass> {
  using LowerCopiesBase::LowerCopiesBase;
  void runOnOperation() override {
    FailureOr<std::optional<::dq::InjectKnob>> knob = mlir::dq::parseInjectOption(
        getOperation(), "dq-lower-copies", inject, {::dq::InjectKnob::SingletonCopyHostPath});
    if (failed(knob)) return signalPassFailure();
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp c) { copies.push_back(c); });
    OpBuilder b(&getContext());
    for (memref::CopyOp copy : copies) {
      auto src = dyn_cast<MemRefType>(copy.getSource().getType());
      auto dst = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (!src || !dst) {
        copy.emitError("unsupported: copy of unranked memrefs; rank the operands first");
        return signalPassFailure();
      }
      b.setInsertionPoint(copy);
      mlir::dq::CopyOp::create(
          b, copy.getLoc(), TypeRange{}, ValueRange{copy.getSource()}, ValueRange{copy.getTarget()},
          knob->has_value() && (singletonDynamicStride(src) || singletonDynamicStride(dst)) ? StringRef("host")
                                                                                            : classify(src, dst));
      copy.erase();
    }
  }
};

} // namespace
