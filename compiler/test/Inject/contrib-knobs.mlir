// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file | FileCheck %s --check-prefix=PROD
// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx=inject=gqa-ignores-seqlens --split-input-file | FileCheck %s --check-prefix=GQA
// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx=inject=nbits-zero-point-pitch --split-input-file | FileCheck %s --check-prefix=PITCH
// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx=inject=rotary-layout-swap --split-input-file | FileCheck %s --check-prefix=ROT

// Knob 12, gqa-ignores-seqlens: production passes seqlens_k to the kernel; the knob passes
// total_sequence_length - 1 expanded to every batch row.
// PROD-LABEL: func.func @gqa
// PROD: dq.kernel "group_query_attention" ins(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5 :
// GQA-LABEL: func.func @gqa
// GQA: %[[LAST:.*]] = dq.expand
// GQA: dq.kernel "group_query_attention" ins(%arg0, %arg1, %arg2, %arg3, %arg4, %[[LAST]] :
func.func @gqa(%q: tensor<?x1x32xf32>, %k: tensor<?x1x16xf32>, %v: tensor<?x1x16xf32>, %pk: tensor<?x1x?x16xf32>, %pv: tensor<?x1x?x16xf32>, %sl: tensor<?xi32>, %t: tensor<i32>) -> tensor<?x1x32xf32> {
  %0:3 = "onnx.GroupQueryAttention"(%q, %k, %v, %pk, %pv, %sl, %t) {num_heads = 2 : i64, kv_num_heads = 1 : i64, onnx.domain = "com.microsoft", onnx.name = "gqa"} : (tensor<?x1x32xf32>, tensor<?x1x16xf32>, tensor<?x1x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?xi32>, tensor<i32>) -> (tensor<?x1x32xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>)
  return %0#0 : tensor<?x1x32xf32>
}

// -----

// Knob 13, nbits-zero-point-pitch: 3 blocks of 4 bits hold 12 bits of zero points per row, so
// the row pitch is ceil(12 / 8) = 2 bytes; the knob floors it to 1.
// PROD-LABEL: func.func @nbits
// PROD: {imm = array<i64: 96, 4, 4, 32, 1, 0, 2>}
// PITCH-LABEL: func.func @nbits
// PITCH: {imm = array<i64: 96, 4, 4, 32, 1, 0, 1>}
func.func @nbits(%a: tensor<?x96xf32>, %b: tensor<4x3x16xui8>, %s: tensor<12xf32>, %z: tensor<8xui8>) -> tensor<?x4xf32> {
  %0 = "onnx.MatMulNBits"(%a, %b, %s, %z) {K = 96 : i64, N = 4 : i64, bits = 4 : i64, block_size = 32 : i64, onnx.domain = "com.microsoft", onnx.name = "mm"} : (tensor<?x96xf32>, tensor<4x3x16xui8>, tensor<12xf32>, tensor<8xui8>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Knob 14, rotary-layout-swap: interleaved = 1 reaches the kernel as 0.
// PROD-LABEL: func.func @rotary
// PROD: dq.kernel "rotary_embedding" {{.*}} {imm = array<i64: 1, 0, 0>}
// ROT-LABEL: func.func @rotary
// ROT: dq.kernel "rotary_embedding" {{.*}} {imm = array<i64: 0, 0, 0>}
func.func @rotary(%x: tensor<?x?x16xf32>, %p: tensor<1xi64>, %c: tensor<32x8xf32>, %s: tensor<32x8xf32>) -> tensor<?x?x16xf32> {
  %0 = "onnx.RotaryEmbedding"(%x, %p, %c, %s) {interleaved = 1 : i64, onnx.domain = "com.microsoft", onnx.name = "rot"} : (tensor<?x?x16xf32>, tensor<1xi64>, tensor<32x8xf32>, tensor<32x8xf32>) -> tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}
