// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics | FileCheck %s

// checks that Add broadcasts [a0, 1] with [b0] to [a0, b0] on the host: a static 1 takes the
// other extent, no select needed.
// CHECK-LABEL: func.func @add_broadcast
// CHECK-SAME: (%[[A:.*]]: tensor<?x1xf32>, %[[B:.*]]: tensor<?xf32>)
// CHECK: %[[DA:.*]] = tensor.dim %[[A]]
// CHECK: %[[DB:.*]] = tensor.dim %[[B]]
// CHECK: %[[INIT:.*]] = tensor.empty(%[[DA]], %[[DB]]) : tensor<?x?xf32>
// CHECK: dq.elementwise "add" ins(%[[A]], %[[B]] : tensor<?x1xf32>, tensor<?xf32>) outs(%[[INIT]] : tensor<?x?xf32>)
func.func @add_broadcast(%a: tensor<?x1xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = "onnx.Add"(%a, %b) : (tensor<?x1xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// checks that two dynamic dims broadcast with arith.select on == 1.
// CHECK-LABEL: func.func @sub_dynamic_pair
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[DA:.*]] = tensor.dim
// CHECK: %[[DB:.*]] = tensor.dim
// CHECK: %[[IS1:.*]] = arith.cmpi eq, %[[DA]], %[[C1]] : index
// CHECK: %[[D:.*]] = arith.select %[[IS1]], %[[DB]], %[[DA]] : index
// CHECK: tensor.empty(%[[D]]) : tensor<?xi32>
// CHECK: dq.elementwise "sub"
func.func @sub_dynamic_pair(%a: tensor<?xi32>, %b: tensor<?xi32>) -> tensor<?xi32> {
  %0 = "onnx.Sub"(%a, %b) : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

// checks Equal (i1 result), Where and Cast on device tensors.
// CHECK-LABEL: func.func @equal_where_cast
// CHECK: dq.elementwise "equal" {{.*}} -> tensor<?xi1>
// CHECK: dq.elementwise "where" {{.*}} -> tensor<?xf32>
// CHECK: dq.elementwise "cast" {{.*}} -> tensor<?xf16>
func.func @equal_where_cast(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf16> {
  %e = "onnx.Equal"(%a, %b) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xi1>
  %w = "onnx.Where"(%e, %a, %b) : (tensor<?xi1>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %c = "onnx.Cast"(%w) {to = 10 : i64} : (tensor<?xf32>) -> tensor<?xf16>
  return %c : tensor<?xf16>
}

// -----

// checks that integer arithmetic on host values stays on the host and a host value that is a
// graph output is materialized with tensor.from_elements: (Shape(x) + 1) * 2 / 3 per element
// (hand calculation on the static dim 4: (4 + 1) * 2 / 3 = 3).
// CHECK-LABEL: func.func @host_arith_output
// CHECK-NOT: dq.elementwise
// CHECK: %[[D:.*]] = tensor.dim
// CHECK: %[[A:.*]] = arith.addi %[[D]], %{{.*}} : index
// CHECK: %[[M:.*]] = arith.muli %[[A]], %{{.*}} : index
// CHECK: %[[Q:.*]] = arith.divsi %[[M]], %{{.*}} : index
// CHECK: %[[Q64:.*]] = arith.index_cast %[[Q]] : index to i64
// CHECK: %[[C3:.*]] = arith.constant 3 : i64
// CHECK: tensor.from_elements %[[Q64]], %[[C3]] : tensor<2xi64>
func.func @host_arith_output(%x: tensor<?x4xf32>) -> tensor<2xi64> {
  %s = "onnx.Shape"(%x) : (tensor<?x4xf32>) -> tensor<2xi64>
  %one = "onnx.Constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %two = "onnx.Constant"() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %three = "onnx.Constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %a = "onnx.Add"(%s, %one) : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %m = "onnx.Mul"(%a, %two) : (tensor<2xi64>, tensor<1xi64>) -> tensor<2xi64>
  %q = "onnx.Div"(%m, %three) : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  return %q : tensor<2xi64>
}
