// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics | FileCheck %s

// checks that PyTorch's Expand pattern Where(Equal(shape, -1), ones, shape) with shape =
// Shape(y) resolves on the host: dims are never -1, so the target is exactly [d0, d1].
// CHECK-LABEL: func.func @expand_pytorch_pattern
// CHECK-SAME: (%[[X:.*]]: tensor<1x1xf32>, %[[Y:.*]]: tensor<?x?xf32>)
// CHECK-NOT: dq.readback_scalar
// CHECK-NOT: arith.select
// CHECK-DAG: %[[D0:.*]] = tensor.dim %[[Y]], %{{.*}}
// CHECK-DAG: %[[D1:.*]] = tensor.dim %[[Y]], %{{.*}}
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?xf32>
// CHECK: dq.expand ins(%[[X]] : tensor<1x1xf32>) outs(%[[INIT]] : tensor<?x?xf32>)
func.func @expand_pytorch_pattern(%x: tensor<1x1xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %s = "onnx.Shape"(%y) : (tensor<?x?xf32>) -> tensor<2xi64>
  %ss = "onnx.Shape"(%s) : (tensor<2xi64>) -> tensor<1xi64>
  %ones = "onnx.ConstantOfShape"(%ss) {value = dense<1> : tensor<1xi64>} : (tensor<1xi64>) -> tensor<2xi64>
  %m1 = "onnx.Constant"() {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %neg = "onnx.Mul"(%ones, %m1) : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %eq = "onnx.Equal"(%s, %neg) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
  %t = "onnx.Where"(%eq, %ones, %s) : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %e = "onnx.Expand"(%x, %t) : (tensor<1x1xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %e : tensor<?x?xf32>
}

// -----

// checks that an Expand shape from device data is read back, one element at a time, and that a
// dynamic pair of dims broadcasts with select(in == 1, shape, in).
// CHECK-LABEL: func.func @expand_shape_from_device
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[D:.*]] = tensor.dim
// CHECK: %[[S0:.*]] = dq.readback_scalar %{{.*}}[%{{.*}}] : tensor<1xi64>
// CHECK: %[[ONE:.*]] = arith.cmpi eq, %[[D]], %[[C1]] : index
// CHECK: %[[OUT:.*]] = arith.select %[[ONE]], %[[S0]], %[[D]] : index
// CHECK: tensor.empty(%[[OUT]]) : tensor<?xf32>
// CHECK: dq.expand
func.func @expand_shape_from_device(%x: tensor<?xf32>, %s: tensor<1xi64>) -> tensor<?xf32> {
  %e = "onnx.Expand"(%x, %s) : (tensor<?xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %e : tensor<?xf32>
}

// -----

// checks that an Expand that provably changes nothing (target = Shape(x)) is removed.
// CHECK-LABEL: func.func @expand_noop_removed
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>)
// CHECK-NOT: dq.expand
// CHECK: return %[[X]]
func.func @expand_noop_removed(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %s = "onnx.Shape"(%x) : (tensor<?x3xf32>) -> tensor<2xi64>
  %e = "onnx.Expand"(%x, %s) : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  return %e : tensor<?x3xf32>
}
