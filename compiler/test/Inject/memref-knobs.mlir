// RUN: dynqual-opt %s --split-input-file --dq-use-output-allocator | FileCheck %s --check-prefix=OUT
// RUN: dynqual-opt %s --split-input-file --dq-use-output-allocator=inject=output-rank-collapse | FileCheck %s --check-prefix=COLLAPSE
// RUN: dynqual-opt %s --split-input-file --dq-optimize-memrefs | FileCheck %s --check-prefix=REUSE
// RUN: dynqual-opt %s --split-input-file --dq-optimize-memrefs=inject=host-scalars-after-reuse | FileCheck %s --check-prefix=HOSTREUSE
// RUN: dynqual-opt %s --split-input-file --dq-promote-strided-operands | FileCheck %s --check-prefix=PROMOTE
// RUN: dynqual-opt %s --split-input-file --dq-promote-strided-operands=inject=strided-view-base-pointer | FileCheck %s --check-prefix=BASE
// RUN: dynqual-opt %s --split-input-file --dq-lower-copies | FileCheck %s --check-prefix=COPY
// RUN: dynqual-opt %s --split-input-file --dq-lower-copies=inject=singleton-copy-host-path | FileCheck %s --check-prefix=HOSTCOPY

// Knob 4, output-rank-collapse: production requests the output's two dims; the knob requests
// one dim, their product (enough bytes, wrong rank), and views it back as 2-D.
// OUT-LABEL: func.func @output
// OUT: %[[D0:.*]] = memref.dim %{{.*}}, %c0
// OUT: %[[D1:.*]] = memref.dim %{{.*}}, %c1
// OUT: dq.alloc_output %{{.*}}[0] (%[[D0]], %[[D1]]) : memref<?x?xf32>
// COLLAPSE-LABEL: func.func @output
// COLLAPSE: %[[N:.*]] = arith.muli
// COLLAPSE: %[[O:.*]] = dq.alloc_output %{{.*}}[0] (%[[N]]) : memref<?xf32>
// COLLAPSE: memref.expand_shape %[[O]] {{\[\[}}0, 1]] output_shape
func.func @output(%x: memref<?x?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = memref.dim %x, %c0 : memref<?x?xf32>
  %d1 = memref.dim %x, %c1 : memref<?x?xf32>
  %y = memref.alloc(%d0, %d1) : memref<?x?xf32>
  dq.elementwise "add" ins(%x, %x : memref<?x?xf32>, memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return %y : memref<?x?xf32>
}

// -----

// Knob 6, host-scalars-after-reuse (with the pipeline order): a buffer the host writes after
// the device buffer %t died. Production leaves host-written buffers out of reuse; the knob lets
// the host-written one take over %t, so the stores now hit memory the device wrote.
// REUSE-LABEL: func.func @host_written
// REUSE: %[[T:.*]] = memref.alloc() : memref<2xi64>
// REUSE: %[[H:.*]] = memref.alloc() : memref<2xi64>
// REUSE: memref.store %{{.*}}, %[[H]]
// HOSTREUSE-LABEL: func.func @host_written
// HOSTREUSE: %[[T:.*]] = memref.alloc() : memref<2xi64>
// HOSTREUSE-NOT: memref.alloc() : memref<2xi64>
// HOSTREUSE: memref.store %{{.*}}, %[[T]]
func.func @host_written(%a: memref<2xi64>, %n: i64) -> memref<2xi1> {
  %c0 = arith.constant 0 : index
  %t = memref.alloc() : memref<2xi64>
  dq.elementwise "add" ins(%a, %a : memref<2xi64>, memref<2xi64>) outs(%t : memref<2xi64>)
  %o = memref.alloc() : memref<2xi1>
  dq.elementwise "equal" ins(%t, %a : memref<2xi64>, memref<2xi64>) outs(%o : memref<2xi1>)
  %h = memref.alloc() : memref<2xi64>
  memref.store %n, %h[%c0] : memref<2xi64>
  dq.elementwise "equal" ins(%h, %a : memref<2xi64>, memref<2xi64>) outs(%o : memref<2xi1>)
  return %o : memref<2xi1>
}

// -----

// Knob 10, strided-view-base-pointer: a transpose of a strided window. Production copies the
// window into a contiguous temporary; the knob hands the kernel the base of %x at offset 0 with
// row-major strides.
// PROMOTE-LABEL: func.func @strided_operand
// PROMOTE: %[[TMP:.*]] = memref.alloc() : memref<3x2xf32>
// PROMOTE: memref.copy %{{.*}}, %[[TMP]]
// PROMOTE: dq.transpose ins(%[[TMP]] : memref<3x2xf32>)
// BASE-LABEL: func.func @strided_operand
// BASE-SAME: (%[[X:.*]]: memref<3x4xf32>
// BASE-NOT: memref.copy
// BASE: %[[V:.*]] = memref.subview %[[X]]
// BASE: %[[B:.*]] = memref.reinterpret_cast %[[V]] to offset: [0], sizes: [3, 2], strides: [%{{.*}}, %{{.*}}]
// BASE: dq.transpose ins(%[[B]] : memref<3x2xf32, strided<[?, ?]>>)
func.func @strided_operand(%x: memref<3x4xf32>) -> memref<2x3xf32> {
  %v = memref.subview %x[0, 1] [3, 2] [1, 1] : memref<3x4xf32> to memref<3x2xf32, strided<[4, 1], offset: 1>>
  %y = memref.alloc() : memref<2x3xf32>
  dq.transpose ins(%v : memref<3x2xf32, strided<[4, 1], offset: 1>>) outs(%y : memref<2x3xf32>) permutation = [1, 0]
  return %y : memref<2x3xf32>
}

// -----

// Knob 3, singleton-copy-host-path: a [1, 4] row whose singleton dim has a dynamic stride.
// Production lowers it to one memcpy (the singleton stride never moves an address); the knob
// makes it a host copy.
// COPY-LABEL: func.func @singleton_row
// COPY: dq.copy "memcpy" ins(%{{.*}} : memref<1x4xf32, strided<[?, 1], offset: ?>>)
// HOSTCOPY-LABEL: func.func @singleton_row
// HOSTCOPY: dq.copy "host" ins(%{{.*}} : memref<1x4xf32, strided<[?, 1], offset: ?>>)
func.func @singleton_row(%x: memref<1x4xf32, strided<[?, 1], offset: ?>>, %y: memref<1x4xf32>) {
  memref.copy %x, %y : memref<1x4xf32, strided<[?, 1], offset: ?>> to memref<1x4xf32>
  return
}
