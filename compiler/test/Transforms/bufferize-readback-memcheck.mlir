// REQUIRES: valgrind
// RUN: valgrind -q --error-exitcode=99 dynqual-opt %s --one-shot-bufferize="bufferize-function-boundaries=true function-boundary-type-conversion=identity-layout-map" | FileCheck %s

// checks that bufferizing dq.readback_scalar reads nothing of the op it replaces after erasing
// it: it once copied the discardable attributes from the erased op, a heap use-after-free that
// made `dynqual compile` die with SIGSEGV when the freed block had been reused (a Gather with
// 1-D indices followed by Squeeze, from the shape fuzzer). Memcheck reports every such read,
// reused block or not, and the attributes still reach the new op.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[S:.*]]: memref<3xi64> {dq.name = "shape"})
// CHECK: %[[N:.*]] = dq.readback_scalar %[[S]][%{{.*}}] {dq.probe} : memref<3xi64>
// CHECK: return %[[N]]
func.func @main(%s: tensor<3xi64> {dq.name = "shape"}) -> index {
  %c1 = arith.constant 1 : index
  %n = dq.readback_scalar %s[%c1] {dq.probe} : tensor<3xi64>
  return %n : index
}
