// RUN: dynqual-opt %s --split-input-file --dq-use-output-allocator --emit-dqp=- --emit-format=text -o /dev/null | FileCheck %s
// RUN: dynqual-opt %s --split-input-file --dq-use-output-allocator --emit-dqp=- --emit-format=text -o /dev/null | FileCheck %s --check-prefix=NOALLOC
// Every allocation here is a graph output: no plain Alloc is emitted.
// NOALLOC-NOT: : Alloc s

// checks that the reviewer's case requests [4, 4] at rank 2 for its output, takes both sizes of
// the expand_shape group from its output_shape operands (the input's dims %a and %b), and checks
// the ABI cast to 4x4 at run time.
// CHECK-LABEL: source static_result
// CHECK: input 0 "x" f32 [-1,-1]
// CHECK: output 0 "y" f32 [4,4]
// CHECK: Input b[0] imm[0]
// CHECK: Dim s[[[A:[0-9]+]]] b[0] imm[0]
// CHECK: Dim s[[[B:[0-9]+]]] b[0] imm[1]
// CHECK: ConstIndex s[[[C4:[0-9]+]]] imm[4]
// CHECK: AllocOutput s[[[C4]],[[C4]]] b[[[OUT:[0-9]+]]] imm[0,4,4] f32 device
// CHECK: View s[{{[0-9]+}},[[A]],[[B]],{{[0-9]+}},{{[0-9]+}}] b[[[E:[0-9]+]],{{[0-9]+}}] imm[2]
// CHECK: Kernel "add" b[0,0,[[E]]] imm[2] f32 device
// CHECK: CheckShape "memref.cast to 2-d static dims{{.*}}" b[[[E]]] imm[4,4]
// CHECK: Return b[[[E]]]
func.func @static_result(%x: memref<?x?xf32> {dq.name = "x"}) -> (memref<4x4xf32> {dq.name = "y"}) {
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

// -----

// checks that returning the dynamic 2-D type requests [%a, %b]; the 16-element buffer, now a
// view of the a*b output, is checked at run time instead of the (absent) 4x4 cast.
// CHECK-LABEL: source dynamic_result
// CHECK: Dim s[[[A:[0-9]+]]] b[0] imm[0]
// CHECK: Dim s[[[B:[0-9]+]]] b[0] imm[1]
// CHECK: AllocOutput s[[[A]],[[B]]] b[{{[0-9]+}}] imm[0,-1,-1] f32 device
// CHECK-NOT: imm[4,4]
// CHECK: CheckShape "{{.*}}" b[{{[0-9]+}}] imm[16]
// CHECK-NOT: CheckShape
// CHECK: Return
func.func @dynamic_result(%x: memref<?x?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.dim %x, %c0 : memref<?x?xf32>
  %b = memref.dim %x, %c1 : memref<?x?xf32>
  %buf = memref.alloc() : memref<16xf32>
  %c = memref.cast %buf : memref<16xf32> to memref<?xf32>
  %e = memref.expand_shape %c [[0, 1]] output_shape [%a, %b] : memref<?xf32> into memref<?x?xf32>
  dq.elementwise "add" ins(%x, %x : memref<?x?xf32>, memref<?x?xf32>) outs(%e : memref<?x?xf32>)
  return %e : memref<?x?xf32>
}

// -----

// checks constants (sidecar), pool regions, host scratch stores, device copies, readback,
// kernel attributes and index arithmetic.
// CHECK-LABEL: source mixed
// CHECK: Constant s[{{[0-9]+}},{{[0-9]+}}] b[[[K:[0-9]+]]] imm[0]
// CHECK: GetPool s[{{[0-9]+}}] b[[[POOL:[0-9]+]]]
// CHECK: PoolSubview s[{{[0-9,]+}}] b[[[T:[0-9]+]],[[POOL]]] i64 device
// CHECK: GetHostScratch s[{{[0-9]+}}] b[[[H:[0-9]+]]] i64 host
// CHECK: StoreScalar s[{{[0-9]+}},{{[0-9]+}}] b[[[H]]]
// CHECK: Copy b[[[T]],[[H]]] imm[0]
// CHECK: ReadbackScalar s[[[R:[0-9]+]],{{[0-9]+}}] b[[[T]]]
// CHECK: ScalarBinary "add" s[[[SUM:[0-9]+]],[[R]],{{[0-9]+}}]
// CHECK: ScalarBinary "lt" s[{{[0-9]+}},[[SUM]],{{[0-9]+}}]
// CHECK: Kernel "fill" b[{{[0-9]+}}] imm[0,7] i64 device
// CHECK: Kernel "transpose" b[[[K]],{{[0-9]+}}] imm[1,1,0] i64 device
// CHECK: constant 0 i64 [2,1] offset=0 size=16
// CHECK: sidecar bytes=16
func.func @mixed(%n: memref<1xi64>) -> (memref<1x2xi64>, memref<2xi64>) {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %k = memref.get_global @k : memref<2x1xi64>
  %ctx = dq.get_context : !dq.context
  %pool = dq.get_pool %ctx(%c5) : memref<?xi8>
  %t = memref.view %pool[%c0][] : memref<?xi8> to memref<1xi64>
  %h = dq.get_host_scratch %ctx() : memref<1xi64>
  %v = arith.constant 3 : i64
  memref.store %v, %h[%c0] : memref<1xi64>
  dq.copy "memcpy" ins(%h : memref<1xi64>) outs(%t : memref<1xi64>)
  %r = dq.readback_scalar %t[%c0] : memref<1xi64>
  %sum = arith.addi %r, %c5 : index
  %lt = arith.cmpi slt, %sum, %c5 : index
  %f = memref.alloc() : memref<2xi64>
  dq.fill outs(%f : memref<2xi64>) value = 7 : i64
  %o = memref.alloc() : memref<1x2xi64>
  dq.transpose ins(%k : memref<2x1xi64>) outs(%o : memref<1x2xi64>) permutation = [1, 0]
  return %o, %f : memref<1x2xi64>, memref<2xi64>
}
memref.global "private" constant @k : memref<2x1xi64> = dense<[[1], [2]]>


// -----

// checks that a slice kernel counts only its buffer inputs (imm[0] = 1) and passes its starts
// then steps as scalar registers.
// CHECK-LABEL: source slice
// CHECK: ConstIndex s[[[C1:[0-9]+]]] imm[1]
// CHECK: ConstIndex s[[[C2:[0-9]+]]] imm[2]
// CHECK: Kernel "slice" s[[[C1]],[[C2]]] b[0,{{[0-9]+}}] imm[1] f32 device
func.func @slice(%x: memref<8xf32>) -> memref<3xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %o = memref.alloc() : memref<3xf32>
  dq.slice ins(%x : memref<8xf32>) outs(%o : memref<3xf32>) starts(%c1) steps(%c2)
  return %o : memref<3xf32>
}
