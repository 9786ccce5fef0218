// Interface between the hip device's host code (HipDevice.cpp and the launch files beside it)
// and its kernels (HipKernels.hip).
// Plain structs passed by value as kernel parameters; shapes and checks are done on the host.
#pragma once

#include "dq/runtime/hip/HipCompat.h"

#include <cstdint>

namespace dq::rt::hipk {

/// Largest rank a hip kernel handles (larger ranks are an "unsupported" error on the host).
constexpr int kMaxRank = 8;

/// dtype codes are the ONNX codes of dq::rt::DType.
enum : int { kF32 = 1, kU8 = 2, kI8 = 3, kI32 = 6, kI64 = 7, kBool = 9, kF16 = 10, kF64 = 11, kBF16 = 16 };

/// An operand aligned to a loop shape: element e of the loop reads
/// base + (offset + sum(coord[d] * strides[d])) * elementSize. Broadcast dims have stride 0.
struct Opd {
  char *base = nullptr;
  int dtype = kF32;
  int esize = 4;
  int64_t offset = 0;
  int64_t strides[kMaxRank] = {};
};

/// A loop shape (row-major), rank <= kMaxRank; rank 0 has one element.
struct Shape {
  int rank = 0;
  int64_t sizes[kMaxRank] = {};
  int64_t count = 1;
};

/// Error word the kernels set (first error wins); lives in host-mapped memory.
struct DevError {
  int code; ///< 0 = none, see ErrorCode
  int pad;
  long long a, b, c;
};
enum ErrorCode : int {
  kErrNone = 0,
  kErrIntDivZero = 1,     ///< integer division by zero
  kErrIntPowNeg = 2,      ///< integer 0 to negative power a
  kErrIndex = 3,          ///< index a out of range for axis b of size c
  kErrRangeDeltaZero = 4, ///< range_length: delta is 0
  kErrRangeNaN = 5,       ///< range_length: count NaN
  kErrRangeBig = 6,       ///< range_length: count does not fit
  kErrCountMismatch = 7,  ///< nonzero: a nonzero elements, the output holds b
  kErrBeyondExtent = 8,   ///< compress: condition true at a, beyond extent b of axis c
  kErrPadEmpty = 9,       ///< pad: mode b (1 reflect, 2 edge) on axis a of extent 0
  kErrDuplicate = 10,     ///< scatter with reduction none: output element a written twice
  kErrIntModZero = 11,    ///< integer modulo by zero
};

/// Elementwise ops (binary and unary) in one enumeration.
enum ElemOp : int {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kEqual,
  kPow,
  kMax,
  kMin,
  kAnd,
  kOr,
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kNeg,
  kSqrt,
  kReciprocal,
  kSigmoid,
  kTanh,
  kErf,
  kExp,
  kCos,
  kSin,
  kNot,
  kIsNan,
  kRelu,
  kAbs,
  kLog,
  kFloor,
  kCeil,
  kRound,
  kSign, // unary
  kXor,
  kMod,
  kFmod, // binary (kMod: integers only)
};

/// "fused_elementwise" (Program.h) as one kernel parameter: up to 8 leaves aligned to the out
/// shape and up to 16 steps (op, a, b: operand k < nIn is leaf k, nIn + j the result of step j;
/// b < 0 for unary ops).
struct FusedProgram {
  static constexpr int kMaxIn = 8, kMaxSteps = 16;
  int nIn = 0, nSteps = 0;
  int dtype = kF32; ///< of every leaf and the out
  Opd ins[kMaxIn];
  ElemOp op[kMaxSteps] = {};
  signed char a[kMaxSteps] = {}, b[kMaxSteps] = {};
};

/// Copy variants of the generic copy kernel.
enum CopyMode : int {
  kCopyPlain = 0, ///< dst = src
  kCopyWhere = 1, ///< dst = cond ? src : src2
  kCopyTriluUpper = 2,
  kCopyTriluLower = 3, ///< keep (i, j) of the last two dims, else 0
};

// ---- launchers (return the launch error; kernels report data errors through `err`) ----

/// out = op(a[, b]) over `shape`. floatPath: compute in double (either input is a float; unary:
/// the input is a float or the op has no integer form); otherwise in int64 with wrap-around.
hipError_t elementwise(hipStream_t s, ElemOp op, int nIn, Opd a, Opd b, Opd out, Shape shape, bool floatPath,
                       DevError *err);
/// out = the last step of `p` over `shape` (HipFusedElementwise.hip): each step computes as the
/// elementwise kernel (floatOp in double) and rounds to p.dtype, as storing its output would.
hipError_t fusedElementwise(hipStream_t s, const FusedProgram &p, Opd out, Shape shape);
/// Element copy between equal-shaped operands of one element size (see CopyMode). For the
/// trilu modes `k` is the diagonal offset; for kCopyWhere `cond` is a bool operand.
hipError_t copy(hipStream_t s, CopyMode mode, Opd dst, Opd src, Opd src2, Opd cond, Shape shape, long long k);
/// ONNX Cast rules (see Program.h "cast").
hipError_t cast(hipStream_t s, Opd dst, Opd src, Shape shape);
/// out = value (fvalue for float dtypes, ivalue otherwise).
hipError_t fill(hipStream_t s, Opd out, Shape shape, double fvalue, long long ivalue);
/// out[i] = start + i * delta (start/delta one-element operands of out's dtype).
hipError_t range(hipStream_t s, Opd out, Shape shape, Opd start, Opd delta);
/// out (i64) = ONNX Range element count of start, limit, delta.
hipError_t rangeLength(hipStream_t s, Opd out, Opd start, Opd limit, Opd delta, DevError *err);

/// Gather along `axis`: out shape = data[:axis] + indices + data[axis+1:]. `data`'s strides are
/// its own (rank dataRank), `indices`' its own (rank idxRank); out is aligned to `shape`.
hipError_t gather(hipStream_t s, Opd out, Shape shape, Opd data, int dataRank, const int64_t *dataSizes, Opd indices,
                  int idxRank, int axis, DevError *err);
/// GatherElements: out and indices share `shape`; data has `shape`'s rank and its own sizes.
hipError_t gatherElements(hipStream_t s, Opd out, Shape shape, Opd data, const int64_t *dataSizes, Opd indices,
                          int axis, DevError *err);
/// GatherND with batch dims b and m = indices' last dim. indices have rank q (own strides),
/// data rank r (own strides and sizes).
hipError_t gatherND(hipStream_t s, Opd out, Shape shape, Opd data, int r, const int64_t *dataSizes, Opd indices, int q,
                    int b, int m, DevError *err);

/// Reductions. `outer` is the out shape (the input rank, reduced dims 1); `extent` the reduced
/// extent shape (input rank, non-reduced dims 1). `in` strides are the input's own strides, `out`
/// aligned to `outer`. kind: 0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 l2, 6 sum_square,
/// 7 log_sum_exp. fp32 accumulation for f32/f16/bf16, fp64 for f64 and for integer l2 and
/// log_sum_exp (the result truncated toward zero), int64 with wrap-around for other integers.
hipError_t reduce(hipStream_t s, int kind, Opd out, Opd in, Shape outer, Shape extent);
/// Softmax along a line of length n: `lines` is the in shape with the axis set to 1; in/out are
/// aligned to it and axisStrideIn/Out step along the axis. `logOut`: log_softmax,
/// (x - max) - log(sum exp(x - max)).
hipError_t softmax(hipStream_t s, Opd out, Opd in, Shape lines, int64_t n, int64_t axisStrideIn, int64_t axisStrideOut,
                   bool logOut);
/// LeakyRelu over `shape` (out and in aligned to it): x < 0 ? alpha * x : x, in double.
hipError_t leakyRelu(hipStream_t s, Opd out, Opd in, Shape shape, double alpha);
/// arg_max / arg_min along lines (same geometry as softmax); out is i64 aligned to `lines`.
/// NaN is the extreme; `last` takes the last of equal extremes (select_last_index).
hipError_t argExtreme(hipStream_t s, Opd out, Opd in, Shape lines, int64_t n, int64_t axisStrideIn, bool isMax,
                      bool last);
/// one_hot over out's `shape`: `indices` aligned to it with stride 0 on `axis`; element k of the
/// depth axis is values[onE] where k equals the index (negative counts from the depth), else
/// values[offE] (element offsets into `values`).
hipError_t oneHot(hipStream_t s, Opd out, Shape shape, Opd indices, Opd values, int64_t offE, int64_t onE, int axis);
/// Layer norm: `rows` is X's shape with dims >= axis set to 1, `inner` X's shape with dims < axis
/// set to 1; every operand is aligned to X's full shape (scale/bias broadcast with stride 0).
hipError_t layerNorm(hipStream_t s, Opd out, Opd x, Opd scale, Opd bias, bool hasBias, Shape rows, Shape inner,
                     double eps);
/// Cumulative sum along lines (same geometry as softmax).
hipError_t cumsum(hipStream_t s, Opd out, Opd in, Shape lines, int64_t n, int64_t axisStrideIn, int64_t axisStrideOut,
                  bool exclusive, bool reverse);
/// Integer matmul: batch shape `batch` (a, b, out aligned to it), then M, K, N and the strides
/// of the two matrix dims of each operand.
hipError_t matmulInt(hipStream_t s, Opd out, Opd a, Opd b, Shape batch, int64_t M, int64_t K, int64_t N, int64_t am,
                     int64_t ak, int64_t bk, int64_t bn, int64_t om, int64_t on);

/// Float matmul for small batched products (same arguments as matmulInt): one warp per output
/// element; lane l sums the products of k = l, l + 32, ... with fused multiply-adds in fp32 (fp64
/// for f64), the 32 partial sums are added by a shuffle tree in a fixed order, and the result is
/// rounded once to the output's type.
hipError_t matmulSmall(hipStream_t s, Opd out, Opd a, Opd b, Shape batch, int64_t M, int64_t K, int64_t N, int64_t am,
                       int64_t ak, int64_t bk, int64_t bn, int64_t om, int64_t on);

// ---- decode GEMV (HipGemv.hip) ----

/// Launch geometry of one GEMV: `tiles` column tiles of 32 vectors of 16 bytes, K cut into
/// `chunks` chunks of `kChunk` rows; with more than one chunk the launch needs `partialFloats`
/// fp32 of workspace and `tiles` zeroed counters (left zeroed after the launch).
struct GemvPlan {
  int64_t tiles = 0, chunks = 1, kChunk = 0, partialFloats = 0;
};
/// Elements per 16-byte vector of a GEMV over `dtype` (f32 4, f16/bf16 8).
int gemvVectorWidth(int dtype);
/// The plan for a K x N weight on a device with `multiprocessors` SMs / CUs.
GemvPlan gemvPlan(int dtype, int64_t K, int64_t N, int multiprocessors);
/// y[N] = x[K] . W[K, N] (f32, f16 or bf16; fp32 accumulation, one rounding to the dtype).
/// x has element stride xStride, W row stride ldw (elements); y is contiguous. Preconditions
/// (host-checked): N and ldw multiples of gemvVectorWidth, W 16-byte aligned.
hipError_t gemv(hipStream_t s, int dtype, const void *x, int64_t xStride, const void *w, int64_t ldw, void *y,
                int64_t K, int64_t N, const GemvPlan &plan, float *partials, unsigned *counters);

// ---- data-dependent and shape-input ops (HipDataDependentKernels.hip) ----
// Every operand has its own strides (rank as noted); `shape` is the loop shape.

/// out (one-element i64) = number of nonzero elements of `in` (shape = in's sizes).
hipError_t countNonzero(hipStream_t s, Opd out, Opd in, Shape shape);
/// out i64[rank, n] = row-major indices of the nonzero elements of `in`; reports
/// kErrCountMismatch when there are not exactly n.
hipError_t nonzero(hipStream_t s, Opd out, Opd in, Shape shape, int64_t n, DevError *err);
/// Compress along `axis`: `shape` is out's shape (data has its rank); cond is 1-D of condLen.
hipError_t compress(hipStream_t s, Opd out, Shape shape, Opd data, Opd cond, int64_t condLen, int axis, int64_t extent,
                    DevError *err);
/// TopK along `axis` of x: `lines` is x's shape with the axis set to 1; values and indices have
/// x's rank with the axis extent k.
hipError_t topK(hipStream_t s, Opd values, Opd indices, Opd x, Shape lines, int axis, int64_t n, int64_t k,
                bool largest);
/// out[i] = x[i mod xSizes] over out's `shape`.
hipError_t tile(hipStream_t s, Opd out, Shape shape, Opd x, const int64_t *xSizes);
/// Pad (mode 0 constant, 1 reflect, 2 edge) with the begin pad per axis; value is one element.
hipError_t pad(hipStream_t s, Opd out, Shape shape, Opd x, const int64_t *xSizes, const int64_t *begins, int mode,
               Opd value, bool hasValue, DevError *err);
/// ScatterND updates applied to out (already a copy of data, rank r): `tuples` is indices' shape
/// without its last dim m, `slice` data's dims from m on. reduction 0 none .. 4 min.
hipError_t scatterND(hipStream_t s, Opd out, const int64_t *dataSizes, int r, Opd indices, Shape tuples, int m,
                     Opd updates, Shape slice, int reduction, DevError *err);
/// ScatterElements updates applied to out (a copy of data); `shape` is indices' (= updates') shape.
hipError_t scatterElements(hipStream_t s, Opd out, const int64_t *dataSizes, Opd indices, Opd updates, Shape shape,
                           int axis, int reduction, DevError *err);

} // namespace dq::rt::hipk
