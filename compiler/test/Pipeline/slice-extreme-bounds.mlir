// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-production | FileCheck %s

// checks that Slice bounds of INT64_MIN / INT64_MAX on a dim d - 1 leave no host add that can
// overflow: the negative end is wrapped as end + (d - 1), which the canonicalizer reassociated
// into d + (INT64_MIN - 1), i.e. d + INT64_MAX after wrapping, and the runtime's checked add
// trapped ("scalar add(1, 9223372036854775807) overflows int64") for d = 1. Constant bounds are
// first clamped to +-2^62, which clamps the same way for any dim.
// CHECK-LABEL: func.func @main
// CHECK-NOT: 9223372036854775807
// CHECK: dq.slice
// CHECK: dq.slice
// CHECK: dq.slice
// CHECK-NOT: 9223372036854775807
// CHECK: return
func.func @main(%x: tensor<?x?xf32> {dq.name = "x"}) -> (tensor<?x?xf32> {dq.name = "y"}) {
  %one = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %zero = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %big = "onnx.Constant"() {value = dense<[9223372036854775807]> : tensor<1xi64>} : () -> tensor<1xi64>
  %small = "onnx.Constant"() {value = dense<[-9223372036854775808]> : tensor<1xi64>} : () -> tensor<1xi64>
  %ax = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %st = "onnx.Constant"() {value = dense<[-2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %shape = "onnx.Shape"(%x) : (tensor<?x?xf32>) -> tensor<2xi64>
  %n = "onnx.Gather"(%shape, %zero) {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %rest = "onnx.Sub"(%n, %one) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %sizes = "onnx.Concat"(%one, %rest) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %head, %tail = "onnx.Split"(%x, %sizes) {axis = 0 : i64} : (tensor<?x?xf32>, tensor<2xi64>) -> (tensor<1x?xf32>, tensor<?x?xf32>)
  %r = "onnx.Slice"(%tail, %big, %small, %ax, %st) : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
