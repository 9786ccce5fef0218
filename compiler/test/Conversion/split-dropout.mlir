// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics | FileCheck %s

// checks that Split with split sizes [2, 4] on axis 1 gives two slices starting at 0 and 2.
// CHECK-LABEL: func.func @split_input
// CHECK: dq.slice ins(%arg0 : tensor<?x6xf32>) outs({{.*}} : tensor<?x2xf32>) starts(%c0, %c0) steps(%c1, %c1)
// CHECK: dq.slice ins(%arg0 : tensor<?x6xf32>) outs({{.*}} : tensor<?x4xf32>) starts(%c0, %c2) steps(%c1, %c1)
func.func @split_input(%a: tensor<?x6xf32>) -> (tensor<?x2xf32>, tensor<?x4xf32>) {
  %s = "onnx.Constant"() {value = dense<[2, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0:2 = "onnx.Split"(%a, %s) {axis = 1 : i64} : (tensor<?x6xf32>, tensor<2xi64>) -> (tensor<?x2xf32>, tensor<?x4xf32>)
  return %0#0, %0#1 : tensor<?x2xf32>, tensor<?x4xf32>
}

// -----

// checks that num_outputs = 3 makes parts of min(ceil(d / 3), what is left), the second starting
// where the first ends.
// CHECK-LABEL: func.func @split_num_outputs
// CHECK: %[[D:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[P:.*]] = arith.ceildivsi %[[D]], %c3
// CHECK: %[[S0:.*]] = arith.minsi %[[P]], %[[D]]
// CHECK: tensor.empty(%[[S0]])
// CHECK: dq.slice {{.*}} starts(%c0)
// CHECK: dq.slice {{.*}} starts(%[[S0]])
// CHECK: dq.slice
func.func @split_num_outputs(%a: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %0:3 = "onnx.Split"(%a) {num_outputs = 3 : i64} : (tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>)
  return %0#0, %0#1, %0#2 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

// -----

// checks that inference Dropout forwards its input and fills the mask with true.
// CHECK-LABEL: func.func @dropout
// CHECK: %[[M:.*]] = dq.fill outs({{.*}} : tensor<?x4xi1>) value = true
// CHECK: return %arg0, %[[M]]
func.func @dropout(%a: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi1>) {
  %0:2 = "onnx.Dropout"(%a) : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi1>)
  return %0#0, %0#1 : tensor<?x4xf32>, tensor<?x4xi1>
}

// -----

// checks that Dropout in training mode is an explicit unsupported error.
func.func @dropout_training(%a: tensor<4xf32>, %r: tensor<f32>) -> tensor<4xf32> {
  %t = "onnx.Constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  // expected-error @+1 {{unsupported: Dropout in training mode}}
  %0 = "onnx.Dropout"(%a, %r, %t) : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
