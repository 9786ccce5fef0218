// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics | FileCheck %s

// checks that MatMul broadcasts batch dims [?, 1] with [3] to [?, 3] and takes M from a and N
// from b: one "matmul" kernel, no reshape.
// CHECK-LABEL: func.func @batched
// CHECK: %[[D0:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[M:.*]] = tensor.dim %arg0, %c2
// CHECK: %[[E:.*]] = tensor.empty(%[[D0]], %[[M]]) : tensor<?x3x?x5xf32>
// CHECK: dq.kernel "matmul" ins(%arg0, %arg1 : tensor<?x1x?x8xf32>, tensor<3x8x5xf32>) outs(%[[E]] : tensor<?x3x?x5xf32>)
// CHECK-NOT: tensor.collapse_shape
func.func @batched(%a: tensor<?x1x?x8xf32>, %b: tensor<3x8x5xf32>) -> tensor<?x3x?x5xf32> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<?x1x?x8xf32>, tensor<3x8x5xf32>) -> tensor<?x3x?x5xf32>
  return %0 : tensor<?x3x?x5xf32>
}

// -----

// checks that a 1-D left operand becomes [1, K] and the unit M dim is removed from [?, 1, 5].
// CHECK-LABEL: func.func @vec_mat
// CHECK: %[[A:.*]] = tensor.expand_shape %arg0 {{\[}}[0, 1]] output_shape [1, 8] : tensor<8xf32> into tensor<1x8xf32>
// CHECK: %[[R:.*]] = dq.kernel "matmul" ins(%[[A]], %arg1 : tensor<1x8xf32>, tensor<?x8x5xf32>) {{.*}} -> tensor<?x1x5xf32>
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[R]]
// CHECK: tensor.expand_shape %[[F]] {{.*}} into tensor<?x5xf32>
func.func @vec_mat(%a: tensor<8xf32>, %b: tensor<?x8x5xf32>) -> tensor<?x5xf32> {
  %0 = "onnx.MatMul"(%a, %b) : (tensor<8xf32>, tensor<?x8x5xf32>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}

// -----

// checks that Gemm with transA, transB, alpha = 2 and beta = 0.5 transposes both operands,
// multiplies, scales by 2, scales C by 0.5 and adds (C broadcasts over rows).
// CHECK-LABEL: func.func @gemm
// CHECK: %[[AT:.*]] = dq.transpose ins(%arg0 : tensor<4x?xf32>) {{.*}} permutation = [1, 0]
// CHECK: %[[BT:.*]] = dq.transpose ins(%arg1 : tensor<5x4xf32>) {{.*}} permutation = [1, 0]
// CHECK: %[[MM:.*]] = dq.kernel "matmul" ins(%[[AT]], %[[BT]] :
// CHECK: %[[ALPHA:.*]] = arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[Y:.*]] = dq.elementwise "mul" ins(%[[MM]], %[[ALPHA]] :
// CHECK: %[[BETA:.*]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[C:.*]] = dq.elementwise "mul" ins(%arg2, %[[BETA]] :
// CHECK: dq.elementwise "add" ins(%[[Y]], %[[C]] : tensor<?x5xf32>, tensor<5xf32>)
func.func @gemm(%a: tensor<4x?xf32>, %b: tensor<5x4xf32>, %c: tensor<5xf32>) -> tensor<?x5xf32> {
  %0 = "onnx.Gemm"(%a, %b, %c) {transA = 1 : i64, transB = 1 : i64, alpha = 2.0 : f32, beta = 0.5 : f32} : (tensor<4x?xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}

// -----

// checks that static inner dims that differ are a plain error on the node.
func.func @mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{MatMul: inner dims differ (3 vs 4)}}
  %0 = "onnx.MatMul"(%a, %b) : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
