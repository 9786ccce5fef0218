// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics | FileCheck %s

// checks that Softmax before opset 13 flattens at the axis: [?, 3, 4] -> [?, 12], softmax on
// axis 1, reshaped back to [?, 3, 4].
// CHECK-LABEL: func.func @softmax_legacy
// CHECK: %[[F:.*]] = tensor.expand_shape {{.*}} into tensor<?x12xf32>
// CHECK: %[[S:.*]] = dq.kernel "softmax" ins(%[[F]] : tensor<?x12xf32>) {{.*}} {imm = array<i64: 1>}
// CHECK: tensor.collapse_shape %[[S]]
// CHECK: tensor.expand_shape {{.*}} into tensor<?x3x4xf32>
module attributes {onnx.opset = 11 : i64} {
func.func @softmax_legacy(%a: tensor<?x3x4xf32>) -> tensor<?x3x4xf32> {
  %0 = "onnx.Softmax"(%a) {axis = 1 : i64} : (tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
  return %0 : tensor<?x3x4xf32>
}
}

// -----

// checks that Softmax from opset 13 normalizes along the one axis, with no reshape.
// CHECK-LABEL: func.func @softmax_axis
// CHECK-NOT: tensor.collapse_shape
// CHECK: dq.kernel "softmax" ins(%arg0 : tensor<?x3x4xf32>) {{.*}} {imm = array<i64: 1>}
module attributes {onnx.opset = 13 : i64} {
func.func @softmax_axis(%a: tensor<?x3x4xf32>) -> tensor<?x3x4xf32> {
  %0 = "onnx.Softmax"(%a) {axis = -2 : i64} : (tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
  return %0 : tensor<?x3x4xf32>
}
}

// -----

// checks that LayerNormalization passes the normalized axis (-1 -> 2) and epsilon to
// "layer_norm" with X, Scale and B.
// CHECK-LABEL: func.func @layer_norm
// CHECK: dq.kernel "layer_norm" ins(%arg0, %arg1, %arg2 : tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) {{.*}} {fimm = array<f64: 9.99{{[0-9]*}}E-13>, imm = array<i64: 2>}
func.func @layer_norm(%x: tensor<?x?x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %0 = "onnx.LayerNormalization"(%x, %s, %b) {axis = -1 : i64, epsilon = 1.0e-12 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}

// -----

// checks that the Mean and InvStdDev outputs are reduce_mean of X and 1 / sqrt(mean((X - Mean)^2)
// + epsilon), in the keepdims shape [2, 1].
// CHECK-LABEL: func.func @layer_norm_stats
// CHECK: %[[Y:.*]] = dq.kernel "layer_norm"
// CHECK: %[[MEAN:.*]] = dq.kernel "reduce_mean" ins(%arg0 : tensor<2x8xf32>) {{.*}} {imm = array<i64: 1>} -> tensor<2x1xf32>
// CHECK: %[[D:.*]] = dq.elementwise "sub" ins(%arg0, %[[MEAN]] :
// CHECK: %[[SQ:.*]] = dq.elementwise "mul" ins(%[[D]], %[[D]] :
// CHECK: %[[VAR:.*]] = dq.kernel "reduce_mean" ins(%[[SQ]] :
// CHECK: %[[VE:.*]] = dq.elementwise "add" ins(%[[VAR]],
// CHECK: %[[SD:.*]] = dq.elementwise "sqrt" ins(%[[VE]] :
// CHECK: %[[INV:.*]] = dq.elementwise "reciprocal" ins(%[[SD]] :
// CHECK: return %[[Y]], %[[MEAN]], %[[INV]]
func.func @layer_norm_stats(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %0:3 = "onnx.LayerNormalization"(%x, %s) {axis = 1 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}
