// The bounds and extents are the same with views (views.mlir); views=false shows them on the
// dq.slice kernel's starts and init.
// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx=views=false --split-input-file --verify-diagnostics | FileCheck %s

// checks that slice bounds that come from device data are read back, one dq.readback_scalar per
// element, and that the extent is computed from the clamped bounds.
// CHECK-LABEL: func.func @slice_bounds_from_device
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[D:.*]] = tensor.dim %{{.*}}, %[[C0]] : tensor<?x8xf32>
// CHECK: %[[S:.*]] = dq.readback_scalar %{{.*}}[%[[C0]]] : tensor<1xi64>
// CHECK: %[[E:.*]] = dq.readback_scalar %{{.*}}[%[[C0]]] : tensor<1xi64>
// CHECK-NOT: dq.readback_scalar
// CHECK: %[[END:.*]] = arith.minsi %{{.*}}, %[[D]] : index
// CHECK: %[[START:.*]] = arith.minsi %{{.*}}, %[[D]] : index
// CHECK: %[[DIFF:.*]] = arith.subi %[[END]], %[[START]] : index
// CHECK: %[[LEN:.*]] = arith.maxsi %[[DIFF]], %[[C0]] : index
// CHECK: %[[INIT:.*]] = tensor.empty(%[[LEN]]) : tensor<?x8xf32>
// CHECK: dq.slice ins(%{{.*}} : tensor<?x8xf32>) outs(%[[INIT]] : tensor<?x8xf32>) starts(%[[START]], %[[C0]])
func.func @slice_bounds_from_device(%x: tensor<?x8xf32>, %st: tensor<1xi64>, %en: tensor<1xi64>) -> tensor<?x8xf32> {
  %ax = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.Slice"(%x, %st, %en, %ax) : (tensor<?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// checks that slice bounds from Shape/Gather/Div host arithmetic do not read back: the end
// Shape(x)[1] / 2 is an arith.divsi of the tensor.dim, and the extent min(n / 2, n) comes from it.
// CHECK-LABEL: func.func @slice_bounds_from_host_arith
// CHECK-NOT: dq.readback_scalar
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %[[C1]] : tensor<4x?xf32>
// CHECK: %[[HALF:.*]] = arith.divsi %[[N]], %[[C2]] : index
// CHECK: %[[END:.*]] = arith.minsi %[[HALF]], %[[N]] : index
// CHECK: %[[INIT:.*]] = tensor.empty(%[[END]]) : tensor<4x?xf32>
// CHECK: dq.slice ins(%{{.*}} : tensor<4x?xf32>) outs(%[[INIT]] : tensor<4x?xf32>)
// CHECK-NOT: dq.readback_scalar
func.func @slice_bounds_from_host_arith(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %s = "onnx.Shape"(%x) : (tensor<4x?xf32>) -> tensor<2xi64>
  %one = "onnx.Constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %n = "onnx.Gather"(%s, %one) {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %two = "onnx.Constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %half = "onnx.Div"(%n, %two) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %zero = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %end = "onnx.Unsqueeze"(%half, %zero) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %axes = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.Slice"(%x, %zero, %end, %axes) : (tensor<4x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

// checks ONNX clamping on a static dim of 10 (hand calculation): start -3 -> 7, end INT64_MAX ->
// 10, step 2 -> ceil((10 - 7) / 2) = 2 elements from index 7.
// CHECK-LABEL: func.func @slice_clamp_static
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2xf32>
// CHECK: dq.slice ins(%{{.*}} : tensor<10xf32>) outs(%[[INIT]] : tensor<2xf32>) starts(%[[C7]]) steps(%[[C2]])
func.func @slice_clamp_static(%x: tensor<10xf32>) -> tensor<?xf32> {
  %st = "onnx.Constant"() {value = dense<-3> : tensor<1xi64>} : () -> tensor<1xi64>
  %en = "onnx.Constant"() {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %sp = "onnx.Constant"() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.Slice"(%x, %st, %en, %ax, %sp) : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// checks a negative step on a static dim of 10 (hand calculation): start 20 -> clamped to 9,
// end INT64_MIN -> clamped to -1, step -3 -> ceil((-1 - 9) / -3) = 4 elements (9, 6, 3, 0).
// CHECK-LABEL: func.func @slice_negative_step
// CHECK-DAG: %[[C9:.*]] = arith.constant 9 : index
// CHECK-DAG: %[[CM3:.*]] = arith.constant -3 : index
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: dq.slice ins(%{{.*}} : tensor<10xf32>) outs(%[[INIT]] : tensor<4xf32>) starts(%[[C9]]) steps(%[[CM3]])
func.func @slice_negative_step(%x: tensor<10xf32>) -> tensor<?xf32> {
  %st = "onnx.Constant"() {value = dense<20> : tensor<1xi64>} : () -> tensor<1xi64>
  %en = "onnx.Constant"() {value = dense<-9223372036854775808> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %sp = "onnx.Constant"() {value = dense<-3> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.Slice"(%x, %st, %en, %ax, %sp) : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// checks that an empty slice (start >= end) gets extent 0, not the data dim (hand calculation:
// start 5, end 2, step 1 on 10 -> max(ceil(-3 / 1), 0) = 0).
// CHECK-LABEL: func.func @slice_empty
// CHECK: tensor.empty() : tensor<0xf32>
func.func @slice_empty(%x: tensor<10xf32>) -> tensor<?xf32> {
  %st = "onnx.Constant"() {value = dense<5> : tensor<1xi64>} : () -> tensor<1xi64>
  %en = "onnx.Constant"() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.Slice"(%x, %st, %en) : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// checks the opset-1 form (starts/ends/axes as attributes) on a dynamic dim: the end 3 is
// clamped to the runtime dim with arith.minsi.
// CHECK-LABEL: func.func @slice_attributes
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[D:.*]] = tensor.dim
// CHECK: %[[E:.*]] = arith.minsi %[[D]], %[[C3]] : index
// CHECK: tensor.empty(%{{.*}}) : tensor<?xf32>
// CHECK: dq.slice
func.func @slice_attributes(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = "onnx.Slice"(%x) {starts = array<i64: 1>, ends = array<i64: 3>, axes = array<i64: 0>} : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// checks that Slice axes from device data are read back (constant starts and ends are not) and
// every data axis selects the bounds of the entry naming it (the ONNX backend tests pass axes as
// an input); extents stay dynamic.
// CHECK-LABEL: func.func @slice_runtime_axes
// CHECK: dq.readback_scalar %{{.*}}[%{{.*}}] : tensor<1xi64>
// CHECK-NOT: dq.readback_scalar
// CHECK: arith.cmpi eq
// CHECK: arith.select
// CHECK: tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xf32>
// CHECK: dq.slice
func.func @slice_runtime_axes(%x: tensor<4x6xf32>, %a: tensor<1xi64>) -> tensor<?x?xf32> {
  %st = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %en = "onnx.Constant"() {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.Slice"(%x, %st, %en, %a) : (tensor<4x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
