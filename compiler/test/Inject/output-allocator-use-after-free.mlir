// Knob 5, erase-alloc-before-view-analysis: the allocation is erased while the rewrite still
// reads it (its type, its sizes, its uses). Without a sanitizer the pass crashes reading the
// freed op; under AddressSanitizer it is reported as a heap-use-after-free.
// RUN: dynqual-opt %s --dq-use-output-allocator | FileCheck %s
// RUN: not --crash dynqual-opt %s --dq-use-output-allocator=inject=erase-alloc-before-view-analysis
// CHECK: dq.alloc_output %{{.*}}[0] (%{{.*}}, %{{.*}}) : memref<?x?xf32>
func.func @output(%x: memref<?x?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = memref.dim %x, %c0 : memref<?x?xf32>
  %d1 = memref.dim %x, %c1 : memref<?x?xf32>
  %y = memref.alloc(%d0, %d1) : memref<?x?xf32>
  dq.elementwise "add" ins(%x, %x : memref<?x?xf32>, memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return %y : memref<?x?xf32>
}
