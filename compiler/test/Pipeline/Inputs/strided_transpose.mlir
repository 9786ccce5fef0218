// A transpose of a column window of x (a strided view with offset 1): promote-strided-operands
// must copy it into a contiguous temporary first.
func.func @main(%x: memref<3x4xf32> {dq.name = "x"}) -> (memref<2x3xf32> {dq.name = "y"}) {
  %v = memref.subview %x[0, 1] [3, 2] [1, 1] : memref<3x4xf32> to memref<3x2xf32, strided<[4, 1], offset: 1>>
  %y = memref.alloc() : memref<2x3xf32>
  dq.transpose ins(%v : memref<3x2xf32, strided<[4, 1], offset: 1>>) outs(%y : memref<2x3xf32>) permutation = [1, 0]
  return %y : memref<2x3xf32>
}
