// RUN: dynqual-opt %s --split-input-file --dq-optimize-memrefs | FileCheck %s

// checks that a second same-type allocation, made after the last use of the first (through a
// view), takes over the first buffer.
// CHECK-LABEL: func.func @reuse_after_last_use
// CHECK: %[[A:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK-NOT: memref.alloc
// CHECK: dq.elementwise "add" ins(%{{.*}}, %[[OUT]] : {{.*}}) outs(%[[A]] :
// CHECK: dq.elementwise "mul" ins(%[[A]], %[[A]] : {{.*}}) outs(%[[OUT]] :
// CHECK: return %[[OUT]]
func.func @reuse_after_last_use(%x: memref<?x4xf32>, %n: index) -> memref<?x4xf32> {
  %a = memref.alloc(%n) : memref<?x4xf32>
  dq.fill outs(%a : memref<?x4xf32>) value = 1.0 : f32
  %av = memref.cast %a : memref<?x4xf32> to memref<?x?xf32>
  %out = memref.alloc(%n) : memref<?x4xf32>
  dq.elementwise "add" ins(%x, %av : memref<?x4xf32>, memref<?x?xf32>) outs(%out : memref<?x4xf32>)
  %b = memref.alloc(%n) : memref<?x4xf32>
  dq.elementwise "add" ins(%x, %out : memref<?x4xf32>, memref<?x4xf32>) outs(%b : memref<?x4xf32>)
  %r = memref.alloc(%n) : memref<?x4xf32>
  dq.elementwise "mul" ins(%b, %b : memref<?x4xf32>, memref<?x4xf32>) outs(%r : memref<?x4xf32>)
  return %r : memref<?x4xf32>
}

// -----

// checks that overlapping live ranges, a different type, different dynamic sizes and a
// host-written buffer are never shared.
// CHECK-LABEL: func.func @no_reuse
// CHECK-COUNT-6: memref.alloc
// CHECK: return
func.func @no_reuse(%n: index, %m: index) -> (memref<4xf32>, memref<4xf32>, memref<?xf32>, memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<4xf32>
  dq.fill outs(%a : memref<4xf32>) value = 1.0 : f32
  %b = memref.alloc() : memref<4xf32>
  dq.elementwise "add" ins(%a, %a : memref<4xf32>, memref<4xf32>) outs(%b : memref<4xf32>)
  %h = memref.alloc() : memref<1xindex>
  memref.store %n, %h[%c0] : memref<1xindex>
  %h2 = memref.alloc() : memref<1xindex>
  dq.fill outs(%h2 : memref<1xindex>) value = 0 : index
  %d = memref.alloc(%n) : memref<?xf32>
  dq.fill outs(%d : memref<?xf32>) value = 1.0 : f32
  %e = memref.alloc(%m) : memref<?xf32>
  dq.fill outs(%e : memref<?xf32>) value = 1.0 : f32
  return %a, %b, %d, %e : memref<4xf32>, memref<4xf32>, memref<?xf32>, memref<?xf32>
}
