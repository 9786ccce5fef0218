// RUN: dynqual-opt %s --split-input-file --dq-pool-allocs | FileCheck %s

// checks that transient allocations become views into one pool whose size and offsets are index
// arithmetic, and that each region ends with a dealloc after its last use. Both are live at the
// fill, so they do not share: 4x4xf32 = 64 bytes at 0, then n*8 bytes (?xi64) at align(64, 64) = 64;
// pool = n*8 + 64 (the end of the last region, unrounded).
// CHECK-LABEL: func.func @pack_two
// CHECK-SAME: (%[[X:.*]]: memref<4x4xf32>, %[[N:.*]]: index)
// CHECK-NOT: memref.alloc
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[BYTES:.*]] = arith.muli %[[N]], %[[C8]] : index
// CHECK: %[[TOTAL:.*]] = arith.addi %[[BYTES]], %[[C64]] : index
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[POOL:.*]] = dq.get_pool %{{.*}}(%[[TOTAL]]) : memref<?xi8>
// CHECK: %[[V0:.*]] = memref.view %[[POOL]][%[[C0]]][] : memref<?xi8> to memref<4x4xf32>
// CHECK: dq.elementwise "add"
// CHECK: %[[V1:.*]] = memref.view %[[POOL]][%[[C64]]][%[[N]]] : memref<?xi8> to memref<?xi64>
// CHECK: dq.fill outs(%[[V1]]
// CHECK-NEXT: memref.dealloc %[[V1]]
// CHECK: dq.elementwise "mul" ins(%[[V0]], %[[V0]]
// CHECK-NEXT: memref.dealloc %[[V0]]
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

// checks that regions with disjoint live ranges share pool bytes. Static: %a (64 bytes) dies at
// its last use through a collapse_shape view, before %b (32 bytes) is made, so %b takes offset 0;
// %c (16 bytes) overlaps %b's live range and goes to align(32, 64) = 64; static part = 80 bytes.
// Dynamic: %d (n x 4 x f32 = 16*n) dies before %e (n x 2 x f32 = 8*n, same SSA size, 8 <= 16), so
// %e reuses %d's slot at align(80, 64) = 128; pool = 16*n + 128.
// CHECK-LABEL: func.func @disjoint_share
// CHECK-SAME: (%[[X:.*]]: memref<16xf32>, %[[N:.*]]: index)
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[BYTES:.*]] = arith.muli %[[N]], %[[C16]] : index
// CHECK: %[[TOTAL:.*]] = arith.addi %[[BYTES]], %[[C128]] : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[POOL:.*]] = dq.get_pool %{{.*}}(%[[TOTAL]])
// CHECK: %[[A:.*]] = memref.view %[[POOL]][%[[C0]]][] : memref<?xi8> to memref<4x4xf32>
// CHECK: %[[AV:.*]] = memref.collapse_shape %[[A]]
// CHECK: dq.elementwise "add" ins(%[[AV]], %[[X]] {{.*}}) outs(%[[X]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: %[[B:.*]] = memref.view %[[POOL]][%[[C0]]][] : memref<?xi8> to memref<8xf32>
// CHECK: %[[C:.*]] = memref.view %[[POOL]][%[[C64]]][] : memref<?xi8> to memref<4xf32>
// CHECK: %[[D:.*]] = memref.view %[[POOL]][%[[C128]]][%[[N]]] : memref<?xi8> to memref<?x4xf32>
// CHECK: memref.dealloc %[[D]]
// CHECK: %[[E:.*]] = memref.view %[[POOL]][%[[C128]]][%[[N]]] : memref<?xi8> to memref<?x2xf32>
// CHECK: memref.dealloc %[[E]]
// CHECK-NOT: memref.alloc
func.func @disjoint_share(%x: memref<16xf32>, %n: index) -> memref<16xf32> {
  %a = memref.alloc() : memref<4x4xf32>
  dq.fill outs(%a : memref<4x4xf32>) value = 1.0 : f32
  %av = memref.collapse_shape %a [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  dq.elementwise "add" ins(%av, %x : memref<16xf32>, memref<16xf32>) outs(%x : memref<16xf32>)
  %b = memref.alloc() : memref<8xf32>
  dq.fill outs(%b : memref<8xf32>) value = 1.0 : f32
  %c = memref.alloc() : memref<4xf32>
  dq.fill outs(%c : memref<4xf32>) value = 1.0 : f32
  dq.elementwise "add" ins(%b, %b : memref<8xf32>, memref<8xf32>) outs(%b : memref<8xf32>)
  %d = memref.alloc(%n) : memref<?x4xf32>
  dq.fill outs(%d : memref<?x4xf32>) value = 1.0 : f32
  %e = memref.alloc(%n) : memref<?x2xf32>
  dq.fill outs(%e : memref<?x2xf32>) value = 1.0 : f32
  return %x : memref<16xf32>
}

// -----

// checks that overlapping live ranges keep distinct bytes: %a is read (through a subview) after
// %b is made, so %b goes to align(64, 64) = 64; %d is still live when %e is made, and %f's size
// is a different SSA value than dead %e's, so neither reuses a slot: slots at align(128, 64) =
// 128, then ceil((128 + 4*n) / 64) * 64, then the same after %e's end.
// CHECK-LABEL: func.func @overlap_distinct
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[U1:.*]] = arith.ceildivsi %{{.*}}, %[[C64]]
// CHECK: %[[OE:.*]] = arith.muli %[[U1]], %[[C64]]
// CHECK: %[[U2:.*]] = arith.ceildivsi %{{.*}}, %[[C64]]
// CHECK: %[[OF:.*]] = arith.muli %[[U2]], %[[C64]]
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[POOL:.*]] = dq.get_pool
// CHECK: memref.view %[[POOL]][%[[C0]]][] : memref<?xi8> to memref<16xf32>
// CHECK: memref.view %[[POOL]][%[[C64]]][] : memref<?xi8> to memref<16xf32>
// CHECK: memref.view %[[POOL]][%[[C128]]][%{{.*}}] : memref<?xi8> to memref<?xf32>
// CHECK: memref.view %[[POOL]][%[[OE:.*]]][%{{.*}}] : memref<?xi8> to memref<?xf32>
// CHECK: memref.view %[[POOL]][%[[OF:.*]]][%{{.*}}] : memref<?xi8> to memref<?xf32>
func.func @overlap_distinct(%x: memref<16xf32>, %n: index, %m: index) -> memref<16xf32> {
  %a = memref.alloc() : memref<16xf32>
  dq.fill outs(%a : memref<16xf32>) value = 1.0 : f32
  %b = memref.alloc() : memref<16xf32>
  dq.fill outs(%b : memref<16xf32>) value = 1.0 : f32
  %s = memref.subview %a[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  dq.elementwise "add" ins(%b, %x : memref<16xf32>, memref<16xf32>) outs(%x : memref<16xf32>)
  dq.fill outs(%s : memref<8xf32, strided<[1]>>) value = 1.0 : f32
  %d = memref.alloc(%n) : memref<?xf32>
  dq.fill outs(%d : memref<?xf32>) value = 1.0 : f32
  %e = memref.alloc(%n) : memref<?xf32>
  dq.fill outs(%e : memref<?xf32>) value = 1.0 : f32
  dq.fill outs(%d : memref<?xf32>) value = 2.0 : f32
  %f = memref.alloc(%m) : memref<?xf32>
  dq.fill outs(%f : memref<?xf32>) value = 1.0 : f32
  return %x : memref<16xf32>
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
