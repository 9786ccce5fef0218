func.func @main(%x: tensor<?x4xf32> {dq.name = "x"}) -> (tensor<?x4xf32> {dq.name = "y"}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %cst = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %a = dq.elementwise "add" ins(%x, %cst : tensor<?x4xf32>, tensor<4xf32>) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  %e2 = tensor.empty(%n) : tensor<?x4xf32>
  %m = dq.elementwise "mul" ins(%a, %a : tensor<?x4xf32>, tensor<?x4xf32>) outs(%e2 : tensor<?x4xf32>) -> tensor<?x4xf32>
  %e3 = tensor.empty(%n) : tensor<4x?xf32>
  %t = dq.transpose ins(%m : tensor<?x4xf32>) outs(%e3 : tensor<4x?xf32>) permutation = [1, 0] -> tensor<4x?xf32>
  %e4 = tensor.empty(%n) : tensor<?x4xf32>
  %t2 = dq.transpose ins(%t : tensor<4x?xf32>) outs(%e4 : tensor<?x4xf32>) permutation = [1, 0] -> tensor<?x4xf32>
  %s = tensor.from_elements %n, %n : tensor<2xindex>
  %r = dq.readback_scalar %s[%c0] : tensor<2xindex>
  return %t2 : tensor<?x4xf32>
}
