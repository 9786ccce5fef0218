// RUN: dynqual-opt %s --allow-unregistered-dialect --split-input-file --dq-production | FileCheck %s

// checks that a data-dependent graph output (Compress) is allocated through dq.alloc_output with
// exactly the read-back count, after the readback, written in place by the kernel and returned as
// is: no capacity buffer, no subview of one, no copy on return.
// CHECK-LABEL: func.func @main
// CHECK-NOT: memref.subview
// CHECK: dq.kernel "count_nonzero" ins(%arg1 : memref<?xi1>) outs(%[[CNT:.*]] : memref<i64>)
// CHECK: %[[N:.*]] = dq.readback_scalar %[[CNT]][] : memref<i64>
// CHECK: %[[OUT:.*]] = dq.alloc_output %{{.*}}[0] (%[[N]]) : memref<?x3xf32>
// CHECK: dq.kernel "compress" ins(%arg0, %arg1 : memref<?x3xf32>, memref<?xi1>) outs(%[[OUT]] : memref<?x3xf32>)
// CHECK-NOT: memref.subview
// CHECK-NOT: dq.copy
// CHECK: return %[[OUT]] : memref<?x3xf32>
func.func @main(%x: tensor<?x3xf32> {dq.name = "x"}, %c: tensor<?xi1> {dq.name = "keep"}) -> (tensor<?x3xf32> {dq.name = "y"}) {
  %0 = "onnx.Compress"(%x, %c) {axis = 0 : i64} : (tensor<?x3xf32>, tensor<?xi1>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// checks NonZero -> Transpose -> GatherND with both the indices and the gathered values as graph
// outputs: one readback, and each output is a dq.alloc_output sized by that read-back count.
// CHECK-LABEL: func.func @main
// CHECK-NOT: memref.subview
// CHECK: dq.kernel "count_nonzero"
// CHECK: %[[N:.*]] = dq.readback_scalar
// CHECK-NOT: dq.readback_scalar
// CHECK: %[[NZ:.*]] = memref.alloc(%[[N]]) {{.*}} : memref<2x?xi64>
// CHECK: dq.kernel "nonzero" ins(%arg0 : memref<?x?xf32>) outs(%[[NZ]] : memref<2x?xi64>)
// CHECK: %[[IDX:.*]] = dq.alloc_output %{{.*}}[1] (%[[N]]) : memref<?x2xi64>
// CHECK: dq.transpose ins(%[[NZ]] : memref<2x?xi64>) outs(%[[IDX]] : memref<?x2xi64>)
// CHECK: %[[Y:.*]] = dq.alloc_output %{{.*}}[0] (%[[N]]) : memref<?xf32>
// CHECK: dq.kernel "gather_nd" ins(%arg0, %[[IDX]] : memref<?x?xf32>, memref<?x2xi64>) outs(%[[Y]] : memref<?xf32>)
// CHECK-NOT: memref.subview
// CHECK: return %[[Y]], %[[IDX]]
func.func @main(%x: tensor<?x?xf32> {dq.name = "x"}) -> (tensor<?xf32> {dq.name = "y"}, tensor<?x2xi64> {dq.name = "idx"}) {
  %nz = "onnx.NonZero"(%x) : (tensor<?x?xf32>) -> tensor<2x?xi64>
  %t = "onnx.Transpose"(%nz) {perm = [1, 0]} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %y = "onnx.GatherND"(%x, %t) : (tensor<?x?xf32>, tensor<?x2xi64>) -> tensor<?xf32>
  return %y, %t : tensor<?xf32>, tensor<?x2xi64>
}
