// REQUIRES: valgrind
// RUN: valgrind -q --error-exitcode=99 dynqual-opt %s --dq-use-output-allocator | FileCheck %s

// checks that the pass runs without the knob and without a branch on an uninitialised value:
// the empty `inject` option comes back as a disengaged optional whose payload is never written,
// and GCC tested that payload before the engaged flag where the pass compared it to a knob, so
// memcheck stopped every compile run under it in this pass. The output allocation still appears.
// CHECK-LABEL: func.func @one_output
// CHECK: dq.alloc_output %{{.*}}[0] (%{{.*}}) : memref<?xf32>
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @one_output(%n: index) -> memref<?xf32> {
  %buf = memref.alloc(%n) : memref<?xf32>
  dq.fill outs(%buf : memref<?xf32>) value = 0.0 : f32
  return %buf : memref<?xf32>
}
