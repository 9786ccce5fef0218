//===- BufferizableOpInterfaceImpl.cpp - bufferization of dq ops ----------===//
//
// DPS compute ops reuse the upstream destination-style model (inits are written in place, ins
// are read); bufferizing recreates the op on memrefs with no results. dq.readback_scalar only
// reads its source. dq.transpose_view becomes memref.transpose of its input's buffer (a view that
// aliases the input, as tensor.extract_slice becomes memref.subview).
//
//===----------------------------------------------------------------------===//
#include "dq/Dialect/DQDialect.h"
#include "dq/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;

namespace {

template <typename OpTy> struct DPSOpModel : public DstBufferizableOpInterfaceExternalModel<DPSOpModel<OpTy>, OpTy> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter, const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto dps = cast<DestinationStyleOpInterface>(op);
    SmallVector<Value> operands;
    SmallVector<Value> initBuffers;
    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      if (!isa<TensorType>(v.getType())) {
        operands.push_back(v);
        continue;
      }
      FailureOr<Value> buffer = getBuffer(rewriter, v, options, state);
      if (failed(buffer)) return failure();
      operands.push_back(*buffer);
      if (dps.isDpsInit(&operand)) initBuffers.push_back(*buffer);
    }
    rewriter.setInsertionPoint(op);
    // Same operand counts, so the properties (segment sizes, attributes) carry over unchanged.
    Operation *memrefOp = Operation::create(op->getLoc(), op->getName(), TypeRange{}, operands,
                                            NamedAttrList(op->getDiscardableAttrDictionary()),
                                            op->getPropertiesStorage(), BlockRange{}, /*numRegions=*/0);
    rewriter.insert(memrefOp);
    replaceOpWithBufferizedValues(rewriter, op, initBuffers);
    return success();
  }
};

struct ReadbackScalarOpModel
    : public BufferizableOpInterface::ExternalModel<ReadbackScalarOpModel, dq::ReadbackScalarOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &, const AnalysisState &) const { return true; }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &, const AnalysisState &) const { return false; }
  AliasingValueList getAliasingValues(Operation *, OpOperand &, const AnalysisState &) const { return {}; }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter, const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto readback = cast<dq::ReadbackScalarOp>(op);
    FailureOr<Value> buffer = getBuffer(rewriter, readback.getSource(), options, state);
    if (failed(buffer)) return failure();
    // Taken before the replacement, which erases `op`: reading them afterwards is a
    // use-after-free that crashed the compiler once the freed block was reused.
    DictionaryAttr attrs = readback->getDiscardableAttrDictionary();
    SmallVector<Value> indices(readback.getIndices());
    auto bufferized =
        replaceOpWithNewBufferizedOp<dq::ReadbackScalarOp>(rewriter, op, rewriter.getIndexType(), *buffer, indices);
    bufferized->setDiscardableAttrs(attrs);
    return success();
  }
};

/// The type memref.transpose infers: sizes and strides permuted, offset kept.
MemRefType transposedType(MemRefType src, ArrayRef<int64_t> perm) {
  auto [strides, offset] = src.getStridesAndOffset();
  SmallVector<int64_t> sizes, permStrides;
  for (int64_t p : perm) {
    sizes.push_back(src.getDimSize(p));
    permStrides.push_back(strides[p]);
  }
  return MemRefType::Builder(src).setShape(sizes).setLayout(
      StridedLayoutAttr::get(src.getContext(), offset, permStrides));
}

struct TransposeViewOpModel : public BufferizableOpInterface::ExternalModel<TransposeViewOpModel, dq::TransposeViewOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &, const AnalysisState &) const { return false; }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &, const AnalysisState &) const { return false; }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &, const AnalysisState &) const {
    return {{op->getResult(0), BufferRelation::Unknown}};
  }
  FailureOr<BufferLikeType> getBufferType(Operation *op, Value, const BufferizationOptions &options,
                                          const BufferizationState &state, SmallVector<Value> &invocationStack) const {
    auto view = cast<dq::TransposeViewOp>(op);
    FailureOr<BaseMemRefType> src = bufferization::detail::asMemRefType(
        bufferization::getBufferType(view.getInput(), options, state, invocationStack));
    if (failed(src)) return failure();
    auto ranked = dyn_cast<MemRefType>(*src);
    if (!ranked) return op->emitError("dq.transpose_view: the input bufferizes to an unranked memref");
    return cast<BufferLikeType>(transposedType(ranked, view.getPermutation()));
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter, const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto view = cast<dq::TransposeViewOp>(op);
    FailureOr<Value> buffer = getBuffer(rewriter, view.getInput(), options, state);
    if (failed(buffer)) return failure();
    AffineMap map = AffineMap::getPermutationMap(view.getPermutation(), op->getContext());
    rewriter.setInsertionPoint(op);
    Value t = memref::TransposeOp::create(rewriter, op->getLoc(), *buffer, AffineMapAttr::get(map));
    replaceOpWithBufferizedValues(rewriter, op, t);
    return success();
  }
};

template <typename... Ops> void attachDPSModels(MLIRContext *ctx) {
  (Ops::template attachInterface<DPSOpModel<Ops>>(*ctx), ...);
}

} // namespace

void mlir::dq::registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, DQDialect *) {
    attachDPSModels<ElementwiseOp, ExpandOp, SliceOp, TransposeOp, ConcatOp, GatherOp, RangeOp, FillOp, KernelOp,
                    CopyOp>(ctx);
    ReadbackScalarOp::attachInterface<ReadbackScalarOpModel>(*ctx);
    TransposeViewOp::attachInterface<TransposeViewOpModel>(*ctx);
  });
}
