// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics

// checks that an op outside the supported list fails with one line naming the op and the node.
func.func @unsupported_op(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @below {{unsupported: ONNX op 'LpNormalization' in node '/LpNorm'}}
  %0 = "onnx.LpNormalization"(%x) {axis = -1 : i64, onnx.name = "/LpNorm"} : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// checks that a Cast to a dtype outside the list (string) is refused.
func.func @unsupported_cast(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @below {{unsupported: Cast to ONNX dtype 8}}
  %0 = "onnx.Cast"(%x) {to = 8 : i64} : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// checks that Squeeze without axes on a dynamic dim is refused (which dims are 1 is unknown).
func.func @squeeze_no_axes_dynamic(%x: tensor<?x1xf32>) -> tensor<?xf32> {
  // expected-error @below {{unsupported: Squeeze without axes on a tensor with a dynamic dim}}
  %0 = "onnx.Squeeze"(%x) : (tensor<?x1xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// checks that a Reshape shape of dynamic length is refused (the output rank would be unknown).
func.func @reshape_dynamic_rank(%x: tensor<?xf32>, %s: tensor<?xi64>) -> tensor<*xf32> {
  // expected-error @below {{unsupported: shape of Reshape must have a static length}}
  %0 = "onnx.Reshape"(%x, %s) : (tensor<?xf32>, tensor<?xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// checks that an op from another domain is refused.
func.func @other_domain(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @below {{unsupported: op 'com.microsoft.Gelu' in node 'g'}}
  %0 = "onnx.Gelu"(%x) {onnx.domain = "com.microsoft", onnx.name = "g"} : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// checks that a static Slice step of 0 is an error.
func.func @slice_zero_step(%x: tensor<4xf32>) -> tensor<?xf32> {
  %z = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = "onnx.Constant"() {value = dense<4> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @below {{Slice: step must not be 0}}
  %0 = "onnx.Slice"(%x, %z, %e, %z, %z) : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
