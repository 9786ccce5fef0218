// RUN: dynqual-opt %s --split-input-file --dq-promote-strided-operands | FileCheck %s

// checks that a strided input of dq.transpose is copied into a contiguous temporary and a
// strided output is produced in a temporary and copied back.
// CHECK-LABEL: func.func @transpose_strided
// CHECK-SAME: (%[[SRC:.*]]: memref<4x?xf32, strided<[?, 2]>>, %[[DST:.*]]: memref<?x4xf32, strided<[8, 1]>>)
// CHECK: %[[TIN:.*]] = memref.alloc(%{{.*}}) : memref<4x?xf32>
// CHECK: memref.copy %[[SRC]], %[[TIN]]
// CHECK: %[[TOUT:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK-NOT: strided
// CHECK: dq.transpose ins(%[[TIN]] : memref<4x?xf32>) outs(%[[TOUT]] : memref<?x4xf32>)
// CHECK-NEXT: memref.copy %[[TOUT]], %[[DST]]
func.func @transpose_strided(%src: memref<4x?xf32, strided<[?, 2]>>, %dst: memref<?x4xf32, strided<[8, 1]>>) {
  dq.transpose ins(%src : memref<4x?xf32, strided<[?, 2]>>) outs(%dst : memref<?x4xf32, strided<[8, 1]>>) permutation = [1, 0]
  return
}

// -----

// checks that an elementwise op keeps its strided operands (its kernel walks strides) and that
// a transpose of provably contiguous layouts (a singleton dim with a dynamic stride, a nonzero
// offset) is left alone.
// CHECK-LABEL: func.func @no_promotion
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: return
func.func @no_promotion(%a: memref<4x4xf32, strided<[8, 1]>>, %b: memref<4x4xf32>,
                        %c: memref<1x4xf32, strided<[?, 1], offset: 3>>, %d: memref<4x1xf32>) {
  dq.elementwise "add" ins(%a, %a : memref<4x4xf32, strided<[8, 1]>>, memref<4x4xf32, strided<[8, 1]>>) outs(%b : memref<4x4xf32>)
  dq.transpose ins(%c : memref<1x4xf32, strided<[?, 1], offset: 3>>) outs(%d : memref<4x1xf32>) permutation = [1, 0]
  return
}
