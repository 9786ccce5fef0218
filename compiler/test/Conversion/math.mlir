// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics | FileCheck %s

// checks that unary float ops, IsNaN (i1 result) and Not each become one dq.elementwise on the
// input's dims.
// CHECK-LABEL: func.func @unary_chain
// CHECK: dq.elementwise "sqrt" ins(%arg0 : tensor<?x4xf32>)
// CHECK: dq.elementwise "reciprocal"
// CHECK: dq.elementwise "erf"
// CHECK: dq.elementwise "isnan" {{.*}} -> tensor<?x4xi1>
// CHECK: dq.elementwise "not" {{.*}} -> tensor<?x4xi1>
func.func @unary_chain(%a: tensor<?x4xf32>) -> tensor<?x4xi1> {
  %0 = "onnx.Sqrt"(%a) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = "onnx.Reciprocal"(%0) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %2 = "onnx.Erf"(%1) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %3 = "onnx.IsNaN"(%2) : (tensor<?x4xf32>) -> tensor<?x4xi1>
  %4 = "onnx.Not"(%3) : (tensor<?x4xi1>) -> tensor<?x4xi1>
  return %4 : tensor<?x4xi1>
}

// -----

// checks that Max with three inputs chains two binary "max" ops, the second on the first's result.
// CHECK-LABEL: func.func @max3
// CHECK: %[[M:.*]] = dq.elementwise "max" ins(%arg0, %arg1 :
// CHECK: dq.elementwise "max" ins(%[[M]], %arg2 :
// CHECK-NOT: dq.elementwise
func.func @max3(%a: tensor<?xf32>, %b: tensor<1xf32>, %c: tensor<?xf32>) -> tensor<?xf32> {
  %0 = "onnx.Max"(%a, %b, %c) : (tensor<?xf32>, tensor<1xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// checks that Pow keeps the base's type with an exponent of another type.
// CHECK-LABEL: func.func @pow_mixed
// CHECK: dq.elementwise "pow" ins(%arg0, %arg1 : tensor<3xf32>, tensor<i64>) outs({{.*}} : tensor<3xf32>)
func.func @pow_mixed(%a: tensor<3xf32>, %b: tensor<i64>) -> tensor<3xf32> {
  %0 = "onnx.Pow"(%a, %b) : (tensor<3xf32>, tensor<i64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// checks that GreaterOrEqual, Not and And over shape values stay host arithmetic: no kernel.
// CHECK-LABEL: func.func @host_compare
// CHECK-NOT: dq.elementwise
// CHECK: arith.cmpi sge
// CHECK: tensor.from_elements
func.func @host_compare(%a: tensor<?x?xf32>) -> tensor<2xi1> {
  %s = "onnx.Shape"(%a) : (tensor<?x?xf32>) -> tensor<2xi64>
  %c = "onnx.Constant"() {value = dense<[0, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %g = "onnx.GreaterOrEqual"(%s, %c) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
  %n = "onnx.Not"(%g) : (tensor<2xi1>) -> tensor<2xi1>
  %o = "onnx.And"(%g, %n) : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  return %o : tensor<2xi1>
}

// -----

// checks that And rejects non-bool inputs with a plain error.
func.func @and_not_bool(%a: tensor<2xf32>) -> tensor<2xi1> {
  // expected-error @+1 {{And: inputs must be bool}}
  %0 = "onnx.And"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}
