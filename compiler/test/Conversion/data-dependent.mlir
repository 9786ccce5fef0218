// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics | FileCheck %s

// checks that NonZero counts on the device into a 0-d i64, reads the count back once and sizes
// its result [rank, n] with exactly the read-back value (no capacity buffer).
// CHECK-LABEL: func.func @nonzero
// CHECK: %[[E:.*]] = tensor.empty() : tensor<i64>
// CHECK: %[[C:.*]] = dq.kernel "count_nonzero" ins(%arg0 : tensor<?x?xf32>) outs(%[[E]] : tensor<i64>)
// CHECK: %[[N:.*]] = dq.readback_scalar %[[C]][] : tensor<i64>
// CHECK: %[[OUT:.*]] = tensor.empty(%[[N]]) : tensor<2x?xi64>
// CHECK: %[[R:.*]] = dq.kernel "nonzero" ins(%arg0 : tensor<?x?xf32>) outs(%[[OUT]] : tensor<2x?xi64>)
// CHECK-NOT: dq.readback_scalar
// CHECK: return %[[R]]
func.func @nonzero(%x: tensor<?x?xf32>) -> tensor<2x?xi64> {
  %0 = "onnx.NonZero"(%x) : (tensor<?x?xf32>) -> tensor<2x?xi64>
  return %0 : tensor<2x?xi64>
}

// -----

// checks that Compress along an axis takes that axis' extent from the one readback of the count
// of true conditions and keeps the other extents.
// CHECK-LABEL: func.func @compress_axis
// CHECK: %[[C:.*]] = dq.kernel "count_nonzero" ins(%arg1 : tensor<?xi1>)
// CHECK: %[[N:.*]] = dq.readback_scalar %[[C]][] : tensor<i64>
// CHECK: %[[OUT:.*]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
// CHECK: dq.kernel "compress" ins(%arg0, %arg1 : tensor<?x3xf32>, tensor<?xi1>) outs(%[[OUT]] : tensor<?x3xf32>) {imm = array<i64: 0>}
func.func @compress_axis(%x: tensor<?x3xf32>, %c: tensor<?xi1>) -> tensor<?x3xf32> {
  %0 = "onnx.Compress"(%x, %c) {axis = 0 : i64} : (tensor<?x3xf32>, tensor<?xi1>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// checks that Compress without axis flattens the input first.
// CHECK-LABEL: func.func @compress_flat
// CHECK: %[[F:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<?x3xf32> into tensor<?xf32>
// CHECK: %[[N:.*]] = dq.readback_scalar
// CHECK: %[[OUT:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK: dq.kernel "compress" ins(%[[F]], %arg1 : tensor<?xf32>, tensor<?xi1>) outs(%[[OUT]] : tensor<?xf32>) {imm = array<i64: 0>}
func.func @compress_flat(%x: tensor<?x3xf32>, %c: tensor<?xi1>) -> tensor<?xf32> {
  %0 = "onnx.Compress"(%x, %c) : (tensor<?x3xf32>, tensor<?xi1>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// checks that TopK with k = Shape(x)[1:] - 1 folds k into host arithmetic (no readback) and gives
// both outputs the extent k (imm = axis 1, largest 0).
// CHECK-LABEL: func.func @topk_shape
// CHECK-NOT: dq.readback_scalar
// CHECK: %[[D1:.*]] = tensor.dim %arg0, %c1
// CHECK: %[[K:.*]] = arith.subi %[[D1]], %c1 : index
// CHECK: %[[V:.*]] = tensor.empty(%{{.*}}, %[[K]]) : tensor<?x?xf32>
// CHECK: %[[I:.*]] = tensor.empty(%{{.*}}, %[[K]]) : tensor<?x?xi64>
// CHECK: dq.kernel "top_k" ins(%arg0 : tensor<?x?xf32>) outs(%[[V]], %[[I]] : tensor<?x?xf32>, tensor<?x?xi64>) {imm = array<i64: 1, 0>}
func.func @topk_shape(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xi64>) {
  %s = "onnx.Shape"(%x) {start = 1 : i64} : (tensor<?x?xf32>) -> tensor<1xi64>
  %one = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %k = "onnx.Sub"(%s, %one) : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %v, %i = "onnx.TopK"(%x, %k) {axis = -1 : i64, largest = 0 : i64} : (tensor<?x?xf32>, tensor<1xi64>) -> (tensor<?x?xf32>, tensor<?x?xi64>)
  return %v, %i : tensor<?x?xf32>, tensor<?x?xi64>
}

// -----

// checks that a K held in device data costs exactly one readback.
// CHECK-LABEL: func.func @topk_device_k
// CHECK: %[[K:.*]] = dq.readback_scalar %arg1[%c0] : tensor<1xi64>
// CHECK-NOT: dq.readback_scalar
// CHECK: tensor.empty(%{{.*}}, %[[K]]) : tensor<?x?xf32>
// CHECK: dq.kernel "top_k" {{.*}} {imm = array<i64: 1, 1>}
func.func @topk_device_k(%x: tensor<?x?xf32>, %k: tensor<1xi64>) -> (tensor<?x?xf32>, tensor<?x?xi64>) {
  %v, %i = "onnx.TopK"(%x, %k) : (tensor<?x?xf32>, tensor<1xi64>) -> (tensor<?x?xf32>, tensor<?x?xi64>)
  return %v, %i : tensor<?x?xf32>, tensor<?x?xi64>
}

// -----

// checks that Tile multiplies each extent by its repeat on the host.
// CHECK-LABEL: func.func @tile
// CHECK: %[[D:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[N:.*]] = arith.muli %[[D]], %c3 : index
// CHECK: %[[OUT:.*]] = tensor.empty(%[[N]]) : tensor<?x6xf32>
// CHECK: dq.kernel "tile" ins(%arg0 : tensor<?x3xf32>) outs(%[[OUT]] : tensor<?x6xf32>)
func.func @tile(%x: tensor<?x3xf32>) -> tensor<?x6xf32> {
  %r = "onnx.Constant"() {value = dense<[3, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.Tile"(%x, %r) : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x6xf32>
  return %0 : tensor<?x6xf32>
}

// -----

// checks that opset 18's axes [-1] put the pads on the last axis only: begins (0, 1), extent
// 4 + 1 + 2 = 7, mode reflect = 1.
// CHECK-LABEL: func.func @pad_reflect_axes
// CHECK: dq.kernel "pad" ins(%arg0 : tensor<?x4xf32>) outs(%{{.*}} : tensor<?x7xf32>) scalars(%c0, %c1) {imm = array<i64: 1>}
func.func @pad_reflect_axes(%x: tensor<?x4xf32>) -> tensor<?x7xf32> {
  %p = "onnx.Constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %none = "onnx.None"() : () -> none
  %ax = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.Pad"(%x, %p, %none, %ax) {mode = "reflect"} : (tensor<?x4xf32>, tensor<2xi64>, none, tensor<1xi64>) -> tensor<?x7xf32>
  return %0 : tensor<?x7xf32>
}

// -----

// checks that the constant value stays a device input of the kernel (no readback) and pads
// (0, 1, 1, 0) give [d + 1, 5].
// CHECK-LABEL: func.func @pad_constant
// CHECK-NOT: dq.readback_scalar
// CHECK: %[[N:.*]] = arith.addi %{{.*}}, %c1 : index
// CHECK: %[[OUT:.*]] = tensor.empty(%[[N]]) : tensor<?x5xf32>
// CHECK: dq.kernel "pad" ins(%arg0, %arg1 : tensor<?x4xf32>, tensor<f32>) outs(%[[OUT]] : tensor<?x5xf32>) scalars(%c0, %c1) {imm = array<i64: 0>}
func.func @pad_constant(%x: tensor<?x4xf32>, %v: tensor<f32>) -> tensor<?x5xf32> {
  %p = "onnx.Constant"() {value = dense<[0, 1, 1, 0]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = "onnx.Pad"(%x, %p, %v) : (tensor<?x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}

// -----

// checks the scatter kernels: reduction add = 1; ScatterElements axis -1 -> 1, min = 4.
// CHECK-LABEL: func.func @scatter_nd
// CHECK: dq.kernel "scatter_nd" ins(%arg0, %arg1, %arg2 : tensor<?x4xf32>, tensor<?x1xi64>, tensor<?x4xf32>) outs(%{{.*}} : tensor<?x4xf32>) {imm = array<i64: 1>}
func.func @scatter_nd(%d: tensor<?x4xf32>, %i: tensor<?x1xi64>, %u: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = "onnx.ScatterND"(%d, %i, %u) {reduction = "add"} : (tensor<?x4xf32>, tensor<?x1xi64>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_elements
// CHECK: dq.kernel "scatter_elements" {{.*}} {imm = array<i64: 1, 4>}
func.func @scatter_elements(%d: tensor<?x4xf32>, %i: tensor<?x2xi64>, %u: tensor<?x2xf32>) -> tensor<?x4xf32> {
  %0 = "onnx.ScatterElements"(%d, %i, %u) {axis = -1 : i64, reduction = "min"} : (tensor<?x4xf32>, tensor<?x2xi64>, tensor<?x2xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @pad_wrap(%x: tensor<4xf32>) -> tensor<6xf32> {
  %p = "onnx.Constant"() {value = dense<[1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{unsupported: Pad mode 'wrap'}}
  %0 = "onnx.Pad"(%x, %p) {mode = "wrap"} : (tensor<4xf32>, tensor<2xi64>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @scatter_bad_reduction(%d: tensor<4xf32>, %i: tensor<1x1xi64>, %u: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unsupported: reduction 'sub'}}
  %0 = "onnx.ScatterND"(%d, %i, %u) {reduction = "sub"} : (tensor<4xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
