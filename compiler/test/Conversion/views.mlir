// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file | FileCheck %s
// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx=views=false --split-input-file | FileCheck %s --check-prefix=KERNEL

// checks that a Slice with positive constant steps is a tensor.extract_slice whose offset is the
// clamped start, whose size is the extent and whose stride is the step (axis 0 has a dynamic dim,
// so its offset min(1, d) and size are dynamic); views=false keeps the dq.slice kernel.
// CHECK-LABEL: func.func @slice_view
// CHECK: %[[V:.*]] = tensor.extract_slice %{{.*}}[%{{.*}}, 1] [%{{.*}}, 2] [1, 2] : tensor<?x6xf32> to tensor<?x2xf32>
// CHECK-NOT: dq.slice
// CHECK: dq.elementwise "neg" ins(%[[V]] : tensor<?x2xf32>)
// KERNEL-LABEL: func.func @slice_view
// KERNEL-NOT: tensor.extract_slice
// KERNEL: dq.slice ins(%{{.*}} : tensor<?x6xf32>)
func.func @slice_view(%x: tensor<?x6xf32>) -> tensor<?x2xf32> {
  %st = "onnx.Constant"() {value = dense<[1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %en = "onnx.Constant"() {value = dense<[1000, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %ax = "onnx.Constant"() {value = dense<[0, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %sp = "onnx.Constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.Slice"(%x, %st, %en, %ax, %sp) : (tensor<?x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x2xf32>
  %1 = "onnx.Neg"(%0) : (tensor<?x2xf32>) -> tensor<?x2xf32>
  return %1 : tensor<?x2xf32>
}

// -----

// checks that a negative step stays a dq.slice kernel with views on (a view would need a
// negative stride, which the copy kinds and the output ABI do not take).
// CHECK-LABEL: func.func @slice_negative_step
// CHECK-NOT: tensor.extract_slice
// CHECK: dq.slice
func.func @slice_negative_step(%x: tensor<?xf32>) -> tensor<?xf32> {
  %s = "onnx.Constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = "onnx.Constant"() {value = dense<-1000> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %t = "onnx.Constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.Slice"(%x, %s, %e, %a, %t) : (tensor<?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// checks that a Slice whose extent folds to 0 is a fresh empty tensor, not a view starting at
// the end of the dim (start 4 of 4).
// CHECK-LABEL: func.func @slice_empty
// CHECK-NOT: tensor.extract_slice
// CHECK-NOT: dq.slice
// CHECK: tensor.empty() : tensor<0xf32>
func.func @slice_empty(%x: tensor<4xf32>) -> tensor<0xf32> {
  %s = "onnx.Constant"() {value = dense<4> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = "onnx.Constant"() {value = dense<9> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.Slice"(%x, %s, %e) : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

// checks that a Transpose whose only consumer walks strides (MatMul) is a dq.transpose_view;
// views=false keeps the dq.transpose kernel.
// CHECK-LABEL: func.func @transpose_view
// CHECK: %[[T:.*]] = dq.transpose_view %{{.*}} permutation = [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
// CHECK-NOT: dq.transpose ins
// CHECK: dq.kernel "matmul" ins(%{{.*}}, %[[T]] : tensor<?x4xf32>, tensor<4x?xf32>)
// KERNEL-LABEL: func.func @transpose_view
// KERNEL-NOT: dq.transpose_view
// KERNEL: dq.transpose ins
func.func @transpose_view(%q: tensor<?x4xf32>, %k: tensor<?x4xf32>) -> tensor<?x?xf32> {
  %kt = "onnx.Transpose"(%k) {perm = [1, 0]} : (tensor<?x4xf32>) -> tensor<4x?xf32>
  %0 = "onnx.MatMul"(%q, %kt) : (tensor<?x4xf32>, tensor<4x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// checks that a Transpose feeding Concat (a kernel that needs contiguous operands) or returned
// as a graph output stays a dq.transpose kernel with views on.
// CHECK-LABEL: func.func @transpose_kernel_consumers
// CHECK-NOT: dq.transpose_view
// CHECK: dq.transpose ins
// CHECK: dq.concat
// CHECK: dq.transpose ins
func.func @transpose_kernel_consumers(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>) -> (tensor<6x2xf32>, tensor<3x2xf32>) {
  %t = "onnx.Transpose"(%x) {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %c = "onnx.Concat"(%t, %y) {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  %r = "onnx.Transpose"(%x) {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %c, %r : tensor<6x2xf32>, tensor<3x2xf32>
}
