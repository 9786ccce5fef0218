// A 16-element f32 buffer, cast to 1-D dynamic, expand_shape'd by the two runtime dims of the
// input (%a, %b), cast to the static 4x4 result type and returned. y = x + x.
func.func @main(%x: memref<?x?xf32> {dq.name = "x"}) -> (memref<4x4xf32> {dq.name = "y"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.dim %x, %c0 : memref<?x?xf32>
  %b = memref.dim %x, %c1 : memref<?x?xf32>
  %buf = memref.alloc() : memref<16xf32>
  %c = memref.cast %buf : memref<16xf32> to memref<?xf32>
  %e = memref.expand_shape %c [[0, 1]] output_shape [%a, %b] : memref<?xf32> into memref<?x?xf32>
  dq.elementwise "add" ins(%x, %x : memref<?x?xf32>, memref<?x?xf32>) outs(%e : memref<?x?xf32>)
  %s = memref.cast %e : memref<?x?xf32> to memref<4x4xf32>
  return %s : memref<4x4xf32>
}
