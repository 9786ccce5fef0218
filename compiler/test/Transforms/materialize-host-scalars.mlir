// RUN: dynqual-opt %s --split-input-file --dq-materialize-host-scalars | FileCheck %s

// checks that host stores (a bufferized tensor.from_elements) go to host scratch, that a host
// load before the device use reads the scratch, and that one copy to the device buffer precedes
// the first device use.
// CHECK-LABEL: func.func @staged_shape
// CHECK-SAME: (%[[N:.*]]: index, %[[M:.*]]: index)
// CHECK: %[[SCRATCH:.*]] = dq.get_host_scratch %{{.*}}() : memref<2xindex>
// CHECK: %[[DEV:.*]] = memref.alloc() : memref<2xindex>
// CHECK-NOT: memref.store {{.*}}%[[DEV]]
// CHECK: memref.store %[[N]], %[[SCRATCH]][
// CHECK: memref.store %[[M]], %[[SCRATCH]][
// CHECK: memref.load %[[SCRATCH]][
// CHECK: memref.copy %[[SCRATCH]], %[[DEV]]
// CHECK-NEXT: dq.expand ins(%[[DEV]] : memref<2xindex>)
func.func @staged_shape(%n: index, %m: index) -> memref<2xindex> {
  %0 = memref.alloc() : memref<2xindex>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  memref.store %n, %0[%c0] : memref<2xindex>
  memref.store %m, %0[%c1] : memref<2xindex>
  %v = memref.load %0[%c0] : memref<2xindex>
  %1 = memref.alloc() : memref<2xindex>
  dq.expand ins(%0 : memref<2xindex>) outs(%1 : memref<2xindex>)
  return %1 : memref<2xindex>
}

// -----

// checks that a buffer only written on the device gets no host scratch and no copy.
// CHECK-LABEL: func.func @device_only
// CHECK-NOT: dq.get_host_scratch
// CHECK-NOT: memref.copy
// CHECK: return
func.func @device_only() -> memref<4xf32> {
  %0 = memref.alloc() : memref<4xf32>
  dq.fill outs(%0 : memref<4xf32>) value = 2.0 : f32
  return %0 : memref<4xf32>
}

// -----

// checks that a host store after a device use is not staged (one copy could not order it).
// CHECK-LABEL: func.func @store_after_device_use
// CHECK-NOT: dq.get_host_scratch
// CHECK: memref.store
func.func @store_after_device_use(%n: index) -> memref<1xindex> {
  %c0 = arith.constant 0 : index
  %0 = memref.alloc() : memref<1xindex>
  dq.fill outs(%0 : memref<1xindex>) value = 0 : index
  memref.store %n, %0[%c0] : memref<1xindex>
  return %0 : memref<1xindex>
}

// -----

// checks that a graph output written by host stores (a Shape output after
// dq-use-output-allocator) is staged: the stores go to host scratch and one copy uploads the
// scratch into the caller-allocated output before the return; no store touches the output.
// CHECK-LABEL: func.func @shape_output
// CHECK-SAME: (%[[A:.*]]: i64, %[[B:.*]]: i64)
// CHECK: %[[OUT:.*]] = dq.alloc_output %{{.*}}[0] () : memref<2xi64>
// CHECK: %[[SCRATCH:.*]] = dq.get_host_scratch %{{.*}}() : memref<2xi64>
// CHECK-NOT: memref.store {{.*}}%[[OUT]]
// CHECK: memref.store %[[A]], %[[SCRATCH]][
// CHECK: memref.store %[[B]], %[[SCRATCH]][
// CHECK: memref.copy %[[SCRATCH]], %[[OUT]]
// CHECK-NEXT: return %[[OUT]]
func.func @shape_output(%a: i64, %b: i64) -> memref<2xi64> {
  %ctx = dq.get_context : !dq.context
  %out = dq.alloc_output %ctx[0] () : memref<2xi64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  memref.store %a, %out[%c0] : memref<2xi64>
  memref.store %b, %out[%c1] : memref<2xi64>
  return %out : memref<2xi64>
}

// -----

// checks that a rank-0 output reached through the view chain of dq-use-output-allocator (the
// allocation was memref<i32>, the output is memref<1xi32>) is staged on the view the store
// addresses, and that the copy precedes the view's first device use (the ABI expand).
// CHECK-LABEL: func.func @rank0_output_view
// CHECK-SAME: (%[[V:.*]]: i32)
// CHECK: %[[OUT:.*]] = dq.alloc_output %{{.*}}[0] () : memref<1xi32>
// CHECK: %[[VIEW:.*]] = memref.collapse_shape %[[OUT]] [] : memref<1xi32> into memref<i32>
// CHECK: %[[SCRATCH:.*]] = dq.get_host_scratch %{{.*}}() : memref<i32>
// CHECK: memref.store %[[V]], %[[SCRATCH]][]
// CHECK: memref.copy %[[SCRATCH]], %[[VIEW]]
// CHECK-NEXT: memref.expand_shape %[[VIEW]]
func.func @rank0_output_view(%v: i32) -> memref<1xi32> {
  %ctx = dq.get_context : !dq.context
  %out = dq.alloc_output %ctx[0] () : memref<1xi32>
  %view = memref.collapse_shape %out [] : memref<1xi32> into memref<i32>
  memref.store %v, %view[] : memref<i32>
  %e = memref.expand_shape %view [] output_shape [1] : memref<i32> into memref<1xi32>
  return %e : memref<1xi32>
}

// -----

// checks that a graph output with a dynamic extent gets a scratch of the same extent, read from
// the output buffer's dims.
// CHECK-LABEL: func.func @dynamic_output
// CHECK-SAME: (%[[N:.*]]: index, %[[V:.*]]: i64)
// CHECK: %[[OUT:.*]] = dq.alloc_output %{{.*}}[0] (%[[N]]) : memref<?xi64>
// CHECK: %[[D:.*]] = memref.dim %[[OUT]], %{{.*}} : memref<?xi64>
// CHECK: %[[SCRATCH:.*]] = dq.get_host_scratch %{{.*}}(%[[D]]) : memref<?xi64>
// CHECK: memref.store %[[V]], %[[SCRATCH]][
// CHECK: memref.copy %[[SCRATCH]], %[[OUT]]
// CHECK-NEXT: return %[[OUT]]
func.func @dynamic_output(%n: index, %v: i64) -> memref<?xi64> {
  %ctx = dq.get_context : !dq.context
  %out = dq.alloc_output %ctx[0] (%n) : memref<?xi64>
  %c0 = arith.constant 0 : index
  memref.store %v, %out[%c0] : memref<?xi64>
  return %out : memref<?xi64>
}

// -----

// checks that an output written on the device gets no scratch and no copy.
// CHECK-LABEL: func.func @device_output
// CHECK-NOT: dq.get_host_scratch
// CHECK-NOT: memref.copy
// CHECK: return
func.func @device_output() -> memref<4xf32> {
  %ctx = dq.get_context : !dq.context
  %out = dq.alloc_output %ctx[0] () : memref<4xf32>
  dq.fill outs(%out : memref<4xf32>) value = 2.0 : f32
  return %out : memref<4xf32>
}
