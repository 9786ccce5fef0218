// One copy of each kind: y0 = x (memcpy), y1 = x[:, 0:2] (copy2d: rows of 2, pitch 4),
// y2 = x[:, ::2] (strided). x is 3x4 f32.
func.func @main(%x: memref<3x4xf32> {dq.name = "x"}) -> (memref<3x4xf32> {dq.name = "y0"}, memref<3x2xf32> {dq.name = "y1"}, memref<3x2xf32> {dq.name = "y2"}) {
  %y0 = memref.alloc() : memref<3x4xf32>
  memref.copy %x, %y0 : memref<3x4xf32> to memref<3x4xf32>
  %s1 = memref.subview %x[0, 0] [3, 2] [1, 1] : memref<3x4xf32> to memref<3x2xf32, strided<[4, 1]>>
  %y1 = memref.alloc() : memref<3x2xf32>
  memref.copy %s1, %y1 : memref<3x2xf32, strided<[4, 1]>> to memref<3x2xf32>
  %s2 = memref.subview %x[0, 0] [3, 2] [1, 2] : memref<3x4xf32> to memref<3x2xf32, strided<[4, 2]>>
  %y2 = memref.alloc() : memref<3x2xf32>
  memref.copy %s2, %y2 : memref<3x2xf32, strided<[4, 2]>> to memref<3x2xf32>
  return %y0, %y1, %y2 : memref<3x4xf32>, memref<3x2xf32>, memref<3x2xf32>
}
