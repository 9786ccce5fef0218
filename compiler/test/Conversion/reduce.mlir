// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics | FileCheck %s

// checks that ReduceMean with an attribute axis -2 reduces axis 1 and keeps it as a unit dim.
// CHECK-LABEL: func.func @mean_attr
// CHECK: dq.kernel "reduce_mean" ins(%arg0 : tensor<?x?x8xf32>) outs({{.*}} : tensor<?x1x8xf32>) {imm = array<i64: 1>}
func.func @mean_attr(%a: tensor<?x?x8xf32>) -> tensor<?x1x8xf32> {
  %0 = "onnx.ReduceMean"(%a) {axes = [-2], keepdims = 1 : i64} : (tensor<?x?x8xf32>) -> tensor<?x1x8xf32>
  return %0 : tensor<?x1x8xf32>
}

// -----

// checks that ReduceSum with constant axes from the input and keepdims = 0 reduces into
// [?, 1, 1] and reshapes away the unit dims.
// CHECK-LABEL: func.func @sum_input_nokeep
// CHECK: %[[R:.*]] = dq.kernel "reduce_sum" {{.*}} {imm = array<i64: 1, 2>} -> tensor<?x1x1xf32>
// CHECK: tensor.collapse_shape %[[R]] {{\[}}[0, 1, 2]] : tensor<?x1x1xf32> into tensor<?xf32>
func.func @sum_input_nokeep(%a: tensor<?x?x8xf32>) -> tensor<?xf32> {
  %ax = "onnx.Constant"() {value = dense<[2, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.ReduceSum"(%a, %ax) {keepdims = 0 : i64} : (tensor<?x?x8xf32>, tensor<2xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// checks that axes known only at run time are read back and passed as one flag per axis, each
// flag matching the axis or its negative spelling (axis 1: == 1 or == -2).
// CHECK-LABEL: func.func @sum_runtime_axes
// CHECK: %[[AX:.*]] = dq.readback_scalar %arg1[%c0] : tensor<1xi64>
// CHECK: arith.cmpi eq, %[[AX]], %c1
// CHECK: arith.cmpi eq, %[[AX]], %c-2
// CHECK: %[[F1:.*]] = arith.maxsi
// CHECK: dq.kernel "reduce_sum" ins(%arg0 : tensor<3x2x2xf32>) outs({{.*}}) scalars(%{{.*}}, %[[F1]], %{{.*}}) -> tensor<?x?x?xf32>
// CHECK: tensor.cast {{.*}} to tensor<3x1x2xf32>
func.func @sum_runtime_axes(%a: tensor<3x2x2xf32>, %ax: tensor<1xi64>) -> tensor<3x1x2xf32> {
  %0 = "onnx.ReduceSum"(%a, %ax) {keepdims = 1 : i64} : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<3x1x2xf32>
  return %0 : tensor<3x1x2xf32>
}

// -----

// checks that ReduceMax without axes reduces every axis, and that an empty axes list with
// noop_with_empty_axes forwards the input.
// CHECK-LABEL: func.func @max_all
// CHECK: dq.kernel "reduce_max" {{.*}} {imm = array<i64: 0, 1>} -> tensor<1x1xf32>
// CHECK-LABEL: func.func @sum_noop
// CHECK-NOT: dq.kernel
// CHECK: return %arg0
func.func @max_all(%a: tensor<?x4xf32>) -> tensor<1x1xf32> {
  %0 = "onnx.ReduceMax"(%a) : (tensor<?x4xf32>) -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}
func.func @sum_noop(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %ax = "onnx.Constant"() {value = dense<> : tensor<0xi64>} : () -> tensor<0xi64>
  %0 = "onnx.ReduceSum"(%a, %ax) {noop_with_empty_axes = 1 : i64} : (tensor<?x4xf32>, tensor<0xi64>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// checks that keepdims = 0 with axes known only at run time reshapes the keepdims result to the
// kept dims (here one: a collapse to 1-D cast to the declared [3]).
// CHECK-LABEL: func.func @runtime_axes_nokeep
// CHECK: %[[R:.*]] = dq.kernel "reduce_sum" ins(%arg0 : tensor<3x2xf32>) {{.*}} scalars(
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
// CHECK: %[[C:.*]] = tensor.cast %[[F]] : tensor<?xf32> to tensor<3xf32>
// CHECK: return %[[C]]
func.func @runtime_axes_nokeep(%a: tensor<3x2xf32>, %ax: tensor<1xi64>) -> tensor<3xf32> {
  %0 = "onnx.ReduceSum"(%a, %ax) {keepdims = 0 : i64} : (tensor<3x2xf32>, tensor<1xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
