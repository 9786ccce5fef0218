// The program artifact (.dqp): the only contract between the compiler and the runtime.
//
// This header is plain C++17 and must never include an MLIR header. The compiler's emitter fills a
// `Program`; `ProgramIO.h` writes and reads it (format documented in docs/artifact.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dq::rt {

/// Element types; values equal ONNX TensorProto.DataType codes.
enum class DType : uint8_t {
  F32 = 1,
  U8 = 2,
  I8 = 3,
  I32 = 6,
  I64 = 7,
  Bool = 9,
  F16 = 10,
  F64 = 11,
  BF16 = 16,
};

/// Size of one element in bytes (bool is 1 byte).
size_t dtypeSize(DType t);
/// Lower-case name ("f32", "bf16", "bool", ...). Unknown codes yield "dtype<N>".
std::string dtypeName(DType t);

/// Where an allocation lives. Host code may only touch Host and HostMapped memory.
enum class MemSpace : uint8_t { Device = 0, Host = 1, HostMapped = 2 };

/// How a device copy is performed (chosen by copy lowering from the effective strides).
enum class CopyKind : uint8_t {
  Memcpy = 0,  ///< both sides contiguous with identical layout: one linear transfer
  Copy2D = 1,  ///< rows contiguous, constant row pitch on each side (cudaMemcpy2D-like)
  Strided = 2, ///< general strided copy kernel
};

/// Instruction opcodes. Registers: `s` = int64 scalar registers, `b` = buffer-view registers.
/// A buffer view is {allocation, dtype, offset (elements), sizes[], strides[] (elements)}.
/// Operand conventions per opcode (results come first):
enum class Opcode : uint16_t {
  /// s[0] = imm[0].
  ConstIndex = 0,
  /// s[0] = name(s[1], s[2]); name in: add sub mul divsi(truncating) floordiv ceildiv remsi
  /// min max eq ne lt le gt ge and or. Division by zero is a run-time error.
  ScalarBinary = 1,
  /// s[0] = s[1] != 0 ? s[2] : s[3].
  Select = 2,
  /// s[0] = size of view b[0] along axis imm[0].
  Dim = 3,
  /// Fails the run with message `name` unless s[0] != 0.
  Assert = 4,
  /// b[0] = view of program input imm[0] (device memory, placed there by the runtime).
  Input = 10,
  /// b[0] = new allocation of `dtype` in `space` with dims s[...] (row-major contiguous).
  Alloc = 11,
  /// b[0] = output imm[0] allocated through the caller's output allocator with dims s[...] and
  /// `dtype` (device memory). imm[1..] optionally lists static dims the external type demands
  /// (-1 = dynamic); the runtime checks them before allocating.
  AllocOutput = 12,
  /// b[0] = host scratch buffer (MemSpace::Host) of `dtype`, dims s[...].
  GetHostScratch = 13,
  /// b[0] = the program's transient device pool, grown on demand to at least s[0] bytes.
  GetPool = 14,
  /// b[0] = contiguous view of `dtype` with dims s[2...] placed in pool b[1] at byte offset s[0];
  /// s[1] is the region's size in bytes (for bounds and poison tracking).
  PoolSubview = 15,
  /// Ends the lifetime of the allocation behind b[0] (pool regions: poisons the region only).
  Dealloc = 16,
  /// b[0] = device buffer holding constant imm[0] (see Program::constants) with dims s[...]
  /// taken from the constant's static dims.
  Constant = 17,
  /// b[0] = view of b[1] with offset s[0] (elements, absolute), sizes s[1..r], strides s[r+1..2r]
  /// where r = imm[0]. Bounds are checked against the allocation.
  View = 18,
  /// ABI cast check: fails with message `name` unless view b[0] has rank imm.size() and every
  /// dim i with imm[i] >= 0 equals imm[i].
  CheckShape = 19,
  /// s[0] = element of device view b[0] at indices s[1..] converted to int64 (bool -> 0/1,
  /// floats truncated); synchronizes and counts one scalar readback. imm[0] == 1 (only under
  /// the readback-without-sync inject knob, docs/fuzz/knobs.md): copies the element into
  /// host-mapped memory and loads it on the host with no synchronization (a device that obeys
  /// the conformance rules reports an unsynchronized read).
  ReadbackScalar = 20,
  /// s[0] = host load of view b[0] at indices s[1..]; traps if b[0] is device memory.
  LoadScalar = 21,
  /// host store of s[0] into view b[0] at indices s[1..]; traps if b[0] is device memory.
  StoreScalar = 22,
  /// host memcpy of view b[1] into view b[0] (same sizes, same dtype, any layouts), executed by
  /// the host element by element; traps if either side is device memory. Copy lowering never
  /// emits it for device buffers: it exists so a host copy of device memory can be expressed
  /// and caught.
  HostCopy = 23,
  /// copy view b[1] into view b[0] (same sizes, same dtype) by CopyKind imm[0]. Either side may
  /// be any space; host<->device transfers are counted by direction. The runtime checks the
  /// layouts allow the requested kind.
  Copy = 30,
  /// kernel `name` with ins b[0..n-1] and outs b[n..] where n = imm[0]; kernel attributes are
  /// imm[1..], fimm[], and s[] (see Kernels below).
  Kernel = 31,
  /// ends execution; output i is view b[i]. If output i was allocated by AllocOutput, b[i] must
  /// be exactly that buffer (same dims, dtype, contiguous at offset 0): anything else is an
  /// error naming the output and both shapes. Otherwise (e.g. a view of an input) the runtime
  /// allocates the output and copies (Counters::outputCopies).
  Return = 40,
};

/// Kernel names and their semantics (all operate on strided views; ins broadcast to the out
/// shape with numpy rules: ranks right-aligned, an input dim must be 1 or equal the out dim):
///   "add" "sub" "mul" "div"          out = a op b (integer div truncates; int div by 0 -> error)
///   "equal"                          out(bool) = a == b
///   "where"                          ins cond(bool), x, y -> out
///   "cast"                           element conversion in -> out dtype (ONNX Cast rules:
///                                    float->int truncates toward zero, x->bool is x != 0,
///                                    f32->f16/bf16 round to nearest even)
///   "expand"                         broadcast copy in -> out
///   "slice"                          out[i] = in[start + i*step] per axis; s = starts[r], steps[r]
///                                    (already normalized and clamped by the compiler)
///   "transpose"                      imm[1..] = perm; out[i_0..] = in[i_perm^-1...] (ONNX perm)
///   "concat"                         imm[1] = axis; ins concatenated along axis -> out
///   "gather"                         imm[1] = axis; ins data, indices(i32/i64; negative wraps;
///                                    out of range -> error) -> out (ONNX Gather)
///   "range"                          ins start (0-d), delta (0-d) -> out[i] = start + i*delta
///   "fill"                           out = value; fimm[0] for float dtypes, imm[1] otherwise
///   "range_length"                   ins start, limit, delta (one-element, one numeric dtype) ->
///                                    out (one-element i64) = max(ceil((limit - start) / delta), 0)
///                                    (ONNX Range element count; floats computed in double,
///                                    integers exactly); delta == 0 -> error
/// Transformer op set (ONNX semantics; floats accumulate in at least fp32). Each kernel admits
/// the dtypes its ONNX op admits (listed below; "float" = f32 f64 f16 bf16); any other dtype is a
/// run-time "unsupported" error naming the kernel. Indices (i32/i64) may be negative and then
/// count from the end; an index out of range is an error. Axes marked "wraps" may be negative
/// and then count from the end as in ONNX:
///   "pow"                            binary, broadcasting like "add"; base float/i32/i64, exponent
///                                    any numeric dtype (may differ from the base; ONNX T1); out
///                                    has the base dtype. Integer base and exponent: exact with
///                                    wrap-around for exponent >= 0, the real result truncated
///                                    toward zero for exponent < 0 (0 to a negative power ->
///                                    error); integer base, float exponent: computed in floating
///                                    point, truncated toward zero
///   "max" "min"                      binary, broadcasting like "add"; numeric, one dtype; NaN if
///                                    either input is NaN
///   "and" "or"                       bool binary
///   "less" "less_equal" "greater" "greater_equal"   out(bool) = a op b; numeric ins of one dtype
///   "neg" "sqrt" "reciprocal" "sigmoid" "tanh" "erf" "exp" "cos" "sin"   unary float (neg: also
///                                    i8 i32 i64, wrapping; ONNX admits no unsigned type. erf:
///                                    also integers, the result truncated toward zero)
///   "not"                            bool unary; "isnan": float in -> bool out
///   "matmul"                         ins a[..., M, K], b[..., K, N] (batch dims broadcast; both
///                                    rank >= 2, the compiler reshapes 1-D operands) -> out[..., M, N]
///                                    with rank max(rank a, rank b); float, i32, i64 (integers wrap)
///   "softmax"                        imm[1] = axis (non-negative); softmax along that one axis,
///                                    computed as exp(x - max) / sum exp(x - max); float
///   "layer_norm"                     imm[1] = first normalized axis (wraps); fimm[0] = epsilon;
///                                    ins X, scale, bias (bias may be absent: n = 2 or 3; scale and
///                                    bias broadcast to X like "add"; all one float dtype) -> Y =
///                                    (X - mean) / sqrt(var + epsilon) * scale + bias, with mean
///                                    and population variance over axes [axis, rank) in at least fp32
///   "reduce_sum" "reduce_mean" "reduce_max"   imm[1..] = reduced axes (non-negative, strictly
///                                    increasing; none reduces nothing); out has the input's rank
///                                    with reduced dims of size 1 (keepdims is a view the compiler
///                                    adds); sum and mean: float/i32/i64, integer mean truncates
///                                    toward zero; max: every dtype, NaN if any element is NaN, bool
///                                    is "any"; reducing an empty extent: sum 0, mean NaN (integer
///                                    mean -> error), max -> error. Axes known only at run time:
///                                    no imm axes and s[] = one 0/1 flag per input axis (1 = reduced)
///   "trilu"                          imm[1] = upper (1) or lower (0); s[0] = k (diagonal offset);
///                                    in -> out over the last two dims (rank >= 2, every dtype):
///                                    element (i, j) is kept when j - i >= k (upper) or j - i <= k
///                                    (lower), otherwise 0
///   "cumsum"                         imm[1] = axis (wraps), imm[2] = exclusive, imm[3] = reverse
///                                    (flags 0 or 1); out[j] = sum of in[i] for i <= j (i < j when
///                                    exclusive; i >= j / i > j when reverse); float/i32/i64. An axis
///                                    known only at run time is s[0] (wraps), overriding imm[1]
///   "gather_elements"                imm[1] = axis (wraps); ins data, indices (same rank, no
///                                    larger than data off the axis) -> out (ONNX GatherElements)
///   "gather_nd"                      imm[1] = batch_dims; ins data, indices -> out (ONNX GatherND;
///                                    indices may also be i32)
/// Elementwise and reduction tail (same conventions as above):
///   "relu" "abs" "sign"              unary; float and signed integers (abs, sign: also u8); NaN stays
///                                    NaN; integer abs wraps (abs(INT_MIN) = INT_MIN)
///   "log" "floor" "ceil" "round"     unary float; round takes halves to the even neighbour
///   "xor"                            bool binary
///   "mod"                            binary integers (i8 u8 i32 i64): the remainder with the
///                                    divisor's sign (ONNX Mod fmod = 0); modulo by 0 -> error
///   "fmod"                           binary numeric: the remainder with the dividend's sign (ONNX
///                                    Mod fmod = 1, C fmod); integer modulo by 0 -> error
///   "leaky_relu"                     fimm[0] = alpha; float in -> out = x < 0 ? alpha * x : x
///   "log_softmax"                    as "softmax", out = (x - max) - log(sum exp(x - max))
///   "reduce_min" "reduce_prod" "reduce_l2" "reduce_sum_square" "reduce_log_sum_exp"   axes as the
///                                    other reductions. min: every dtype, NaN if any element is NaN,
///                                    bool is "all", empty extent -> error. prod, sum_square:
///                                    float/i32/i64, integers wrap; empty gives 1 / 0. l2 =
///                                    sqrt(sum x^2), log_sum_exp = log(sum exp(x)): float/i32/i64,
///                                    an integer result truncated toward zero; empty gives 0 / -inf
///                                    (integer log_sum_exp of an empty extent -> error)
///   "arg_max" "arg_min"              imm[1] = axis (non-negative), imm[2] = select_last_index (0/1);
///                                    numeric in -> out i64 with the axis dim 1: the index of the
///                                    first (or last) extreme; NaN counts as the extreme; an empty
///                                    axis -> error
///   "one_hot"                        imm[1] = depth axis of out (non-negative); ins indices (numeric;
///                                    floats truncated toward zero), values [off, on] -> out of
///                                    values' dtype, indices' dims with depth = out dim imm[1]
///                                    inserted; out = on where the position equals the index (a
///                                    negative index counts from depth), else off; an index outside
///                                    [-depth, depth) leaves its row off
/// Data-dependent extents and shape-input ops. An output extent known only after a kernel ran
/// comes from "count_nonzero" into a one-element device tensor, read back once
/// (ReadbackScalar); the consumer's output is then allocated with exactly that extent (Alloc, or
/// AllocOutput for a graph output), never as a view of a larger buffer:
///   "count_nonzero"                  in (every dtype) -> out (one-element i64) = number of
///                                    elements != 0 (NaN counts as nonzero)
///   "nonzero"                        in (every dtype) -> out i64[rank, n]: column j holds the
///                                    index of the j-th nonzero element in row-major order; n must
///                                    equal the count (else error)
///   "compress"                       imm[1] = axis (non-negative); ins data, condition (1-D,
///                                    nonzero = keep) -> out with the axis extent = kept count
///                                    (ONNX Compress; a true condition element beyond the axis
///                                    extent -> error)
///   "top_k"                          imm[1] = axis (non-negative), imm[2] = largest (0/1); in ->
///                                    outs values, indices(i64), k = out extent on the axis (<= in
///                                    extent); sorted; equal values keep the lower index first; NaN
///                                    ranks above +inf; numeric dtypes (bool -> unsupported)
///   "tile"                           in -> out[i] = in[i mod in dims] (each out dim a multiple of
///                                    the in dim); every dtype
///   "pad"                            imm[1] = mode (0 constant, 1 reflect, 2 edge); s[] = begin
///                                    pad per axis (negative crops); ins data [, value (one element,
///                                    data's dtype; absent = 0)] -> out; out[i] = data[i - begin]
///                                    inside, else value / mirrored without repeating the edge
///                                    (period 2(n-1)) / clamped; reflect or edge of an empty axis
///                                    -> error
///   "scatter_nd"                     imm[1] = reduction (0 none, 1 add, 2 mul, 3 max, 4 min); ins
///                                    data, indices(i32/i64), updates -> out = data with updates
///                                    written at the index tuples (ONNX ScatterND)
///   "scatter_elements"               imm[1] = axis (non-negative), imm[2] = reduction as above;
///                                    ins data, indices, updates -> out (ONNX ScatterElements)
///                                    Both scatters: updates apply in row-major order, floats
///                                    combine in double rounded per step, integers wrap, max/min
///                                    propagate NaN; two updates of one element with reduction
///                                    none -> error (ONNX leaves it undefined)
/// Elementwise fusion (the dq-fuse-elementwise pass, docs/passes/fuse-elementwise.md):
///   "fused_elementwise"              ins = up to kFusedMaxInputs leaves (strided views that
///                                    broadcast to out like the ins of "add"), one out; every
///                                    leaf and out of one float dtype (f32 f64 f16 bf16). imm[1..]
///                                    is a postfix program of 1..kFusedMaxSteps steps, three
///                                    immediates each: (op code, operand a, operand b). An operand
///                                    index k < n (= imm[0], the leaf count) is leaf k; n + j is
///                                    the result of step j, which must come before the step that
///                                    reads it. Unary ops take b = -1. The last step's result is
///                                    out. Op codes: FusedOp below. Each step computes as the
///                                    elementwise kernel of that name would (in double from
///                                    values of the dtype) and rounds its result to the dtype, so
///                                    the out is bit for bit the out of the unfused kernels run
///                                    one after another; a leaf or step result is read at the
///                                    out index broadcast to its shape (right-aligned, dims of
///                                    size 1 read at 0).
/// onnxruntime contrib ops (com.microsoft semantics, docs/contrib-ops.md; checks in
/// lib/KernelValidateContrib.h):
///   "matmul_nbits"                   ins A[..., K] (f32/f16), B u8 [N, k_blocks, block_size *
///                                    bits / 8], scales (A's dtype, N * k_blocks elements), then
///                                    zero points when imm[5] != 0, then bias [N] when imm[6];
///                                    imm[1..7] = K, N, bits (2/4/8), block_size (power of two >=
///                                    16), zero-point kind (0 none: 2^(bits-1); 1 packed u8, N *
///                                    ceil(k_blocks * bits / 8) bytes; 2 A's dtype, N * k_blocks),
///                                    has bias, zero-point row pitch (ceil(k_blocks * bits / 8)
///                                    bytes, or k_blocks; 0 without zero points) -> out[..., N] = A * W^T (+ bias),
///                                    W[n, k] = (code - zero point) * scale of block k / block_size; codes packed low
///                                    bits first along K; the last block may be padded
///   "simplified_layer_norm"          imm[1] = first normalized axis (wraps); fimm[0] = epsilon;
///                                    ins X, scale (broadcasting to X) -> Y = X / sqrt(mean(X^2 over
///                                    [axis, rank)) + epsilon) * scale; float
///   "skip_simplified_layer_norm"     imm[1] = has bias; fimm[0] = epsilon; ins X, skip, gamma
///                                    [, bias] (broadcasting to X) -> outs Y, S: S = X + skip (+
///                                    bias), Y = S / sqrt(mean(S^2 over the last axis) + epsilon)
///                                    * gamma; float
///   "rotary_embedding"               imm[1..3] = interleaved, num_heads (0: hidden / (2 * cache
///                                    width)), rotary_embedding_dim (0: the head size); ins X
///                                    [B, S, heads * head] or [B, heads, S, head], position_ids
///                                    i64 [B, S] or [1] (offset: position = p[0] + s), cos_cache,
///                                    sin_cache [positions, rotary_dim / 2] -> out: the first
///                                    rotary_dim values of each head rotated in pairs (i, i +
///                                    rotary_dim / 2), or (2i, 2i + 1) when interleaved
///   "group_query_attention"          imm[1..7] = num_heads, kv_num_heads, packed (query holds
///                                    Q, K, V; no key/value ins), has past, do_rotary,
///                                    rotary_interleaved, local_window_size (<= 0: none); fimm =
///                                    scale (0: 1 / sqrt(head)), softcap (0: none); s[0] =
///                                    total_sequence_length; ins query [B, S, hidden], [key, value
///                                    [B, S, kv * head]], [past_key, past_value [B, kv, P, head]],
///                                    seqlens_k i32 [B] (total length - 1 per batch row), [cos,
///                                    sin caches] -> outs output [B, S, heads * head], present
///                                    key and value [B, kv, max(total, P), head]. Row b has
///                                    past = 0 when S == total (the first prompt) else seqlens_k[b]
///                                    + 1 - S; present holds its first `past` past rows, then the
///                                    S new ones (keys rotated at positions past + s), zeros after;
///                                    query row s attends causally to [0, past + s] (the last
///                                    local_window_size + 1 of them when set); seqlens_k outside
///                                    [0, total) -> error
/// Unknown kernel names are rejected when the program is loaded.

/// Op codes of "fused_elementwise" steps: a fixed numbering, never reused or renumbered.
/// Binary codes 0..6, unary codes 7..22; each equals the elementwise kernel of its name.
enum class FusedOp : int64_t {
  Add = 0,
  Sub = 1,
  Mul = 2,
  Div = 3,
  Pow = 4,
  Max = 5,
  Min = 6,
  Neg = 7,
  Sqrt = 8,
  Reciprocal = 9,
  Sigmoid = 10,
  Tanh = 11,
  Exp = 12,
  Log = 13,
  Erf = 14,
  Relu = 15,
  Abs = 16,
  Cos = 17,
  Sin = 18,
  Floor = 19,
  Ceil = 20,
  Round = 21,
  Sign = 22,
};
/// Most leaves (inputs) and steps of one "fused_elementwise" (fixed so a device can pass the
/// program in a fixed-size parameter block).
constexpr int kFusedMaxInputs = 8;
constexpr int kFusedMaxSteps = 16;
/// Immediates per step: op code, operand a, operand b.
constexpr int kFusedStepImms = 3;
/// The elementwise kernel name of op code `code` ("add", "sqrt", ...); nullptr when unknown.
const char *fusedOpName(int64_t code);
/// 2 for a binary op code, 1 for a unary one, 0 for an unknown code.
int fusedOpArity(int64_t code);
/// The op code of elementwise kernel `name`; -1 when "fused_elementwise" does not take it.
int64_t fusedOpCode(const std::string &name);
/// Checks a "fused_elementwise" program: `inputs` leaves (1..kFusedMaxInputs) and `steps` =
/// imm[1..] (a multiple of 3, 1..kFusedMaxSteps steps, known op codes, operand a in
/// [0, inputs + j) for step j, b likewise for binary ops and -1 for unary ones). Returns "" when
/// valid, else the problem naming the step ("step 2: operand a = 11 is not a leaf or an earlier
/// step (3 leaves, step 2)").
std::string checkFusedProgram(int64_t inputs, const std::vector<int64_t> &steps);

struct Instr {
  Opcode op = Opcode::ConstIndex;
  std::string name;         ///< scalar op / kernel name / assert message
  std::vector<int32_t> s;   ///< scalar registers
  std::vector<int32_t> b;   ///< buffer registers
  std::vector<int64_t> imm; ///< integer immediates
  std::vector<double> fimm; ///< float immediates
  DType dtype = DType::F32; ///< element type where the opcode needs one
  MemSpace space = MemSpace::Device;
  std::string loc; ///< source location (ONNX node name or file:line) for errors
};

/// Declared interface of one program input or output.
struct TensorSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> dims; ///< -1 for a dynamic dim
};

/// A constant; its bytes live in the sidecar file at [offset, offset+size).
struct ConstantSpec {
  DType dtype = DType::F32;
  std::vector<int64_t> dims;
  uint64_t offset = 0; ///< bytes into the sidecar
  uint64_t size = 0;   ///< bytes
};

/// A whole compiled program.
struct Program {
  /// 2: ReadbackScalar takes imm[0] = 1 (unsynchronized); Return refuses an allocated output
  /// returned with other dims, dtype or layout.
  static constexpr uint32_t kFormatVersion = 2;
  uint32_t formatVersion = kFormatVersion;
  std::string compilerVersion; ///< dynqual version that produced it
  std::string pipelineSpec;    ///< exact textual pass pipeline that produced it
  std::string sourceName;      ///< model path or function name
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  int32_t numScalarRegs = 0;
  int32_t numBufferRegs = 0;
  std::vector<Instr> code;
  std::vector<ConstantSpec> constants;
  std::vector<uint8_t> constantData; ///< sidecar contents (in memory)
};

} // namespace dq::rt
