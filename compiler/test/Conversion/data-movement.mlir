// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics | FileCheck %s

// checks Unsqueeze (expand_shape with a unit dim) and Squeeze (collapse_shape) on dynamic dims.
// CHECK-LABEL: func.func @unsqueeze_squeeze
// CHECK: %[[D0:.*]] = tensor.dim
// CHECK: %[[D1:.*]] = tensor.dim
// CHECK: %[[U:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [%[[D0]], 1, %[[D1]]] : tensor<?x?xf32> into tensor<?x1x?xf32>
// CHECK: tensor.collapse_shape %[[U]] {{\[\[}}0], [1, 2]] : tensor<?x1x?xf32> into tensor<?x?xf32>
func.func @unsqueeze_squeeze(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %ax = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %u = "onnx.Unsqueeze"(%x, %ax) : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?x1x?xf32>
  %s = "onnx.Squeeze"(%u, %ax) : (tensor<?x1x?xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  return %s : tensor<?x?xf32>
}

// -----

// checks Flatten (axis 1) as one collapse_shape with two groups.
// CHECK-LABEL: func.func @flatten
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2]] : tensor<?x?x8xf32> into tensor<?x?xf32>
func.func @flatten(%x: tensor<?x?x8xf32>) -> tensor<?x?xf32> {
  %f = "onnx.Flatten"(%x) {axis = 1 : i64} : (tensor<?x?x8xf32>) -> tensor<?x?xf32>
  return %f : tensor<?x?xf32>
}

// -----

// checks Concat along a dynamic axis: the extent is the host sum of the input extents, and a
// zero-size operand is legal.
// CHECK-LABEL: func.func @concat
// CHECK: %[[A:.*]] = tensor.dim %arg0
// CHECK: %[[B:.*]] = tensor.dim %arg1
// CHECK: %[[SUM:.*]] = arith.addi %[[A]], %[[B]] : index
// CHECK: %[[INIT:.*]] = tensor.empty(%[[SUM]]) : tensor<?x3xf32>
// CHECK: dq.concat ins(%arg0, %arg1, %arg2 : tensor<?x3xf32>, tensor<?x3xf32>, tensor<0x3xf32>) outs(%[[INIT]] : tensor<?x3xf32>) axis = 0
func.func @concat(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>, %c: tensor<0x3xf32>) -> tensor<?x3xf32> {
  %r = "onnx.Concat"(%a, %b, %c) {axis = -2 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>, tensor<0x3xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// -----

// checks Transpose: the init takes the permuted dims.
// CHECK-LABEL: func.func @transpose
// CHECK: %[[D0:.*]] = tensor.dim %arg0
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D0]]) : tensor<4x?xf32>
// CHECK: dq.transpose ins(%arg0 : tensor<?x4xf32>) outs(%[[INIT]] : tensor<4x?xf32>) permutation = [1, 0]
func.func @transpose(%x: tensor<?x4xf32>) -> tensor<4x?xf32> {
  %t = "onnx.Transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<?x4xf32>) -> tensor<4x?xf32>
  return %t : tensor<4x?xf32>
}

// -----

// checks Gather on device data: out dims = data[:axis] + indices + data[axis+1:].
// CHECK-LABEL: func.func @gather_device
// CHECK: %[[N:.*]] = tensor.dim %arg1
// CHECK: %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<5x?xf32>
// CHECK: dq.gather ins(%arg0, %arg1 : tensor<5x7xf32>, tensor<?xi64>) outs(%[[INIT]] : tensor<5x?xf32>) axis = 1
func.func @gather_device(%x: tensor<5x7xf32>, %i: tensor<?xi64>) -> tensor<5x?xf32> {
  %g = "onnx.Gather"(%x, %i) {axis = 1 : i64} : (tensor<5x7xf32>, tensor<?xi64>) -> tensor<5x?xf32>
  return %g : tensor<5x?xf32>
}

// -----

// checks Range with a host limit: length max(ceil((limit - start) / delta), 0) on the host
// (start 0, delta 1: the length is the dim itself), no readback.
// CHECK-LABEL: func.func @range_host_limit
// CHECK-NOT: dq.readback_scalar
// CHECK: %[[D:.*]] = tensor.dim
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D]]) : tensor<?xi64>
// CHECK: dq.range ins(%{{.*}}, %{{.*}} : tensor<i64>, tensor<i64>) outs(%[[INIT]] : tensor<?xi64>)
func.func @range_host_limit(%x: tensor<?xf32>) -> tensor<?xi64> {
  %s = "onnx.Shape"(%x) : (tensor<?xf32>) -> tensor<1xi64>
  %z = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %one = "onnx.Constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %n = "onnx.Squeeze"(%s, %z) : (tensor<1xi64>, tensor<i64>) -> tensor<i64>
  %r = "onnx.Range"(%z, %n, %one) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %r : tensor<?xi64>
}

// -----

// checks Range bounds from device data: each scalar is read back, then the length is
// max(ceildiv(limit - start, delta), 0).
// CHECK-LABEL: func.func @range_device_bounds
// CHECK-COUNT-3: dq.readback_scalar %{{.*}}[] : tensor<i64>
// CHECK: arith.ceildivsi
// CHECK: arith.maxsi
// CHECK: dq.range
func.func @range_device_bounds(%s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>) -> tensor<?xi64> {
  %r = "onnx.Range"(%s, %l, %d) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %r : tensor<?xi64>
}

// -----

// checks ConstantOfShape with a float value: dq.fill into an init with the host shape.
// CHECK-LABEL: func.func @constant_of_shape
// CHECK: %[[D:.*]] = tensor.dim
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D]]) : tensor<?x2xf16>
// CHECK: dq.fill outs(%[[INIT]] : tensor<?x2xf16>) value = 1.500000e+00 : f16
func.func @constant_of_shape(%x: tensor<?x2xf32>) -> tensor<?x2xf16> {
  %s = "onnx.Shape"(%x) : (tensor<?x2xf32>) -> tensor<2xi64>
  %c = "onnx.ConstantOfShape"(%s) {value = dense<1.5> : tensor<1xf16>} : (tensor<2xi64>) -> tensor<?x2xf16>
  return %c : tensor<?x2xf16>
}

// -----

// checks that Identity forwards its input and a float Constant becomes arith.constant.
// CHECK-LABEL: func.func @identity_constant
// CHECK: %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: return %arg0, %[[C]]
func.func @identity_constant(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<2xf32>) {
  %i = "onnx.Identity"(%x) : (tensor<?xf32>) -> tensor<?xf32>
  %c = "onnx.Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  return %i, %c : tensor<?xf32>, tensor<2xf32>
}

// -----

// checks that Unsqueeze axes from device data are read back and the unit position is selected on
// the host (hand calculation for axis a on [3]: out = [a == 0 ? 1 : 3, a == 0 ? 3 : 1]), then the
// data goes through collapse/expand with those extents.
// CHECK-LABEL: func.func @unsqueeze_runtime_axes
// CHECK: dq.readback_scalar %arg1
// CHECK-NOT: dq.readback_scalar
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [%{{.*}}, %{{.*}}] : tensor<?xf32> into tensor<?x?xf32>
// CHECK: tensor.cast %{{.*}} : tensor<?x?xf32> to tensor<1x3xf32>
func.func @unsqueeze_runtime_axes(%x: tensor<3xf32>, %a: tensor<1xi64>) -> tensor<1x3xf32> {
  %u = "onnx.Unsqueeze"(%x, %a) : (tensor<3xf32>, tensor<1xi64>) -> tensor<1x3xf32>
  return %u : tensor<1x3xf32>
}
