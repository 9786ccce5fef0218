// RUN: dynqual-opt %s --split-input-file --dq-pool-allocs | FileCheck %s

// checks that transient allocations become views into one pool whose size and offsets are index
// arithmetic: 4x4xf32 = 64 bytes at 0, then n*8 bytes (?xi64) at align(64, 256) = 256.
// CHECK-LABEL: func.func @pack_two
// CHECK-SAME: (%[[X:.*]]: memref<4x4xf32>, %[[N:.*]]: index)
// CHECK-NOT: memref.alloc
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[BYTES:.*]] = arith.muli %[[N]], %[[C8]] : index
// CHECK: %[[END:.*]] = arith.addi %[[BYTES]], %[[C256]] : index
// CHECK: %[[UNITS:.*]] = arith.ceildivsi %[[END]], %[[C256]] : index
// CHECK: %[[TOTAL:.*]] = arith.muli %[[UNITS]], %[[C256]] : index
// CHECK: %[[POOL:.*]] = dq.get_pool %{{.*}}(%[[TOTAL]]) : memref<?xi8>
// CHECK: %[[V0:.*]] = memref.view %[[POOL]][%[[C0]]][] : memref<?xi8> to memref<4x4xf32>
// CHECK: %[[V1:.*]] = memref.view %[[POOL]][%[[C256]]][%[[N]]] : memref<?xi8> to memref<?xi64>
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @pack_two(%x: memref<4x4xf32>, %n: index) -> memref<4x4xf32> {
  %t = memref.alloc() : memref<4x4xf32>
  dq.elementwise "add" ins(%x, %x : memref<4x4xf32>, memref<4x4xf32>) outs(%t : memref<4x4xf32>)
  %i = memref.alloc(%n) : memref<?xi64>
  dq.fill outs(%i : memref<?xi64>) value = 0 : i64
  dq.elementwise "mul" ins(%t, %t : memref<4x4xf32>, memref<4x4xf32>) outs(%x : memref<4x4xf32>)
  return %x : memref<4x4xf32>
}

// -----

// checks that a returned allocation is not pooled, and that an allocation whose size is only
// known after another pooled buffer is used stays a plain allocation.
// CHECK-LABEL: func.func @not_transient
// CHECK: dq.get_pool
// CHECK: memref.view
// CHECK: dq.readback_scalar
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: memref.alloc() : memref<2xf32>
// CHECK-NOT: memref.view
// CHECK: return
func.func @not_transient(%x: memref<4xi64>) -> memref<2xf32> {
  %c0 = arith.constant 0 : index
  %t = memref.alloc() : memref<4xi64>
  dq.expand ins(%x : memref<4xi64>) outs(%t : memref<4xi64>)
  %n = dq.readback_scalar %t[%c0] : memref<4xi64>
  %late = memref.alloc(%n) : memref<?xf32>
  dq.fill outs(%late : memref<?xf32>) value = 0.0 : f32
  %r = memref.alloc() : memref<2xf32>
  dq.fill outs(%r : memref<2xf32>) value = 0.0 : f32
  return %r : memref<2xf32>
}
