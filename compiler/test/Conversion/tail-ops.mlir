// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics | FileCheck %s

// checks that ArgMax with keepdims = 0 and select_last_index runs arg_max into i64 with the axis
// as a unit dim, then reshapes the unit dim away.
// CHECK-LABEL: func.func @argmax_nokeep
// CHECK: %[[A:.*]] = dq.kernel "arg_max" ins(%arg0 : tensor<?x5x3xf32>) outs({{.*}} : tensor<?x1x3xi64>) {imm = array<i64: 1, 1>}
// CHECK: tensor.collapse_shape %[[A]]
func.func @argmax_nokeep(%a: tensor<?x5x3xf32>) -> tensor<?x3xi64> {
  %0 = "onnx.ArgMax"(%a) {axis = -2 : i64, keepdims = 0 : i64, select_last_index = 1 : i64} : (tensor<?x5x3xf32>) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// -----

// checks that Clip with both bounds as inputs is max with min, then min with max.
// CHECK-LABEL: func.func @clip_inputs
// CHECK: %[[L:.*]] = dq.elementwise "max" ins(%arg0, %arg1
// CHECK: dq.elementwise "min" ins(%[[L]], %arg2
module attributes {onnx.opset = 13 : i64} {
func.func @clip_inputs(%x: tensor<?xf32>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<?xf32> {
  %0 = "onnx.Clip"(%x, %lo, %hi) : (tensor<?xf32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
}

// -----

// checks that Clip before opset 11 takes its bounds from attributes: only the max bound given
// gives one min with the constant 6.
// CHECK-LABEL: func.func @clip_attr
// CHECK: %[[C:.*]] = arith.constant dense<6.000000e+00> : tensor<f32>
// CHECK-NOT: "max"
// CHECK: dq.elementwise "min" ins(%arg0, %[[C]]
module attributes {onnx.opset = 6 : i64} {
func.func @clip_attr(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = "onnx.Clip"(%x) {max = 6.0 : f32} : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
}

// -----

// checks that Mod picks the kernel by fmod, and that fmod = 0 on floats is refused.
// CHECK-LABEL: func.func @mod_int
// CHECK: dq.elementwise "mod"
// CHECK: dq.elementwise "fmod"
func.func @mod_int(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %0 = "onnx.Mod"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = "onnx.Mod"(%a, %b) {fmod = 1 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// -----

func.func @mod_float_fmod0(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{unsupported: Mod with fmod = 0 on float inputs}}
  %0 = "onnx.Mod"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// checks that OneHot with depth known only at run time reads the depth back and inserts it as
// the output extent at the normalized axis (-1 -> 1).
// CHECK-LABEL: func.func @onehot_runtime_depth
// CHECK: %[[D:.*]] = dq.readback_scalar %arg1
// CHECK: tensor.empty(%{{.*}}, %[[D]]) : tensor<?x?xf32>
// CHECK: dq.kernel "one_hot" ins(%arg0, %arg2 : tensor<?xi64>, tensor<2xf32>) {{.*}} {imm = array<i64: 1>}
func.func @onehot_runtime_depth(%i: tensor<?xi64>, %d: tensor<1xi64>, %v: tensor<2xf32>) -> tensor<?x?xf32> {
  %0 = "onnx.OneHot"(%i, %d, %v) {axis = -1 : i64} : (tensor<?xi64>, tensor<1xi64>, tensor<2xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// checks that Size is a host value (the product of the dims), with no kernel.
// CHECK-LABEL: func.func @size
// CHECK-NOT: dq.kernel
// CHECK: tensor.from_elements
func.func @size(%x: tensor<?x4xf32>) -> tensor<i64> {
  %0 = "onnx.Size"(%x) : (tensor<?x4xf32>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// checks that Mean of two inputs is an add followed by a div by the constant 2.
// CHECK-LABEL: func.func @mean2
// CHECK: %[[S:.*]] = dq.elementwise "add"
// CHECK: %[[N:.*]] = arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK: dq.elementwise "div" ins(%[[S]], %[[N]]
func.func @mean2(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "onnx.Mean"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
