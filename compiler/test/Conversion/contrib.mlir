// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics | FileCheck %s

// checks that MatMulNBits keeps B packed (uint8 [N, k_blocks, blob] straight into the kernel) and
// passes K, N, bits, block_size, the zero-point kind (1: packed uint8) and has-bias; the output is
// A's leading dims with N last, the dynamic batch and sequence kept as SSA dims.
// CHECK-LABEL: func.func @matmul_nbits
// CHECK: dq.kernel "matmul_nbits" ins(%arg0, %arg1, %arg2, %arg3 : tensor<?x?x40xf32>, tensor<8x2x16xui8>, tensor<16xf32>, tensor<8xui8>) {{.*}} {imm = array<i64: 40, 8, 4, 32, 1, 0, 1>} -> tensor<?x?x8xf32>
// CHECK-NOT: dq.kernel "matmul"
module attributes {onnx.opset = 21 : i64} {
func.func @matmul_nbits(%a: tensor<?x?x40xf32>, %b: tensor<8x2x16xui8>, %s: tensor<16xf32>, %z: tensor<8xui8>) -> tensor<?x?x8xf32> {
  %0 = "onnx.MatMulNBits"(%a, %b, %s, %z) {K = 40 : i64, N = 8 : i64, bits = 4 : i64, block_size = 32 : i64, accuracy_level = 4 : i64, onnx.domain = "com.microsoft", onnx.name = "mm"} : (tensor<?x?x40xf32>, tensor<8x2x16xui8>, tensor<16xf32>, tensor<8xui8>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}
}

// -----

// checks that float zero points (A's type) are kind 2 and a bias sets has-bias.
// CHECK-LABEL: func.func @matmul_nbits_float_zero_points
// CHECK: dq.kernel "matmul_nbits" ins(%arg0, %arg1, %arg2, %arg3, %arg4 : {{.*}}) {{.*}} {imm = array<i64: 64, 4, 8, 16, 2, 1, 4>}
func.func @matmul_nbits_float_zero_points(%a: tensor<2x64xf16>, %b: tensor<4x4x16xui8>, %s: tensor<4x4xf16>, %z: tensor<4x4xf16>, %bias: tensor<4xf16>) -> tensor<2x4xf16> {
  %none = "onnx.None"() : () -> none
  %0 = "onnx.MatMulNBits"(%a, %b, %s, %z, %none, %bias) {K = 64 : i64, N = 4 : i64, bits = 8 : i64, block_size = 16 : i64, onnx.domain = "com.microsoft", onnx.name = "mm8"} : (tensor<2x64xf16>, tensor<4x4x16xui8>, tensor<4x4xf16>, tensor<4x4xf16>, none, tensor<4xf16>) -> tensor<2x4xf16>
  return %0 : tensor<2x4xf16>
}

// -----

// checks that bits = 3 is refused, naming the node and the attribute.
func.func @matmul_nbits_bits3(%a: tensor<2x32xf32>, %b: tensor<4x1x12xui8>, %s: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @below {{unsupported: MatMulNBits node 'mm3': attribute bits = 3 (2, 4 and 8 are implemented)}}
  %0 = "onnx.MatMulNBits"(%a, %b, %s) {K = 32 : i64, N = 4 : i64, bits = 3 : i64, block_size = 32 : i64, onnx.domain = "com.microsoft", onnx.name = "mm3"} : (tensor<2x32xf32>, tensor<4x1x12xui8>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// checks that a scales tensor of the wrong length is an error naming the node and both counts.
func.func @matmul_nbits_scales(%a: tensor<2x64xf32>, %b: tensor<4x2x16xui8>, %s: tensor<7xf32>) -> tensor<2x4xf32> {
  // expected-error @below {{MatMulNBits node 'mms': scales holds 7 values, N * ceil(K / block_size) = 8}}
  %0 = "onnx.MatMulNBits"(%a, %b, %s) {K = 64 : i64, N = 4 : i64, bits = 4 : i64, block_size = 32 : i64, onnx.domain = "com.microsoft", onnx.name = "mms"} : (tensor<2x64xf32>, tensor<4x2x16xui8>, tensor<7xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// checks that SimplifiedLayerNormalization (default domain) normalizes from the axis (-1 -> 2)
// with its epsilon.
// CHECK-LABEL: func.func @simplified_layer_norm
// CHECK: dq.kernel "simplified_layer_norm" ins(%arg0, %arg1 : tensor<?x?x16xf32>, tensor<16xf32>) {{.*}} {fimm = array<f64: 9.99{{[0-9]*}}E-7>, imm = array<i64: 2>}
func.func @simplified_layer_norm(%x: tensor<?x?x16xf32>, %s: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %0 = "onnx.SimplifiedLayerNormalization"(%x, %s) {axis = -1 : i64, epsilon = 1.0e-6 : f32, onnx.name = "ln"} : (tensor<?x?x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

// -----

// checks that SkipSimplifiedLayerNormalization gives the kernel's two outputs: the normalized
// value (output 0) and the residual sum (output 3).
// CHECK-LABEL: func.func @skip_simplified_layer_norm
// CHECK: %[[R:.*]]:2 = dq.kernel "skip_simplified_layer_norm" ins(%arg0, %arg1, %arg2 : {{.*}}) {{.*}} {fimm = {{.*}}, imm = array<i64: 0>}
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @skip_simplified_layer_norm(%x: tensor<?x?x16xf16>, %skip: tensor<?x?x16xf16>, %g: tensor<16xf16>) -> (tensor<?x?x16xf16>, tensor<?x?x16xf16>) {
  %none = "onnx.None"() : () -> none
  %0:4 = "onnx.SkipSimplifiedLayerNormalization"(%x, %skip, %g) {epsilon = 1.0e-6 : f32, onnx.domain = "com.microsoft", onnx.name = "sln"} : (tensor<?x?x16xf16>, tensor<?x?x16xf16>, tensor<16xf16>) -> (tensor<?x?x16xf16>, tensor<*xf16>, tensor<*xf16>, tensor<?x?x16xf16>)
  return %0#0, %0#3 : tensor<?x?x16xf16>, tensor<?x?x16xf16>
}

// -----

// checks that a used mean output of SkipSimplifiedLayerNormalization is refused, not computed.
func.func @skip_simplified_mean(%x: tensor<2x16xf32>, %skip: tensor<2x16xf32>, %g: tensor<16xf32>) -> tensor<*xf32> {
  // expected-error @below {{unsupported: SkipSimplifiedLayerNormalization node 'slm': output mean is not implemented}}
  %0:2 = "onnx.SkipSimplifiedLayerNormalization"(%x, %skip, %g) {onnx.domain = "com.microsoft", onnx.name = "slm"} : (tensor<2x16xf32>, tensor<2x16xf32>, tensor<16xf32>) -> (tensor<2x16xf32>, tensor<*xf32>)
  return %0#1 : tensor<*xf32>
}

// -----

// checks that RotaryEmbedding passes interleaved, num_heads and rotary_embedding_dim.
// CHECK-LABEL: func.func @rotary
// CHECK: dq.kernel "rotary_embedding" ins(%arg0, %arg1, %arg2, %arg3 : {{.*}}) {{.*}} {imm = array<i64: 1, 2, 8>}
func.func @rotary(%x: tensor<?x?x32xf32>, %p: tensor<?x?xi64>, %c: tensor<64x4xf32>, %s: tensor<64x4xf32>) -> tensor<?x?x32xf32> {
  %0 = "onnx.RotaryEmbedding"(%x, %p, %c, %s) {interleaved = 1 : i64, num_heads = 2 : i64, rotary_embedding_dim = 8 : i64, onnx.domain = "com.microsoft", onnx.name = "rot"} : (tensor<?x?x32xf32>, tensor<?x?xi64>, tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<?x?x32xf32>
  return %0 : tensor<?x?x32xf32>
}

// -----

// checks that GroupQueryAttention with past: the present length is max(total, past length), both
// run-time values (total read back once from its device tensor here), and the output keeps the
// dynamic batch and sequence.
// CHECK-LABEL: func.func @gqa_decode
// CHECK: %[[T:.*]] = dq.readback_scalar
// CHECK: %[[P:.*]] = arith.maxsi %[[T]], %{{.*}} : index
// CHECK: dq.kernel "group_query_attention" ins({{.*}}) outs({{.*}}) scalars(%[[T]]) {fimm = array<f64: 0.000000e+00, 0.000000e+00>, imm = array<i64: 4, 2, 0, 1, 0, 0, -1>} -> tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>
func.func @gqa_decode(%q: tensor<?x?x64xf32>, %k: tensor<?x?x32xf32>, %v: tensor<?x?x32xf32>, %pk: tensor<?x2x?x16xf32>, %pv: tensor<?x2x?x16xf32>, %sl: tensor<?xi32>, %t: tensor<i32>) -> (tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) {
  %0:3 = "onnx.GroupQueryAttention"(%q, %k, %v, %pk, %pv, %sl, %t) {num_heads = 4 : i64, kv_num_heads = 2 : i64, onnx.domain = "com.microsoft", onnx.name = "gqa"} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?xi32>, tensor<i32>) -> (tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>)
  return %0#0, %0#1, %0#2 : tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>
}

// -----

// checks that GroupQueryAttention refuses num_heads 5 with kv_num_heads 2, naming the node.
func.func @gqa_heads(%q: tensor<1x1x80xf32>, %sl: tensor<1xi32>, %t: tensor<i32>) -> tensor<*xf32> {
  // expected-error @below {{unsupported: GroupQueryAttention node 'g52': attribute num_heads = 5 is not a multiple of kv_num_heads = 2}}
  %0:3 = "onnx.GroupQueryAttention"(%q, %sl, %t) {num_heads = 5 : i64, kv_num_heads = 2 : i64, onnx.domain = "com.microsoft", onnx.name = "g52"} : (tensor<1x1x80xf32>, tensor<1xi32>, tensor<i32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  return %0#0 : tensor<*xf32>
}

// -----

// checks that an op of the contrib domain that is not implemented names its domain and node.
func.func @unknown_contrib(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @below {{unsupported: op 'com.microsoft.FastGelu' in node 'fg'}}
  %0 = "onnx.FastGelu"(%x) {onnx.domain = "com.microsoft", onnx.name = "fg"} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
