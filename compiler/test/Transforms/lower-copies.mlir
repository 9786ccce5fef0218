// RUN: dynqual-opt %s --split-input-file --dq-lower-copies | FileCheck %s

// checks that contiguous copies become memcpy, including a view whose statically singleton dim
// carries a dynamic stride (its stride comes from the inner layout) and a nonzero offset.
// CHECK-LABEL: func.func @memcpy
// CHECK-NOT: memref.copy
// CHECK: dq.copy "memcpy" ins(%{{.*}} : memref<?x4xf32>) outs(%{{.*}} : memref<?x4xf32>)
// CHECK: dq.copy "memcpy" ins(%{{.*}} : memref<1x4xf32, strided<[?, 1], offset: ?>>) outs(%{{.*}} : memref<1x4xf32>)
// CHECK-NOT: memref.copy
func.func @memcpy(%a: memref<?x4xf32>, %b: memref<?x4xf32>, %c: memref<1x4xf32, strided<[?, 1], offset: ?>>, %d: memref<1x4xf32>) {
  memref.copy %a, %b : memref<?x4xf32> to memref<?x4xf32>
  memref.copy %c, %d : memref<1x4xf32, strided<[?, 1], offset: ?>> to memref<1x4xf32>
  return
}

// -----

// checks that rows that are contiguous with one pitch per side become copy2d, also when the row
// index is made of a singleton dim and a dim with a dynamic pitch.
// CHECK-LABEL: func.func @copy2d
// CHECK-NOT: memref.copy
// CHECK: dq.copy "copy2d" ins(%{{.*}} : memref<?x4xf32, strided<[?, 1]>>) outs(%{{.*}} : memref<?x4xf32>)
// CHECK: dq.copy "copy2d" ins(%{{.*}} : memref<1x?x4xf32, strided<[?, ?, 1]>>) outs(%{{.*}} : memref<1x?x4xf32>)
func.func @copy2d(%a: memref<?x4xf32, strided<[?, 1]>>, %b: memref<?x4xf32>, %c: memref<1x?x4xf32, strided<[?, ?, 1]>>, %d: memref<1x?x4xf32>) {
  memref.copy %a, %b : memref<?x4xf32, strided<[?, 1]>> to memref<?x4xf32>
  memref.copy %c, %d : memref<1x?x4xf32, strided<[?, ?, 1]>> to memref<1x?x4xf32>
  return
}

// -----

// checks that memcpy and copy2d are never chosen when strides do not allow them: a non-unit
// innermost stride, two outer dims whose pitches are not provably collapsible, and a dynamic
// extent followed by a dim of unknown stride.
// CHECK-LABEL: func.func @strided
// CHECK-NOT: "memcpy"
// CHECK-NOT: "copy2d"
// CHECK: dq.copy "strided" ins(%{{.*}} : memref<8xf32, strided<[2]>>)
// CHECK: dq.copy "strided" ins(%{{.*}} : memref<2x?x4xf32, strided<[?, ?, 1]>>)
// CHECK: dq.copy "strided" ins(%{{.*}} : memref<?x?xf32, strided<[?, 1]>>)
// CHECK-NOT: "memcpy"
// CHECK-NOT: "copy2d"
func.func @strided(%a: memref<8xf32, strided<[2]>>, %b: memref<8xf32>, %c: memref<2x?x4xf32, strided<[?, ?, 1]>>, %d: memref<2x?x4xf32>, %e: memref<?x?xf32, strided<[?, 1]>>, %f: memref<?x?xf32, strided<[?, ?]>>) {
  memref.copy %a, %b : memref<8xf32, strided<[2]>> to memref<8xf32>
  memref.copy %c, %d : memref<2x?x4xf32, strided<[?, ?, 1]>> to memref<2x?x4xf32>
  memref.copy %e, %f : memref<?x?xf32, strided<[?, 1]>> to memref<?x?xf32, strided<[?, ?]>>
  return
}
