// Knob 7, promote-before-reuse, is an order knob of dq-production (production-knob-spec.mlir
// checks the order); here the two orders run on one function.
// RUN: dynqual-opt %s --pass-pipeline='builtin.module(func.func(dq-materialize-host-scalars, dq-optimize-memrefs, dq-promote-strided-operands))' | FileCheck %s --check-prefix=IR
// RUN: dynqual-opt %s --pass-pipeline='builtin.module(func.func(dq-materialize-host-scalars, dq-promote-strided-operands, dq-optimize-memrefs))' | FileCheck %s --check-prefix=IR7

// Knob 7, as IR - promoted first, the contiguous temporary takes over the dead buffer %d; in
// production order it stays a buffer of its own. The values are the same (liveness covers the
// temporary), see docs/fuzz/knobs.md.
// IR-LABEL: func.func @main
// IR: %[[D:.*]] = memref.alloc() : memref<3x2xf32>
// IR: %[[TMP:.*]] = memref.alloc() : memref<3x2xf32>
// IR: memref.copy %{{.*}}, %[[TMP]]
// IR7-LABEL: func.func @main
// IR7: %[[D:.*]] = memref.alloc() : memref<3x2xf32>
// IR7-NOT: memref.alloc() : memref<3x2xf32>
// IR7: memref.copy %{{.*}}, %[[D]]
func.func @main(%x: memref<3x4xf32>) -> memref<2x3xf32> {
  %d = memref.alloc() : memref<3x2xf32>
  dq.fill outs(%d : memref<3x2xf32>) value = 1.0 : f32
  %y0 = memref.alloc() : memref<2x3xf32>
  dq.transpose ins(%d : memref<3x2xf32>) outs(%y0 : memref<2x3xf32>) permutation = [1, 0]
  %v = memref.subview %x[0, 1] [3, 2] [1, 1] : memref<3x4xf32> to memref<3x2xf32, strided<[4, 1], offset: 1>>
  %y = memref.alloc() : memref<2x3xf32>
  dq.transpose ins(%v : memref<3x2xf32, strided<[4, 1], offset: 1>>) outs(%y : memref<2x3xf32>) permutation = [1, 0]
  dq.elementwise "add" ins(%y, %y0 : memref<2x3xf32>, memref<2x3xf32>) outs(%y : memref<2x3xf32>)
  return %y : memref<2x3xf32>
}
