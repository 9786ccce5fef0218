// RUN: dynqual-opt %s --split-input-file --dq-use-output-allocator --emit-dqp=- --emit-format=text -o /dev/null | FileCheck %s

// checks that dq.kernel "trilu" writes its input count, then its own imm (upper = 0) as imm[1],
// and its scalar k (-1) as a scalar register.
// CHECK-LABEL: source trilu
// CHECK: ConstIndex s[[[K:[0-9]+]]] imm[-1]
// CHECK: AllocOutput s[{{[0-9]+}},{{[0-9]+}}] b[[[OUT:[0-9]+]]]
// CHECK: Kernel "trilu" s[[[K]]] b[0,[[OUT]]] imm[1,0] f32 device
func.func @trilu(%x: memref<?x?xf32> {dq.name = "x"}) -> (memref<?x?xf32> {dq.name = "y"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = arith.constant -1 : index
  %a = memref.dim %x, %c0 : memref<?x?xf32>
  %b = memref.dim %x, %c1 : memref<?x?xf32>
  %o = memref.alloc(%a, %b) : memref<?x?xf32>
  dq.kernel "trilu" ins(%x : memref<?x?xf32>) outs(%o : memref<?x?xf32>) scalars(%k) {imm = array<i64: 0>}
  return %o : memref<?x?xf32>
}

// -----

// checks that "layer_norm" with two inputs writes imm[2, axis] and epsilon as fimm[0].
// CHECK-LABEL: source layer_norm
// CHECK: Kernel "layer_norm" b[0,1,2] imm[2,-1] fimm[1e-05] f32 device
func.func @layer_norm(%x: memref<2x8xf32> {dq.name = "x"}, %s: memref<8xf32> {dq.name = "s"}) -> (memref<2x8xf32> {dq.name = "y"}) {
  %o = memref.alloc() : memref<2x8xf32>
  dq.kernel "layer_norm" ins(%x, %s : memref<2x8xf32>, memref<8xf32>) outs(%o : memref<2x8xf32>) {imm = array<i64: -1>, fimm = array<f64: 1.0e-05>}
  return %o : memref<2x8xf32>
}

// -----

// checks that a fused_elementwise kernel made by dq-fuse-elementwise names every node it computes
// (the consumer first), so that a run-time error inside it points at each candidate node.
// CHECK-LABEL: source fused_locations
// CHECK: Kernel "fused_elementwise" b[0,1,2,{{[0-9]+}}] imm[3,0,0,1,2,2,3] f32 device @Mul_1 (fused with Add_0)
func.func @fused_locations(%x: memref<3xf32> {dq.name = "x"}, %y: memref<3xf32> {dq.name = "y"}, %w: memref<3xf32> {dq.name = "w"}) -> (memref<3xf32> {dq.name = "z"}) {
  %o = memref.alloc() : memref<3xf32>
  dq.kernel "fused_elementwise" ins(%x, %y, %w : memref<3xf32>, memref<3xf32>, memref<3xf32>) outs(%o : memref<3xf32>) {imm = array<i64: 0, 0, 1, 2, 2, 3>} loc(fused<"fused_elementwise">["Mul_1", "Add_0"])
  return %o : memref<3xf32>
}
