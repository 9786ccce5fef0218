// RUN: dynqual-opt %s --emit-dqp=- --emit-format=text -o /dev/null | FileCheck %s

// The emitter side of readback-without-sync and singleton-copy-host-path: an unsynchronized
// readback is ReadbackScalar with imm[1] (the VM stages it through host-mapped memory and reads
// it without a sync); a synchronized one has no immediate; a "host" copy is a HostCopy.
// CHECK-LABEL: source main
// CHECK: ReadbackScalar s[[[A:[0-9]+]],{{[0-9]+}}] b[{{[0-9]+}}] @
// CHECK: ReadbackScalar s[[[B:[0-9]+]],{{[0-9]+}}] b[{{[0-9]+}}] imm[1]
// CHECK: HostCopy b[{{[0-9]+}},{{[0-9]+}}]
func.func @main(%n: memref<2xi64>, %x: memref<1x4xf32>) -> memref<1x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = dq.readback_scalar %n[%c0] : memref<2xi64>
  %b = dq.readback_scalar %n[%c1] {unsynchronized} : memref<2xi64>
  %ctx = dq.get_context : !dq.context
  %o = dq.alloc_output %ctx[0] () : memref<1x4xf32>
  dq.copy "host" ins(%x : memref<1x4xf32>) outs(%o : memref<1x4xf32>)
  return %o : memref<1x4xf32>
}
