//===- ContribOps.cpp - onnxruntime contrib ops -> dq.kernel ---------------===//
//
// The com.microsoft ops of onnxruntime GenAI decoders (MatMulNBits, GroupQueryAttention,
// RotaryEmbedding, SkipSimplifiedLayerNormalization) and the default-domain
// SimplifiedLayerNormalization lower to one dq.kernel each (names and immediates in Program.h).
// Batch, sequence and past lengths stay index SSA values; MatMulNBits keeps B packed, so no
// dequantized copy of the weights ever exists. What the kernels do not implement is refused here
// with an "unsupported:" error naming the node and the attribute, never computed differently.
//
//===----------------------------------------------------------------------===//
#include "ONNXLowering.h"

#include "dq/Dialect/DQDialect.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::dq;
using namespace mlir::dq::onnx_lowering;

namespace {

StringRef nodeOf(Operation *op) {
  if (auto n = op->getAttrOfType<StringAttr>("onnx.name")) return n.getValue();
  return "<unnamed>";
}

/// "OpType node 'name'": the prefix of every message of this file.
std::string where(Operation *op, StringRef opType) { return (opType + " node '" + nodeOf(op) + "'").str(); }

std::optional<double> floatAttr(Operation *op, StringRef name) {
  if (auto f = op->getAttrOfType<FloatAttr>(name)) return f.getValueAsDouble();
  return std::nullopt;
}

/// dq.kernel `name` on `ins` with one fresh tensor per entry of `outs` (dims, element type).
SmallVector<LoweredValue> kernelN(Lowering &L, StringRef name, ArrayRef<Value> ins,
                                  ArrayRef<std::pair<SmallVector<Value>, Type>> outs, ArrayRef<int64_t> imm,
                                  ArrayRef<double> fimm = {}, ArrayRef<Value> scalars = {}) {
  SmallVector<Value> inits;
  SmallVector<Type> types;
  for (const auto &[dims, type] : outs) {
    inits.push_back(L.emptyTensor(dims, type));
    types.push_back(inits.back().getType());
  }
  auto k = KernelOp::create(L.b, L.loc, types, name, ins, inits, scalars, imm, fimm);
  SmallVector<LoweredValue> results;
  for (auto [i, out] : llvm::enumerate(outs))
    results.push_back(L.fromTensor(k.getResult(i), out.first));
  return results;
}

/// Defines result `i` of `op` as `v`, or refuses when an output the kernel does not compute is
/// used (`what` names it).
LogicalResult defineOptional(Lowering &L, Operation *op, unsigned i, const LoweredValue &v, StringRef what) {
  if (i >= op->getNumResults()) return success();
  if (!op->getResult(i).use_empty()) return L.unsupported(what);
  L.define(op->getResult(i), v);
  return success();
}

bool isF32OrF16(Type t) { return isa<Float32Type, Float16Type>(t); }

/// The static element count of `v`, when every dim is a constant.
std::optional<int64_t> staticCount(Lowering &L, const LoweredValue &v) {
  int64_t n = 1;
  for (Value d : v.dims) {
    auto c = L.constOf(d);
    if (!c) return std::nullopt;
    n *= *c;
  }
  return n;
}

//===----------------------------------------------------------------------===//
// MatMulNBits
//===----------------------------------------------------------------------===//

LogicalResult lowerMatMulNBits(Lowering &L, Operation *op) {
  const std::string w = where(op, "MatMulNBits");
  LoweredValue *a = L.operand(op, 0), *b = L.operand(op, 1), *scales = L.operand(op, 2);
  if (!a || !b || !scales) return L.error(w + ": A, B and scales are required");
  if (L.operand(op, 4)) return L.unsupported(w + ": input g_idx (act-order) is not implemented");
  auto K = L.intAttr(op, "K"), N = L.intAttr(op, "N"), block = L.intAttr(op, "block_size");
  if (!K || !N || !block) return L.error(w + ": attributes K, N and block_size are required");
  int64_t bits = L.intAttr(op, "bits").value_or(4);
  if (bits != 2 && bits != 4 && bits != 8)
    return L.unsupported(w + ": attribute bits = " + Twine(bits) + " (2, 4 and 8 are implemented)");
  if (*block < 16 || (*block & (*block - 1)) != 0)
    return L.unsupported(w + ": attribute block_size = " + Twine(*block) + " (a power of two >= 16 is)");
  if (*K <= 0 || *N <= 0) return L.error(w + ": K and N must be positive");
  if (!isF32OrF16(a->elementType)) return L.unsupported(w + ": A must be float32 or float16");
  if (a->rank < 1) return L.error(w + ": A must have rank >= 1");
  if (auto k = L.constOf(a->dims.back()); k && *k != *K)
    return L.error(w + ": A's last dim is " + Twine(*k) + ", attribute K is " + Twine(*K));
  auto u8 = [](Type t) { return t.isUnsignedInteger(8); };
  if (!u8(b->elementType)) return L.error(w + ": B must be uint8");
  const int64_t kBlocks = (*K + *block - 1) / *block, blob = *block * bits / 8;
  if (auto n = staticCount(L, *b); n && *n != *N * kBlocks * blob)
    return L.error(w + ": B holds " + Twine(*n) +
                   " bytes, N * ceil(K / block_size) * block_size * bits / 8 = " + Twine(*N * kBlocks * blob));
  if (scales->elementType != a->elementType) return L.error(w + ": scales must have A's element type");
  if (auto n = staticCount(L, *scales); n && *n != *N * kBlocks)
    return L.error(w + ": scales holds " + Twine(*n) + " values, N * ceil(K / block_size) = " + Twine(*N * kBlocks));
  SmallVector<Value> ins = {L.tensorOf(*a)};
  // B is viewed as [N, k_blocks, blob] whatever its declared shape (ORT accepts a flat one too).
  SmallVector<Value> bDims = {L.idx(*N), L.idx(kBlocks), L.idx(blob)};
  bool bIsBlocked = b->rank == 3;
  for (int i = 0; i < 3 && bIsBlocked; ++i)
    bIsBlocked = L.same(b->dims[i], bDims[i]);
  if (bIsBlocked) {
    ins.push_back(L.tensorOf(*b));
  } else {
    auto bView = reshapeTensor(L, *b, bDims);
    if (failed(bView)) return failure();
    ins.push_back(*bView);
  }
  ins.push_back(L.tensorOf(*scales));
  int64_t zpKind = 0, zpPitch = 0;
  if (LoweredValue *zp = L.operand(op, 3)) {
    if (u8(zp->elementType)) {
      zpKind = 1;
      const int64_t perRow = (kBlocks * bits + 7) / 8;
      // Known-unsound (nbits-zero-point-pitch): the row pitch floored, so every row after the
      // first reads the zero points of another row's blocks when a row's bits end mid-byte.
      zpPitch = L.knob == ::dq::InjectKnob::NBitsZeroPointPitch ? kBlocks * bits / 8 : perRow;
      if (auto n = staticCount(L, *zp); n && *n != *N * perRow)
        return L.error(w + ": packed zero_points holds " + Twine(*n) +
                       " bytes, N * ceil(k_blocks * bits / 8) = " + Twine(*N * perRow));
    } else if (zp->elementType == a->elementType) {
      zpKind = 2;
      zpPitch = kBlocks;
      if (auto n = staticCount(L, *zp); n && *n != *N * kBlocks)
        return L.error(w + ": zero_points holds " + Twine(*n) + " values, N * k_blocks = " + Twine(*N * kBlocks));
    } else {
      return L.unsupported(w + ": zero_points must be uint8 (packed) or A's element type");
    }
    ins.push_back(L.tensorOf(*zp));
  }
  LoweredValue *bias = L.operand(op, 5);
  if (bias) {
    if (bias->elementType != a->elementType) return L.error(w + ": bias must have A's element type");
    if (auto n = staticCount(L, *bias); n && *n != *N)
      return L.error(w + ": bias holds " + Twine(*n) + " values, N = " + Twine(*N));
    ins.push_back(L.tensorOf(*bias));
  }
  SmallVector<Value> outDims(a->dims.begin(), a->dims.end() - 1);
  outDims.push_back(L.idx(*N));
  // accuracy_level only lets an execution provider quantize A; the result is the unquantized one.
  auto r = kernelN(L, "matmul_nbits", ins, {{outDims, a->elementType}},
                   {*K, *N, bits, *block, zpKind, bias ? 1 : 0, zpPitch});
  L.define(op->getResult(0), r[0]);
  return success();
}

//===----------------------------------------------------------------------===//
// SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization
//===----------------------------------------------------------------------===//

LogicalResult lowerSimplifiedLayerNorm(Lowering &L, Operation *op) {
  const std::string w = where(op, "SimplifiedLayerNormalization");
  LoweredValue *x = L.operand(op, 0), *scale = L.operand(op, 1);
  if (!x || !scale) return L.error(w + ": X and scale are required");
  if (!isa<FloatType>(x->elementType) || scale->elementType != x->elementType)
    return L.unsupported(w + ": X and scale must be one float type");
  if (x->rank < 1) return L.error(w + ": X must have rank >= 1");
  auto axis = L.normalizeAxis(L.intAttr(op, "axis").value_or(-1), x->rank);
  if (failed(axis)) return failure();
  int64_t stash = L.intAttr(op, "stash_type").value_or(1);
  if (stash != 1) return L.unsupported(w + ": attribute stash_type = " + Twine(stash) + " (1, float, is)");
  double eps = floatAttr(op, "epsilon").value_or(1e-5);
  auto r = kernelN(L, "simplified_layer_norm", {L.tensorOf(*x), L.tensorOf(*scale)}, {{x->dims, x->elementType}},
                   {*axis}, {eps});
  L.define(op->getResult(0), r[0]);
  return defineOptional(L, op, 1, r[0], w + ": output inv_std_var is not implemented");
}

LogicalResult lowerSkipSimplifiedLayerNorm(Lowering &L, Operation *op) {
  const std::string w = where(op, "SkipSimplifiedLayerNormalization");
  LoweredValue *x = L.operand(op, 0), *skip = L.operand(op, 1), *gamma = L.operand(op, 2), *bias = L.operand(op, 3);
  if (!x || !skip || !gamma) return L.error(w + ": input, skip and gamma are required");
  for (LoweredValue *v : {skip, gamma, bias})
    if (v && v->elementType != x->elementType) return L.error(w + ": every input must have the input's element type");
  if (!isa<FloatType>(x->elementType)) return L.unsupported(w + ": the input must be a float tensor");
  if (x->rank < 1) return L.error(w + ": the input must have rank >= 1");
  double eps = floatAttr(op, "epsilon").value_or(1e-5);
  SmallVector<Value> ins = {L.tensorOf(*x), L.tensorOf(*skip), L.tensorOf(*gamma)};
  if (bias) ins.push_back(L.tensorOf(*bias));
  auto r = kernelN(L, "skip_simplified_layer_norm", ins, {{x->dims, x->elementType}, {x->dims, x->elementType}},
                   {bias ? 1 : 0}, {eps});
  L.define(op->getResult(0), r[0]);
  if (failed(defineOptional(L, op, 1, r[0], w + ": output mean is not implemented")) ||
      failed(defineOptional(L, op, 2, r[0], w + ": output inv_std_var is not implemented")))
    return failure();
  if (op->getNumResults() > 3) L.define(op->getResult(3), r[1]);
  return success();
}

//===----------------------------------------------------------------------===//
// RotaryEmbedding
//===----------------------------------------------------------------------===//

LogicalResult lowerRotaryEmbedding(Lowering &L, Operation *op) {
  const std::string w = where(op, "RotaryEmbedding");
  LoweredValue *x = L.operand(op, 0), *pos = L.operand(op, 1), *cosC = L.operand(op, 2), *sinC = L.operand(op, 3);
  if (!x || !pos || !cosC || !sinC) return L.error(w + ": input, position_ids, cos_cache and sin_cache are required");
  if (!isF32OrF16(x->elementType)) return L.unsupported(w + ": the input must be float32 or float16");
  if (x->rank != 3 && x->rank != 4) return L.error(w + ": the input must have rank 3 or 4");
  if (!pos->elementType.isInteger(64)) return L.error(w + ": position_ids must be int64");
  if (cosC->elementType != x->elementType || sinC->elementType != x->elementType)
    return L.error(w + ": cos_cache and sin_cache must have the input's element type");
  if (L.intAttr(op, "is_packed_batching").value_or(0) != 0)
    return L.unsupported(w + ": attribute is_packed_batching = 1");
  if (auto s = floatAttr(op, "scale"); s && *s != 1.0)
    return L.unsupported(w + ": attribute scale = " + std::to_string(*s) + " (1.0 is implemented)");
  int64_t interleaved = L.intAttr(op, "interleaved").value_or(0) != 0;
  // Known-unsound (rotary-layout-swap): interleaved and half-split pairs mixed up.
  if (L.knob == ::dq::InjectKnob::RotaryLayoutSwap) interleaved = !interleaved;
  int64_t heads = L.intAttr(op, "num_heads").value_or(0), dim = L.intAttr(op, "rotary_embedding_dim").value_or(0);
  if (dim > 0 && heads == 0 && x->rank == 3)
    return L.error(w + ": rotary_embedding_dim needs num_heads for a 3-D input");
  auto r = kernelN(L, "rotary_embedding", {L.tensorOf(*x), L.tensorOf(*pos), L.tensorOf(*cosC), L.tensorOf(*sinC)},
                   {{x->dims, x->elementType}}, {interleaved, heads, dim});
  L.define(op->getResult(0), r[0]);
  return success();
}

//===----------------------------------------------------------------------===//
// GroupQueryAttention
//===----------------------------------------------------------------------===//

LogicalResult lowerGroupQueryAttention(Lowering &L, Operation *op) {
  const std::string w = where(op, "GroupQueryAttention");
  auto heads = L.intAttr(op, "num_heads"), kvHeads = L.intAttr(op, "kv_num_heads");
  if (!heads || !kvHeads) return L.error(w + ": attributes num_heads and kv_num_heads are required");
  if (*heads <= 0 || *kvHeads <= 0 || *heads % *kvHeads != 0)
    return L.unsupported(w + ": attribute num_heads = " + Twine(*heads) +
                         " is not a multiple of kv_num_heads = " + Twine(*kvHeads));
  for (unsigned i = 9; i < op->getNumOperands(); ++i)
    if (L.operand(op, i))
      return L.unsupported(w + ": input " + Twine(i) +
                           " (position_ids, attention_bias, head_sink or a quantized cache scale)");
  if (L.intAttr(op, "smooth_softmax").value_or(0) > 0) return L.unsupported(w + ": attribute smooth_softmax = 1");
  if (L.intAttr(op, "qk_output").value_or(0) != 0) return L.unsupported(w + ": attribute qk_output");
  for (StringRef q : {"k_quant_type", "v_quant_type"})
    if (auto s = op->getAttrOfType<StringAttr>(q); s && s.getValue() != "NONE")
      return L.unsupported(w + ": attribute " + q + " = " + s.getValue() + " (a quantized KV cache)");
  LoweredValue *q = L.operand(op, 0), *k = L.operand(op, 1), *v = L.operand(op, 2), *pk = L.operand(op, 3),
               *pv = L.operand(op, 4), *seqlens = L.operand(op, 5), *total = L.operand(op, 6), *cosC = L.operand(op, 7),
               *sinC = L.operand(op, 8);
  if (!q || !seqlens || !total) return L.error(w + ": query, seqlens_k and total_sequence_length are required");
  if (!isF32OrF16(q->elementType)) return L.unsupported(w + ": query must be float32 or float16");
  if (q->rank != 3) return L.error(w + ": query must be [batch, sequence, hidden]");
  if (bool(k) != bool(v)) return L.error(w + ": key and value must be both present or both absent (packed QKV)");
  if (bool(pk) != bool(pv)) return L.error(w + ": past_key and past_value must be both present or both absent");
  bool doRotary = L.intAttr(op, "do_rotary").value_or(0) != 0;
  if (doRotary && (!cosC || !sinC)) return L.error(w + ": do_rotary = 1 needs cos_cache and sin_cache");
  if (!seqlens->elementType.isInteger(32)) return L.error(w + ": seqlens_k must be int32");
  for (LoweredValue *t : {k, v, pk, pv, cosC, sinC})
    if (t && t->elementType != q->elementType) return L.unsupported(w + ": every float input must be query's type");
  const bool packed = !k;
  const int64_t width = packed ? *heads + 2 * *kvHeads : *heads;
  auto hidden = L.constOf(q->dims[2]);
  if (!hidden) return L.unsupported(w + ": a query hidden size known only at run time");
  if (*hidden % width != 0)
    return L.error(w + ": query hidden size " + Twine(*hidden) + " is not a multiple of " + Twine(width));
  const int64_t headSize = *hidden / width;
  if (pk && pk->rank != 4) return L.error(w + ": past_key must be [batch, kv_num_heads, past, head]");
  // total_sequence_length decides the present length: a host value (folded from Shape when the
  // graph computes it from the attention mask, as the builder does; else read back once).
  auto totalHost = L.hostOf(*total, "total_sequence_length of GroupQueryAttention");
  if (failed(totalHost)) return failure();
  if (totalHost->size() != 1) return L.error(w + ": total_sequence_length must hold one value");
  Value totalLen = (*totalHost)[0];
  // seqlens_k is read as [batch] whatever its rank ([batch] or [batch, 1]).
  SmallVector<Value> ins = {L.tensorOf(*q)};
  if (!packed) {
    ins.push_back(L.tensorOf(*k));
    ins.push_back(L.tensorOf(*v));
  }
  Value presentLen = totalLen;
  if (pk) {
    ins.push_back(L.tensorOf(*pk));
    ins.push_back(L.tensorOf(*pv));
    presentLen = L.max(totalLen, pk->dims[2]);
  }
  auto seqView = reshapeTensor(L, *seqlens, {q->dims[0]});
  if (failed(seqView)) return failure();
  if (L.knob == ::dq::InjectKnob::GqaIgnoresSeqlens) {
    // Known-unsound (gqa-ignores-seqlens): every row taken as total_sequence_length long, so a
    // padded row's past and new tokens are read from the wrong positions.
    LoweredValue last = L.fromHost(seqlens->elementType, 1, {L.sub(totalLen, L.idx(1))});
    Value init = L.emptyTensor({q->dims[0]}, seqlens->elementType);
    seqView = ExpandOp::create(L.b, L.loc, TypeRange{init.getType()}, ValueRange{L.tensorOf(last)}, ValueRange{init})
                  .getResult(0);
  }
  ins.push_back(*seqView);
  if (doRotary) {
    ins.push_back(L.tensorOf(*cosC));
    ins.push_back(L.tensorOf(*sinC));
  }
  double scale = floatAttr(op, "scale").value_or(0.0), softcap = floatAttr(op, "softcap").value_or(0.0);
  int64_t window = L.intAttr(op, "local_window_size").value_or(-1);
  int64_t interleaved = L.intAttr(op, "rotary_interleaved").value_or(0) != 0;
  if (L.knob == ::dq::InjectKnob::RotaryLayoutSwap) interleaved = !interleaved;
  SmallVector<Value> outDims = {q->dims[0], q->dims[1], L.idx(*heads * headSize)};
  SmallVector<Value> cacheDims = {q->dims[0], L.idx(*kvHeads), presentLen, L.idx(headSize)};
  auto r = kernelN(L, "group_query_attention", ins,
                   {{outDims, q->elementType}, {cacheDims, q->elementType}, {cacheDims, q->elementType}},
                   {*heads, *kvHeads, packed ? 1 : 0, pk ? 1 : 0, doRotary ? 1 : 0, interleaved, window},
                   {scale, softcap}, {totalLen});
  for (unsigned i = 0; i < 3 && i < op->getNumResults(); ++i)
    L.define(op->getResult(i), r[i]);
  return defineOptional(L, op, 3, r[0], w + ": output output_qk is not implemented");
}

} // namespace

void onnx_lowering::addContribLowerings(llvm::StringMap<LowerFn> &table) {
  table["SimplifiedLayerNormalization"] = lowerSimplifiedLayerNorm;
  table["com.microsoft.SimplifiedLayerNormalization"] = lowerSimplifiedLayerNorm;
  table["com.microsoft.SkipSimplifiedLayerNormalization"] = lowerSkipSimplifiedLayerNorm;
  table["com.microsoft.MatMulNBits"] = lowerMatMulNBits;
  table["com.microsoft.RotaryEmbedding"] = lowerRotaryEmbedding;
  table["com.microsoft.GroupQueryAttention"] = lowerGroupQueryAttention;
}
