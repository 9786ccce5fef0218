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
