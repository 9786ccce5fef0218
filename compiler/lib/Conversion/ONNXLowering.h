//===- ONNXLowering.h - state shared by the onnx -> dq op lowerings -*- C++ -*-===//
//
// dq-convert-onnx is a forward walk over each function with a value map. Every ONNX value is
// kept as a LoweredValue: its dims as index SSA values, its tensor (materialized lazily) and,
// for small integer tensors, its elements as index SSA values ("host values"), so shape
// arithmetic stays on the host and folds where it is constant.
//
//===----------------------------------------------------------------------===//
#ifndef DQ_LIB_CONVERSION_ONNXLOWERING_H
#define DQ_LIB_CONVERSION_ONNXLOWERING_H

#include "dq/Pipeline/InjectKnobs.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <memory>
#include <optional>

namespace mlir::dq::onnx_lowering {

/// Host values hold at most this many elements (shape vectors are far shorter).
constexpr int64_t kMaxHostElements = 64;

/// Lowered state of one ONNX SSA value.
struct LoweredValue {
  Type elementType;
  int64_t rank = 0;
  /// Extent of each dim as an index value (arith.constant where static).
  SmallVector<Value> dims;
  /// The ranked tensor, or null until materialized.
  Value tensor;
  /// Elements as index values (row-major), for integer/bool tensors of rank <= 1 with a static
  /// length; bools are 0/1.
  std::optional<SmallVector<Value>> host;
  /// The constant contents, when the value is an ONNX constant.
  DenseElementsAttr constant;
};

class Lowering;
/// Lowers one onnx.* op: reads its operands through `L`, defines its results with L.define.
using LowerFn = LogicalResult (*)(Lowering &L, Operation *op);

/// Registers the data-movement lowerings (Reshape, Slice, Expand, Unsqueeze, Squeeze, Flatten,
/// Concat, Transpose, Shape, Gather) into `table`, keyed by ONNX op type.
void addDataMovementLowerings(llvm::StringMap<LowerFn> &table);
/// Registers the compute and constant lowerings (Add, Sub, Mul, Div, Equal, Where, Cast,
/// Identity, Constant, ConstantOfShape, Range) into `table`.
void addComputeLowerings(llvm::StringMap<LowerFn> &table);

/// Conversion state for one function.
class Lowering {
public:
  explicit Lowering(func::FuncOp func);

  /// Lowers every onnx.* op of the function; on failure an error was emitted on the op.
  LogicalResult run(const llvm::StringMap<LowerFn> &table);

  //===--- operands and results --------------------------------------------===//
  /// Operand `i` of `op`, or null when the operand is absent (omitted input of type none).
  LoweredValue *operand(Operation *op, unsigned i);
  /// Records `value` as the lowering of ONNX result `result`.
  void define(Value result, LoweredValue value);
  /// Makes `result` share the lowering of `source` (Identity).
  void alias(Value result, LoweredValue &source);
  /// A record for a computed tensor with the given dims.
  LoweredValue fromTensor(Value tensor, ArrayRef<Value> dims);
  /// A host record: rank 0 (one element) or rank 1.
  LoweredValue fromHost(Type elementType, int64_t rank, ArrayRef<Value> elements);

  /// The tensor of `v`, materializing host values (tensor.from_elements or arith.constant).
  Value tensorOf(LoweredValue &v);
  /// The elements of `v` as index values: its host values, or one dq.readback_scalar per
  /// element of its device tensor (cached). Fails with an error naming `what` when `v` is not
  /// an integer tensor of rank <= 1 with a static length.
  FailureOr<SmallVector<Value>> hostOf(LoweredValue &v, const Twine &what);
  /// One dq.readback_scalar of `tensor` at `indices` (index result); marked `unsynchronized`
  /// under the readback-without-sync knob. Every readback of the conversion goes through here.
  Value readbackScalar(Value tensor, ValueRange indices);
  /// Static integer values of `v` (constant host values), or failure without a diagnostic.
  FailureOr<SmallVector<int64_t>> constantInts(LoweredValue &v);

  //===--- index arithmetic (constant-folding) ------------------------------===//
  Value idx(int64_t c);
  std::optional<int64_t> constOf(Value v) const;
  /// True when `a` and `b` are provably equal (same SSA value or equal constants).
  bool same(Value a, Value b) const;
  /// True when `v` is provably >= 0 (dims, constants, and sums/products/max of those).
  bool isNonNegative(Value v, int depth = 0) const;
  Value add(Value a, Value b);
  Value sub(Value a, Value b);
  Value mul(Value a, Value b);
  /// Truncating signed division (ONNX integer Div).
  Value divTrunc(Value a, Value b);
  Value ceilDiv(Value a, Value b);
  Value min(Value a, Value b);
  Value max(Value a, Value b);
  /// i1 comparisons; eq/ne use isNonNegative to fold `dim == negative constant`.
  Value eq(Value a, Value b);
  Value lt(Value a, Value b);
  Value select(Value cond, Value a, Value b);
  /// 0/1 index value of an i1.
  Value boolToIndex(Value cond);

  //===--- tensors ----------------------------------------------------------===//
  /// Ranked tensor type whose dims are static exactly where `dims` are constants.
  RankedTensorType tensorType(ArrayRef<Value> dims, Type elementType);
  /// tensor.empty with `dims`.
  Value emptyTensor(ArrayRef<Value> dims, Type elementType);
  /// numpy broadcast of several dim lists (right-aligned); dynamic pairs use select(a == 1).
  SmallVector<Value> broadcastDims(ArrayRef<SmallVector<Value>> shapes);
  /// tensor.cast of `t` to `type` when they differ.
  Value castTo(Value t, Type type);

  //===--- attributes and diagnostics --------------------------------------===//
  std::optional<int64_t> intAttr(Operation *op, StringRef name) const;
  std::optional<SmallVector<int64_t>> intsAttr(Operation *op, StringRef name) const;
  /// Emits "unsupported: <msg>" on the current op and returns failure.
  LogicalResult unsupported(const Twine &msg);
  /// Emits "<msg>" on the current op and returns failure.
  LogicalResult error(const Twine &msg);
  /// Normalizes axis `axis` for `rank` (negative counts from the end); fails when out of range.
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);

  OpBuilder b;
  Location loc;
  Operation *current = nullptr;
  /// The inject knob of dq-convert-onnx (docs/fuzz/knobs.md); production: none.
  std::optional<::dq::InjectKnob> knob;
  /// Slice / Transpose may lower to views (option `views` of dq-convert-onnx); false: kernels.
  bool views = true;

private:
  LoweredValue &lookup(Value v);

  func::FuncOp func;
  DenseMap<Value, std::shared_ptr<LoweredValue>> values;
  std::map<int64_t, Value> indexConstants; // not DenseMap: INT64_MAX is a valid key
};

/// Reshapes `in` to `outDims` (element count preserved, as ONNX requires): collapse to 1-D (or
/// rank 0), then expand_shape whose output_shape operands are `outDims` themselves, so every
/// extent of the result comes from the shape operand. Fails with an error on the current op when
/// static element counts differ.
FailureOr<Value> reshapeTensor(Lowering &L, LoweredValue &in, ArrayRef<Value> outDims);

/// Defines `result` as `in` reshaped to `outDims` (reshapeTensor); fails as reshapeTensor does.
LogicalResult defineReshaped(Lowering &L, Value result, LoweredValue &in, ArrayRef<Value> outDims);

/// Registers the transformer op set lowerings (MatMul, Gemm, Softmax, LayerNormalization,
/// ReduceSum / ReduceMean / ReduceMax, Trilu, CumSum, GatherElements, GatherND, Split, Dropout).
void addTransformerLowerings(llvm::StringMap<LowerFn> &table);

/// Registers Clip, LeakyRelu, Mod, Mean and CastLike (ElementwiseAttrOps.cpp).
void addElementwiseAttrLowerings(llvm::StringMap<LowerFn> &table);
/// Registers ArgMax, ArgMin, OneHot and Size (IndexOps.cpp).
void addIndexLowerings(llvm::StringMap<LowerFn> &table);
/// Registers the data-dependent and shape-input lowerings (NonZero, Compress, TopK, Tile, Pad,
/// ScatterND, ScatterElements); extents known only after a kernel ran are read back once.
void addDataDependentLowerings(llvm::StringMap<LowerFn> &table);

/// Registers the onnxruntime contrib ops (ContribOps.cpp): com.microsoft.MatMulNBits,
/// GroupQueryAttention, RotaryEmbedding, SkipSimplifiedLayerNormalization, and the default-domain
/// SimplifiedLayerNormalization; keys of another domain are "domain.OpType".
void addContribLowerings(llvm::StringMap<LowerFn> &table);

/// MLIR element type of ONNX TensorProto.DataType `code`, or null when out of scope.
Type elementTypeForOnnxCode(MLIRContext *ctx, int64_t code);

} // namespace mlir::dq::onnx_lowering

#endif // DQ_LIB_CONVERSION_ONNXLOWERING_H
