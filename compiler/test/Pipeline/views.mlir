// RUN: dynqual-opt %s --allow-unregistered-dialect --split-input-file --dq-production | FileCheck %s
// RUN: dynqual-opt %s --allow-unregistered-dialect --split-input-file --dq-production=views=false | FileCheck %s --check-prefix=KERNEL
// RUN: dynqual-opt %s --allow-unregistered-dialect --split-input-file --dq-production=inject=singleton-copy-host-path | FileCheck %s --check-prefix=HOSTCOPY
// RUN: dynqual-opt %s --allow-unregistered-dialect --split-input-file --dq-production=inject=strided-view-base-pointer | FileCheck %s --check-prefix=BASE

// checks the first row of a [3, N, 4] input, sliced to a window of 2 on the last axis and
// concatenated with itself: with views the row is a memref.subview with a static unit dim whose
// stride is dynamic (4 N), and each concat operand is promoted into a contiguous temporary by a
// copy2d (rows of 2 at pitch 4; the unit dim is skipped); views=false slices with a kernel;
// singleton-copy-host-path turns those copies into host copies; strided-view-base-pointer hands
// the concat the view's base instead.
// CHECK-LABEL: func.func @row_window_concat
// CHECK: %[[ROW:.*]] = memref.subview %{{.*}}[0, 0, 0] [1, %{{.*}}, 2] [1, 1, 1] : memref<3x?x4xf32> to memref<1x?x2xf32, strided<[?, 4, 1]>>
// CHECK: dq.copy "copy2d" ins(%[[ROW]] : memref<1x?x2xf32, strided<[?, 4, 1]>>)
// CHECK: dq.copy "copy2d" ins(%[[ROW]] : memref<1x?x2xf32, strided<[?, 4, 1]>>)
// CHECK: dq.concat
// KERNEL-LABEL: func.func @row_window_concat
// KERNEL-NOT: memref.subview
// KERNEL: dq.slice
// HOSTCOPY-LABEL: func.func @row_window_concat
// HOSTCOPY: dq.copy "host" ins(%{{.*}} : memref<1x?x2xf32, strided<[?, 4, 1]>>)
// BASE-LABEL: func.func @row_window_concat
// BASE: memref.reinterpret_cast
// BASE-NOT: dq.copy
// BASE: dq.concat
func.func @row_window_concat(%x: tensor<3x?x4xf32>) -> tensor<1x?x2xf32> {
  %s = "onnx.Constant"() {value = dense<[0, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %e = "onnx.Constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a = "onnx.Constant"() {value = dense<[0, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %row = "onnx.Slice"(%x, %s, %e, %a) : (tensor<3x?x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x?x2xf32>
  %c = "onnx.Concat"(%row, %row) {axis = 1 : i64} : (tensor<1x?x2xf32>, tensor<1x?x2xf32>) -> tensor<1x?x2xf32>
  return %c : tensor<1x?x2xf32>
}

// -----

// checks a column window feeding Transpose, whose operand is promoted with a strided copy (rows
// of 2 at pitch 4: copy2d); and the keys of a MatMul transposed as a memref.transpose view read
// in place by the matmul kernel (no copy, no transpose kernel).
// CHECK-LABEL: func.func @window_and_keys
// CHECK: %[[W:.*]] = memref.subview %{{.*}}[0, 1] [%{{.*}}, 2] [1, 1] : memref<?x4xf32> to memref<?x2xf32, strided<[4, 1], offset: 1>>
// CHECK: dq.copy "copy2d" ins(%[[W]]
// CHECK: dq.transpose
// CHECK: %[[KT:.*]] = memref.transpose %{{.*}} (d0, d1) -> (d1, d0) : memref<?x4xf32> to memref<4x?xf32, strided<[1, 4]>>
// CHECK-NOT: dq.copy
// CHECK: dq.kernel "matmul" ins(%{{.*}}, %[[KT]] : memref<?x4xf32>, memref<4x?xf32, strided<[1, 4]>>)
// KERNEL-LABEL: func.func @window_and_keys
// KERNEL-NOT: memref.transpose
// KERNEL-NOT: memref.subview
func.func @window_and_keys(%x: tensor<?x4xf32>, %q: tensor<?x4xf32>) -> (tensor<2x?xf32>, tensor<?x?xf32>) {
  %s = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = "onnx.Constant"() {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %w = "onnx.Slice"(%x, %s, %e, %a) : (tensor<?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x2xf32>
  %wt = "onnx.Transpose"(%w) {perm = [1, 0]} : (tensor<?x2xf32>) -> tensor<2x?xf32>
  %kt = "onnx.Transpose"(%x) {perm = [1, 0]} : (tensor<?x4xf32>) -> tensor<4x?xf32>
  %m = "onnx.MatMul"(%q, %kt) : (tensor<?x4xf32>, tensor<4x?xf32>) -> tensor<?x?xf32>
  return %wt, %m : tensor<2x?xf32>, tensor<?x?xf32>
}
