// RUN: dynqual-opt %s --split-input-file --verify-diagnostics

// checks that the dq.kernel verifier checks a fused_elementwise step program: a step may read
// only leaves and earlier steps.
func.func @forward_reference(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{fused_elementwise step 0: operand b = 1 is not a leaf or an earlier step (1 leaves, step 0)}}
  %y = dq.kernel "fused_elementwise" ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {imm = array<i64: 0, 0, 1>} -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// checks that an unknown op code is refused.
func.func @unknown_code(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{fused_elementwise step 0: unknown op code 23}}
  %y = dq.kernel "fused_elementwise" ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {imm = array<i64: 23, 0, -1>} -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// checks that leaves and the init share one float element type.
func.func @mixed(%x: tensor<4xf16>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{fused_elementwise mixes element types}}
  %y = dq.kernel "fused_elementwise" ins(%x : tensor<4xf16>) outs(%e : tensor<4xf32>) {imm = array<i64: 7, 0, -1>} -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// checks that integers are refused.
func.func @integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  %e = tensor.empty() : tensor<4xi32>
  // expected-error @+1 {{fused_elementwise needs a float element type, has 'i32'}}
  %y = dq.kernel "fused_elementwise" ins(%x : tensor<4xi32>) outs(%e : tensor<4xi32>) {imm = array<i64: 7, 0, -1>} -> tensor<4xi32>
  return %y : tensor<4xi32>
}
