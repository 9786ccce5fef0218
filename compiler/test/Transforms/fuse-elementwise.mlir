// RUN: dynqual-opt %s --split-input-file --dq-fuse-elementwise | FileCheck %s

// checks that RMSNorm's tail after its reduce_mean (add eps, sqrt, div, mul weight) becomes one
// kernel: leaves mean, eps, x, weight (0..3); steps 4..7 = add(0, 1), sqrt(4), div(2, 5),
// mul(6, 3) with codes add 0, sqrt 8, div 3, mul 2; the output is the last init; the reduction
// and its square before it stay as they are; the dead inits are gone.
// CHECK-LABEL: func.func @rms_norm_tail
// CHECK: %[[SQ:.*]] = dq.elementwise "mul" ins(%arg0, %arg0
// CHECK: %[[MEAN:.*]] = dq.kernel "reduce_mean" ins(%[[SQ]]
// CHECK: %[[INIT:.*]] = tensor.empty(%{{.*}}) : tensor<?x8xf16>
// CHECK-NOT: dq.elementwise
// CHECK-NOT: tensor.empty
// CHECK: %[[Y:.*]] = dq.kernel "fused_elementwise" ins(%[[MEAN]], %arg1, %arg0, %arg2 : tensor<?x1xf16>, tensor<f16>, tensor<?x8xf16>, tensor<8xf16>) outs(%[[INIT]] : tensor<?x8xf16>) {imm = array<i64: 0, 0, 1, 8, 4, -1, 3, 2, 5, 2, 6, 3>} -> tensor<?x8xf16>
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm_tail(%x: tensor<?x8xf16>, %eps: tensor<f16>, %w: tensor<8xf16>) -> tensor<?x8xf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf16>
  %e = tensor.empty(%n) : tensor<?x8xf16>
  %sq = dq.elementwise "mul" ins(%x, %x : tensor<?x8xf16>, tensor<?x8xf16>) outs(%e : tensor<?x8xf16>) -> tensor<?x8xf16>
  %e0 = tensor.empty(%n) : tensor<?x1xf16>
  %mean = dq.kernel "reduce_mean" ins(%sq : tensor<?x8xf16>) outs(%e0 : tensor<?x1xf16>) {imm = array<i64: 1>} -> tensor<?x1xf16>
  %e1 = tensor.empty(%n) : tensor<?x1xf16>
  %a = dq.elementwise "add" ins(%mean, %eps : tensor<?x1xf16>, tensor<f16>) outs(%e1 : tensor<?x1xf16>) -> tensor<?x1xf16>
  %e2 = tensor.empty(%n) : tensor<?x1xf16>
  %s = dq.elementwise "sqrt" ins(%a : tensor<?x1xf16>) outs(%e2 : tensor<?x1xf16>) -> tensor<?x1xf16>
  %e3 = tensor.empty(%n) : tensor<?x8xf16>
  %d = dq.elementwise "div" ins(%x, %s : tensor<?x8xf16>, tensor<?x1xf16>) outs(%e3 : tensor<?x8xf16>) -> tensor<?x8xf16>
  %e4 = tensor.empty(%n) : tensor<?x8xf16>
  %m = dq.elementwise "mul" ins(%d, %w : tensor<?x8xf16>, tensor<8xf16>) outs(%e4 : tensor<?x8xf16>) -> tensor<?x8xf16>
  return %m : tensor<?x8xf16>
}

// -----

// checks that SiLU times up (gate * sigmoid(gate) * up) becomes one kernel with gate a leaf
// used twice: leaves gate, up; steps sigmoid(0) (code 10), mul(0, 2), mul(3, 1).
// CHECK-LABEL: func.func @silu
// CHECK-NOT: dq.elementwise
// CHECK: dq.kernel "fused_elementwise" ins(%arg0, %arg1 : tensor<1x16xf32>, tensor<1x16xf32>) outs(%{{.*}} : tensor<1x16xf32>) {imm = array<i64: 10, 0, -1, 2, 0, 2, 2, 3, 1>}
// CHECK-NOT: dq.elementwise
func.func @silu(%gate: tensor<1x16xf32>, %up: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %e0 = tensor.empty() : tensor<1x16xf32>
  %sig = dq.elementwise "sigmoid" ins(%gate : tensor<1x16xf32>) outs(%e0 : tensor<1x16xf32>) -> tensor<1x16xf32>
  %e1 = tensor.empty() : tensor<1x16xf32>
  %silu = dq.elementwise "mul" ins(%gate, %sig : tensor<1x16xf32>, tensor<1x16xf32>) outs(%e1 : tensor<1x16xf32>) -> tensor<1x16xf32>
  %e2 = tensor.empty() : tensor<1x16xf32>
  %act = dq.elementwise "mul" ins(%silu, %up : tensor<1x16xf32>, tensor<1x16xf32>) outs(%e2 : tensor<1x16xf32>) -> tensor<1x16xf32>
  return %act : tensor<1x16xf32>
}

// -----

// checks that a producer with two uses stays a kernel of its own (its value is needed twice):
// the exp is kept and each consumer fuses nothing into itself from it.
// CHECK-LABEL: func.func @two_uses
// CHECK: %[[E:.*]] = dq.elementwise "exp" ins(%arg0
// CHECK: dq.elementwise "neg" ins(%[[E]]
// CHECK: dq.elementwise "sqrt" ins(%[[E]]
// CHECK-NOT: fused_elementwise
func.func @two_uses(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e0 = tensor.empty() : tensor<4xf32>
  %e = dq.elementwise "exp" ins(%x : tensor<4xf32>) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %n = dq.elementwise "neg" ins(%e : tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %s = dq.elementwise "sqrt" ins(%e : tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  return %n, %s : tensor<4xf32>, tensor<4xf32>
}

// -----

// checks that mixed element types do not fuse: a cast between f16 and f32 ends a chain, the f32
// chain after it fuses on its own (the cast's result is its leaf), and a bool where or a
// comparison is never a step.
// CHECK-LABEL: func.func @mixed_types
// CHECK: %[[H:.*]] = dq.elementwise "exp" ins(%arg0 : tensor<4xf16>)
// CHECK: %[[C:.*]] = dq.elementwise "cast" ins(%[[H]]
// CHECK: %[[F:.*]] = dq.kernel "fused_elementwise" ins(%[[C]], %arg1 : tensor<4xf32>, tensor<4xf32>) {{.*}} {imm = array<i64: 0, 0, 1, 8, 2, -1>}
// CHECK: %[[L:.*]] = dq.elementwise "less" ins(%[[F]], %arg1
// CHECK: %[[W:.*]] = dq.elementwise "where" ins(%[[L]], %[[F]], %arg1
// CHECK: dq.elementwise "neg" ins(%[[W]]
func.func @mixed_types(%h: tensor<4xf16>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %e0 = tensor.empty() : tensor<4xf16>
  %ex = dq.elementwise "exp" ins(%h : tensor<4xf16>) outs(%e0 : tensor<4xf16>) -> tensor<4xf16>
  %e1 = tensor.empty() : tensor<4xf32>
  %c = dq.elementwise "cast" ins(%ex : tensor<4xf16>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %a = dq.elementwise "add" ins(%c, %y : tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %e3 = tensor.empty() : tensor<4xf32>
  %s = dq.elementwise "sqrt" ins(%a : tensor<4xf32>) outs(%e3 : tensor<4xf32>) -> tensor<4xf32>
  %e4 = tensor.empty() : tensor<4xi1>
  %l = dq.elementwise "less" ins(%s, %y : tensor<4xf32>, tensor<4xf32>) outs(%e4 : tensor<4xi1>) -> tensor<4xi1>
  %e5 = tensor.empty() : tensor<4xf32>
  %w = dq.elementwise "where" ins(%l, %s, %y : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) outs(%e5 : tensor<4xf32>) -> tensor<4xf32>
  %e6 = tensor.empty() : tensor<4xf32>
  %n = dq.elementwise "neg" ins(%w : tensor<4xf32>) outs(%e6 : tensor<4xf32>) -> tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// checks that a reduction between two elementwise ops is a boundary: the exp before the
// reduce_sum and the sqrt after it stay separate kernels (each chain has one op).
// CHECK-LABEL: func.func @reduction_between
// CHECK: %[[E:.*]] = dq.elementwise "exp"
// CHECK: %[[R:.*]] = dq.kernel "reduce_sum" ins(%[[E]]
// CHECK: dq.elementwise "sqrt" ins(%[[R]]
// CHECK-NOT: fused_elementwise
func.func @reduction_between(%x: tensor<2x4xf32>) -> tensor<2x1xf32> {
  %e0 = tensor.empty() : tensor<2x4xf32>
  %e = dq.elementwise "exp" ins(%x : tensor<2x4xf32>) outs(%e0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e1 = tensor.empty() : tensor<2x1xf32>
  %r = dq.kernel "reduce_sum" ins(%e : tensor<2x4xf32>) outs(%e1 : tensor<2x1xf32>) {imm = array<i64: 1>} -> tensor<2x1xf32>
  %e2 = tensor.empty() : tensor<2x1xf32>
  %s = dq.elementwise "sqrt" ins(%r : tensor<2x1xf32>) outs(%e2 : tensor<2x1xf32>) -> tensor<2x1xf32>
  return %s : tensor<2x1xf32>
}

// -----

// checks the step cap: a chain of 17 unary steps fuses its first 16 into one kernel, and the
// 17th, which would make 17 steps, stays a kernel of its own that reads the fused result.
// CHECK-LABEL: func.func @step_cap
// CHECK-NOT: dq.elementwise
// CHECK: %[[F:.*]] = dq.kernel "fused_elementwise" ins(%arg0 : tensor<4xf32>) {{.*}} {imm = array<i64: 7, 0, -1, 7, 1, -1, 7, 2, -1, 7, 3, -1, 7, 4, -1, 7, 5, -1, 7, 6, -1, 7, 7, -1, 7, 8, -1, 7, 9, -1, 7, 10, -1, 7, 11, -1, 7, 12, -1, 7, 13, -1, 7, 14, -1, 7, 15, -1>}
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: %[[LAST:.*]] = dq.elementwise "neg" ins(%[[F]] : tensor<4xf32>)
// CHECK-NEXT: return %[[LAST]]
func.func @step_cap(%x: tensor<4xf32>) -> tensor<4xf32> {
  %i0 = tensor.empty() : tensor<4xf32>
  %v0 = dq.elementwise "neg" ins(%x : tensor<4xf32>) outs(%i0 : tensor<4xf32>) -> tensor<4xf32>
  %i1 = tensor.empty() : tensor<4xf32>
  %v1 = dq.elementwise "neg" ins(%v0 : tensor<4xf32>) outs(%i1 : tensor<4xf32>) -> tensor<4xf32>
  %i2 = tensor.empty() : tensor<4xf32>
  %v2 = dq.elementwise "neg" ins(%v1 : tensor<4xf32>) outs(%i2 : tensor<4xf32>) -> tensor<4xf32>
  %i3 = tensor.empty() : tensor<4xf32>
  %v3 = dq.elementwise "neg" ins(%v2 : tensor<4xf32>) outs(%i3 : tensor<4xf32>) -> tensor<4xf32>
  %i4 = tensor.empty() : tensor<4xf32>
  %v4 = dq.elementwise "neg" ins(%v3 : tensor<4xf32>) outs(%i4 : tensor<4xf32>) -> tensor<4xf32>
  %i5 = tensor.empty() : tensor<4xf32>
  %v5 = dq.elementwise "neg" ins(%v4 : tensor<4xf32>) outs(%i5 : tensor<4xf32>) -> tensor<4xf32>
  %i6 = tensor.empty() : tensor<4xf32>
  %v6 = dq.elementwise "neg" ins(%v5 : tensor<4xf32>) outs(%i6 : tensor<4xf32>) -> tensor<4xf32>
  %i7 = tensor.empty() : tensor<4xf32>
  %v7 = dq.elementwise "neg" ins(%v6 : tensor<4xf32>) outs(%i7 : tensor<4xf32>) -> tensor<4xf32>
  %i8 = tensor.empty() : tensor<4xf32>
  %v8 = dq.elementwise "neg" ins(%v7 : tensor<4xf32>) outs(%i8 : tensor<4xf32>) -> tensor<4xf32>
  %i9 = tensor.empty() : tensor<4xf32>
  %v9 = dq.elementwise "neg" ins(%v8 : tensor<4xf32>) outs(%i9 : tensor<4xf32>) -> tensor<4xf32>
  %i10 = tensor.empty() : tensor<4xf32>
  %v10 = dq.elementwise "neg" ins(%v9 : tensor<4xf32>) outs(%i10 : tensor<4xf32>) -> tensor<4xf32>
  %i11 = tensor.empty() : tensor<4xf32>
  %v11 = dq.elementwise "neg" ins(%v10 : tensor<4xf32>) outs(%i11 : tensor<4xf32>) -> tensor<4xf32>
  %i12 = tensor.empty() : tensor<4xf32>
  %v12 = dq.elementwise "neg" ins(%v11 : tensor<4xf32>) outs(%i12 : tensor<4xf32>) -> tensor<4xf32>
  %i13 = tensor.empty() : tensor<4xf32>
  %v13 = dq.elementwise "neg" ins(%v12 : tensor<4xf32>) outs(%i13 : tensor<4xf32>) -> tensor<4xf32>
  %i14 = tensor.empty() : tensor<4xf32>
  %v14 = dq.elementwise "neg" ins(%v13 : tensor<4xf32>) outs(%i14 : tensor<4xf32>) -> tensor<4xf32>
  %i15 = tensor.empty() : tensor<4xf32>
  %v15 = dq.elementwise "neg" ins(%v14 : tensor<4xf32>) outs(%i15 : tensor<4xf32>) -> tensor<4xf32>
  %i16 = tensor.empty() : tensor<4xf32>
  %v16 = dq.elementwise "neg" ins(%v15 : tensor<4xf32>) outs(%i16 : tensor<4xf32>) -> tensor<4xf32>
  return %v16 : tensor<4xf32>
}

// -----

// checks the leaf cap: adds that bring a new leaf each fuse while the kernel has at most 8
// leaves (x0..x7 in 7 steps); the add of the ninth leaf stays a kernel of its own.
// CHECK-LABEL: func.func @leaf_cap
// CHECK: %[[F:.*]] = dq.kernel "fused_elementwise" ins(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7 : {{.*}}) {{.*}} {imm = array<i64: 0, 0, 1, 0, 8, 2, 0, 9, 3, 0, 10, 4, 0, 11, 5, 0, 12, 6, 0, 13, 7>}
// CHECK: %[[LAST:.*]] = dq.elementwise "add" ins(%[[F]], %arg8 :
// CHECK-NEXT: return %[[LAST]]
func.func @leaf_cap(%x0: tensor<4xf32>, %x1: tensor<4xf32>, %x2: tensor<4xf32>, %x3: tensor<4xf32>,
                    %x4: tensor<4xf32>, %x5: tensor<4xf32>, %x6: tensor<4xf32>, %x7: tensor<4xf32>,
                    %x8: tensor<4xf32>) -> tensor<4xf32> {
  %i0 = tensor.empty() : tensor<4xf32>
  %a0 = dq.elementwise "add" ins(%x0, %x1 : tensor<4xf32>, tensor<4xf32>) outs(%i0 : tensor<4xf32>) -> tensor<4xf32>
  %i1 = tensor.empty() : tensor<4xf32>
  %a1 = dq.elementwise "add" ins(%a0, %x2 : tensor<4xf32>, tensor<4xf32>) outs(%i1 : tensor<4xf32>) -> tensor<4xf32>
  %i2 = tensor.empty() : tensor<4xf32>
  %a2 = dq.elementwise "add" ins(%a1, %x3 : tensor<4xf32>, tensor<4xf32>) outs(%i2 : tensor<4xf32>) -> tensor<4xf32>
  %i3 = tensor.empty() : tensor<4xf32>
  %a3 = dq.elementwise "add" ins(%a2, %x4 : tensor<4xf32>, tensor<4xf32>) outs(%i3 : tensor<4xf32>) -> tensor<4xf32>
  %i4 = tensor.empty() : tensor<4xf32>
  %a4 = dq.elementwise "add" ins(%a3, %x5 : tensor<4xf32>, tensor<4xf32>) outs(%i4 : tensor<4xf32>) -> tensor<4xf32>
  %i5 = tensor.empty() : tensor<4xf32>
  %a5 = dq.elementwise "add" ins(%a4, %x6 : tensor<4xf32>, tensor<4xf32>) outs(%i5 : tensor<4xf32>) -> tensor<4xf32>
  %i6 = tensor.empty() : tensor<4xf32>
  %a6 = dq.elementwise "add" ins(%a5, %x7 : tensor<4xf32>, tensor<4xf32>) outs(%i6 : tensor<4xf32>) -> tensor<4xf32>
  %i7 = tensor.empty() : tensor<4xf32>
  %a7 = dq.elementwise "add" ins(%a6, %x8 : tensor<4xf32>, tensor<4xf32>) outs(%i7 : tensor<4xf32>) -> tensor<4xf32>
  return %a7 : tensor<4xf32>
}

// -----

// checks that a producer whose type does not broadcast to the consumer's init by the static
// types (a static 4 into a dynamic dim) is not merged, and that a static 1 into a dynamic dim is.
// CHECK-LABEL: func.func @broadcast_rule
// CHECK: %[[E:.*]] = dq.elementwise "exp" ins(%arg0 : tensor<4xf32>)
// CHECK: dq.elementwise "add" ins(%[[E]], %arg1 : tensor<4xf32>, tensor<?xf32>)
// CHECK: dq.kernel "fused_elementwise" ins(%arg2, %arg1 : tensor<1xf32>, tensor<?xf32>) {{.*}} {imm = array<i64: 12, 0, -1, 0, 2, 1>}
func.func @broadcast_rule(%x: tensor<4xf32>, %y: tensor<?xf32>, %z: tensor<1xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %y, %c0 : tensor<?xf32>
  %i0 = tensor.empty() : tensor<4xf32>
  %e = dq.elementwise "exp" ins(%x : tensor<4xf32>) outs(%i0 : tensor<4xf32>) -> tensor<4xf32>
  %i1 = tensor.empty(%n) : tensor<?xf32>
  %a = dq.elementwise "add" ins(%e, %y : tensor<4xf32>, tensor<?xf32>) outs(%i1 : tensor<?xf32>) -> tensor<?xf32>
  %i2 = tensor.empty() : tensor<1xf32>
  %e1 = dq.elementwise "exp" ins(%z : tensor<1xf32>) outs(%i2 : tensor<1xf32>) -> tensor<1xf32>
  %i3 = tensor.empty(%n) : tensor<?xf32>
  %a1 = dq.elementwise "add" ins(%e1, %y : tensor<1xf32>, tensor<?xf32>) outs(%i3 : tensor<?xf32>) -> tensor<?xf32>
  return %a, %a1 : tensor<?xf32>, tensor<?xf32>
}
