// Row 1 of x as a [1, 4] view whose singleton dim has a dynamic stride, copied to the output.
func.func @main(%x: memref<?x?xf32> {dq.name = "x"}) -> (memref<1x4xf32> {dq.name = "y"}) {
  %v = memref.subview %x[1, 0] [1, 4] [1, 1] : memref<?x?xf32> to memref<1x4xf32, strided<[?, 1], offset: ?>>
  %y = memref.alloc() : memref<1x4xf32>
  memref.copy %v, %y : memref<1x4xf32, strided<[?, 1], offset: ?>> to memref<1x4xf32>
  return %y : memref<1x4xf32>
}
