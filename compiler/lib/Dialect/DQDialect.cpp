//===- DQDialect.cpp - dq dialect registration and verifiers --------------===//
#include "dq/Dialect/DQDialect.h"

#include "dq/runtime/Program.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dq;

#include "dq/Dialect/DQOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dq/Dialect/DQOpsTypes.cpp.inc"

void DQDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dq/Dialect/DQOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dq/Dialect/DQOps.cpp.inc"
      >();
}

/// Shared DPS verifier: all shaped operands are either tensors (one tensor result per init) or
/// memrefs (no results).
static LogicalResult verifyDPS(Operation *op, ValueRange inputs, ValueRange outputs) {
  if (outputs.empty()) return op->emitOpError("expects at least one init (outs) operand");
  bool tensorForm = isa<RankedTensorType>(outputs.front().getType());
  for (Value v : llvm::concat<const Value>(inputs, outputs)) {
    bool isTensor = isa<TensorType>(v.getType());
    if (isTensor != tensorForm) return op->emitOpError("mixes tensor and memref operands");
  }
  unsigned expected = tensorForm ? outputs.size() : 0;
  if (op->getNumResults() != expected)
    return op->emitOpError("expects ") << expected << " results, got " << op->getNumResults();
  for (auto [res, init] : llvm::zip(op->getResults(), outputs))
    if (res.getType() != init.getType()) return op->emitOpError("result type must equal its init type");
  return success();
}

/// "fused_elementwise": the step program of Program.h over its inputs, one init, and one float
/// element type for every operand.
static LogicalResult verifyFusedElementwise(KernelOp op) {
  std::string problem = ::dq::rt::checkFusedProgram(static_cast<int64_t>(op.getInputs().size()),
                                                    std::vector<int64_t>(op.getImm().begin(), op.getImm().end()));
  if (!problem.empty()) return op.emitOpError("fused_elementwise ") << problem;
  if (op.getOutputs().size() != 1 || !op.getScalars().empty() || !op.getFimm().empty())
    return op.emitOpError("fused_elementwise takes one init and no scalars or float immediates");
  Type element = cast<ShapedType>(op.getOutputs()[0].getType()).getElementType();
  if (!isa<FloatType>(element)) return op.emitOpError("fused_elementwise needs a float element type, has ") << element;
  for (Value v : op.getInputs())
    if (cast<ShapedType>(v.getType()).getElementType() != element)
      return op.emitOpError("fused_elementwise mixes element types: ") << v.getType() << " and " << element;
  return success();
}

LogicalResult ElementwiseOp::verify() {
  static const llvm::StringSet<> kinds = {
      "add",   "sub",  "mul",   "div",        "equal",   "where",         "cast",  "pow",  "max",        "min",
      "and",   "or",   "less",  "less_equal", "greater", "greater_equal", "neg",   "sqrt", "reciprocal", "sigmoid",
      "tanh",  "erf",  "exp",   "cos",        "sin",     "not",           "isnan", "relu", "abs",        "log",
      "floor", "ceil", "round", "sign",       "xor",     "mod",           "fmod"};
  if (!kinds.contains(getKind())) return emitOpError("unknown elementwise kind '") << getKind() << "'";
  return verifyDPS(*this, getInputs(), getOutputs());
}
LogicalResult ExpandOp::verify() { return verifyDPS(*this, getInputs(), getOutputs()); }
LogicalResult SliceOp::verify() {
  if (failed(verifyDPS(*this, getInputs(), getOutputs()))) return failure();
  if (getInputs().size() != 1) return emitOpError("expects exactly one input");
  int64_t rank = cast<ShapedType>(getInputs()[0].getType()).getRank();
  if ((int64_t)getStarts().size() != rank || (int64_t)getSteps().size() != rank)
    return emitOpError("expects one start and one step per input axis");
  return success();
}
LogicalResult TransposeOp::verify() { return verifyDPS(*this, getInputs(), getOutputs()); }
LogicalResult TransposeViewOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  ArrayRef<int64_t> perm = getPermutation();
  if (in.getElementType() != out.getElementType()) return emitOpError("element types differ");
  if ((int64_t)perm.size() != in.getRank() || out.getRank() != in.getRank())
    return emitOpError("permutation length ") << perm.size() << " differs from the rank " << in.getRank();
  llvm::SmallBitVector seen(perm.size());
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= in.getRank() || seen.test(p))
      return emitOpError("permutation is not a permutation of the ") << in.getRank() << " dims";
    seen.set(p);
    int64_t a = in.getDimSize(p), b = out.getDimSize(i);
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return emitOpError("result dim ") << i << " is " << b << " but input dim " << p << " is " << a;
  }
  return success();
}
LogicalResult ConcatOp::verify() { return verifyDPS(*this, getInputs(), getOutputs()); }
LogicalResult GatherOp::verify() { return verifyDPS(*this, getInputs(), getOutputs()); }
LogicalResult RangeOp::verify() { return verifyDPS(*this, getInputs(), getOutputs()); }
LogicalResult FillOp::verify() { return verifyDPS(*this, getInputs(), getOutputs()); }
LogicalResult KernelOp::verify() {
  static const llvm::StringSet<> kernels = {
      "matmul", "softmax", "layer_norm", "reduce_sum", "reduce_mean", "reduce_max", "trilu", "cumsum",
      "gather_elements", "gather_nd", "range_length", "leaky_relu", "log_softmax", "reduce_min", "reduce_prod",
      "reduce_l2", "reduce_sum_square", "reduce_log_sum_exp", "arg_max", "arg_min", "one_hot",
      // data-dependent extents and shape-input ops
      "count_nonzero", "nonzero", "compress", "top_k", "tile", "pad", "scatter_nd", "scatter_elements",
      // elementwise fusion (dq-fuse-elementwise)
      "fused_elementwise",
      // onnxruntime contrib ops (ContribOps.cpp)
      "matmul_nbits", "simplified_layer_norm", "skip_simplified_layer_norm", "rotary_embedding",
      "group_query_attention"};
  if (!kernels.contains(getKernel())) return emitOpError("unknown kernel '") << getKernel() << "'";
  if (failed(verifyDPS(*this, getInputs(), getOutputs()))) return failure();
  if (getKernel() == "fused_elementwise") return verifyFusedElementwise(*this);
  return success();
}
LogicalResult CopyOp::verify() {
  if (failed(verifyDPS(*this, getInputs(), getOutputs()))) return failure();
  if (getKind() != "memcpy" && getKind() != "copy2d" && getKind() != "strided" && getKind() != "host")
    return emitOpError("unknown copy kind '") << getKind() << "'";
  return success();
}

static LogicalResult verifyDynamicSizes(Operation *op, Type type, ValueRange sizes) {
  auto mt = cast<MemRefType>(type);
  if ((int64_t)sizes.size() != mt.getNumDynamicDims())
    return op->emitOpError("expects ") << mt.getNumDynamicDims() << " dynamic sizes, got " << sizes.size();
  return success();
}
LogicalResult AllocOutputOp::verify() { return verifyDynamicSizes(*this, getType(), getDynamicSizes()); }
LogicalResult GetHostScratchOp::verify() { return verifyDynamicSizes(*this, getType(), getDynamicSizes()); }

#define GET_OP_CLASSES
#include "dq/Dialect/DQOps.cpp.inc"
