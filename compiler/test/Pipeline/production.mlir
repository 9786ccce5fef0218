// RUN: dynqual-opt %s --dq-production | FileCheck %s
// RUN: dynqual-opt %s --pass-pipeline='builtin.module(dq-convert-onnx, canonicalize, cse, one-shot-bufferize{bufferize-function-boundaries=true function-boundary-type-conversion=identity-layout-map}, func.func(dq-use-output-allocator, dq-lower-copies, dq-materialize-host-scalars, dq-optimize-memrefs, dq-promote-strided-operands, dq-pool-allocs))' | FileCheck %s --check-prefix=REORDERED

// checks that the production pipeline takes converter-form tensor IR to final memref + dq IR:
// the output through dq.alloc_output, transients in the pool, the host-written shape vector in
// host scratch copied to device by a dq.copy, no tensor left.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: memref<?x4xf32> {dq.name = "x"}) -> (memref<?x4xf32> {dq.name = "y"})
// CHECK-NOT: tensor
// CHECK-NOT: memref.alloc
// CHECK: %[[N:.*]] = memref.dim %[[X]]
// CHECK: %[[OUT:.*]] = dq.alloc_output %{{.*}}[0] (%[[N]]) : memref<?x4xf32>
// CHECK: %[[POOL:.*]] = dq.get_pool
// CHECK: dq.elementwise "add" ins(%[[X]], %{{.*}} : memref<?x4xf32>, memref<4xf32>)
// CHECK: %[[H:.*]] = dq.get_host_scratch
// CHECK: memref.store %[[N]], %[[H]]
// CHECK: dq.copy "memcpy" ins(%[[H]] : memref<2xindex>)
// CHECK: dq.readback_scalar
// CHECK-NOT: memref.copy
// CHECK: return %[[OUT]]

// checks that lowering copies before materializing host scalars leaves the staging copy that
// materialization inserts as an unlowered memref.copy (reordering changes the IR).
// REORDERED-LABEL: func.func @main
// REORDERED: dq.get_host_scratch
// REORDERED: memref.copy
// REORDERED-NOT: dq.copy
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
