// RUN: dynqual-opt %s --allow-unregistered-dialect --split-input-file --dq-production | FileCheck %s

// checks that a Reshape of a tensor with a static 0 dim next to a dynamic one compiles: collapsing
// tensor<0x?xf32> bufferized to a memref.collapse_shape whose result folded 0 * ? to a static 0,
// which the memref verifier rejects. The empty source has no data to move, so the output is a
// fresh allocation of the runtime shape and no view of the input.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%{{.*}}: memref<0x?xf32> {dq.name = "x"}, %{{.*}}: memref<3xi64> {dq.name = "shape"})
// CHECK-NOT: memref.collapse_shape
// CHECK-NOT: memref.expand_shape
// CHECK: %[[OUT:.*]] = dq.alloc_output
// CHECK: return %[[OUT]]
func.func @main(%x: tensor<0x?xf32> {dq.name = "x"}, %s: tensor<3xi64> {dq.name = "shape"})
    -> (tensor<0x?x?xf32> {dq.name = "y"}) {
  %r = "onnx.Reshape"(%x, %s) {allowzero = 1 : i64} : (tensor<0x?xf32>, tensor<3xi64>) -> tensor<0x?x?xf32>
  return %r : tensor<0x?x?xf32>
}

// -----

// checks the same for Flatten, whose collapse groups [0, ?] into one dim.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%{{.*}}: memref<?x0x?xf32> {dq.name = "x"})
// CHECK-NOT: memref.collapse_shape
// CHECK: %[[OUT:.*]] = dq.alloc_output
// CHECK: return %[[OUT]]
func.func @main(%x: tensor<?x0x?xf32> {dq.name = "x"}) -> (tensor<?x0xf32> {dq.name = "y"}) {
  %r = "onnx.Flatten"(%x) {axis = 1 : i64} : (tensor<?x0x?xf32>) -> tensor<?x0xf32>
  return %r : tensor<?x0xf32>
}

// -----

// checks the same for Squeeze of a sliced (strided) view with a static 0 dim: the bufferized
// collapse of x[1:][?, 0, 1, ?] on axis 2 came out with a static collapsed dim the memref
// verifier rejected.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%{{.*}}: memref<?x0x1x?xf32> {dq.name = "x"})
// CHECK-NOT: memref.collapse_shape
// CHECK: %[[OUT:.*]] = dq.alloc_output
// CHECK: return %[[OUT]]
func.func @main(%x: tensor<?x0x1x?xf32> {dq.name = "x"}) -> (tensor<?x0x?xf32> {dq.name = "y"}) {
  %one = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %big = "onnx.Constant"() {value = dense<[1000]> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax0 = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax2 = "onnx.Constant"() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %s = "onnx.Slice"(%x, %one, %big, %ax0) : (tensor<?x0x1x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x0x1x?xf32>
  %r = "onnx.Squeeze"(%s, %ax2) : (tensor<?x0x1x?xf32>, tensor<1xi64>) -> tensor<?x0x?xf32>
  return %r : tensor<?x0x?xf32>
}
