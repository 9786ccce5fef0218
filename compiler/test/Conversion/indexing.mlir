// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics | FileCheck %s

// checks that Trilu passes upper = 0 as imm and a constant k = 1 as its scalar operand.
// CHECK-LABEL: func.func @trilu
// CHECK: %[[K:.*]] = arith.constant 1 : index
// CHECK: dq.kernel "trilu" ins(%arg0 : tensor<?x?xf32>) outs({{.*}}) scalars(%[[K]]) {imm = array<i64: 0>}
func.func @trilu(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %k = "onnx.Constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.Trilu"(%a, %k) {upper = 0 : i64} : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// checks that CumSum with a constant axis -1 normalizes it to imm[0] = 1 (exclusive, reverse
// follow), and that an axis known only at run time is read back and passed as scalar.
// CHECK-LABEL: func.func @cumsum_const_axis
// CHECK: dq.kernel "cumsum" ins(%arg0 : tensor<?x3xf32>) {{.*}} {imm = array<i64: 1, 1, 0>}
// CHECK-LABEL: func.func @cumsum_runtime_axis
// CHECK: %[[AX:.*]] = dq.readback_scalar %arg1[] : tensor<i32>
// CHECK: dq.kernel "cumsum" ins(%arg0 : tensor<?x3xf32>) outs({{.*}}) scalars(%[[AX]]) {imm = array<i64: 0, 0, 1>}
func.func @cumsum_const_axis(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %ax = "onnx.Constant"() {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.CumSum"(%a, %ax) {exclusive = 1 : i64} : (tensor<?x3xf32>, tensor<i64>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
func.func @cumsum_runtime_axis(%a: tensor<?x3xf32>, %ax: tensor<i32>) -> tensor<?x3xf32> {
  %0 = "onnx.CumSum"(%a, %ax) {reverse = 1 : i64} : (tensor<?x3xf32>, tensor<i32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// checks that GatherElements takes the indices' dims and the normalized axis.
// CHECK-LABEL: func.func @gather_elements
// CHECK: %[[N:.*]] = tensor.dim %arg1, %c0 : tensor<?x2xi64>
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x2xf32>
// CHECK: dq.kernel "gather_elements" ins(%arg0, %arg1 : tensor<?x4xf32>, tensor<?x2xi64>) outs(%[[E]] : tensor<?x2xf32>) {imm = array<i64: 1>}
func.func @gather_elements(%d: tensor<?x4xf32>, %i: tensor<?x2xi64>) -> tensor<?x2xf32> {
  %0 = "onnx.GatherElements"(%d, %i) {axis = -1 : i64} : (tensor<?x4xf32>, tensor<?x2xi64>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

// checks that GatherND's output is indices[:-1] + data[batch_dims + m:] = [?] + [4].
// CHECK-LABEL: func.func @gather_nd
// CHECK: dq.kernel "gather_nd" ins(%arg0, %arg1 : tensor<2x3x4xf32>, tensor<?x2xi64>) outs({{.*}} : tensor<?x4xf32>) {imm = array<i64: 0>}
func.func @gather_nd(%d: tensor<2x3x4xf32>, %i: tensor<?x2xi64>) -> tensor<?x4xf32> {
  %0 = "onnx.GatherND"(%d, %i) : (tensor<2x3x4xf32>, tensor<?x2xi64>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
