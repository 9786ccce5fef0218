// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics | FileCheck %s

// checks that Range on float inputs known only at run time counts on the device with
// "range_length" into a 0-d i64, reads the count back once and sizes dq.range with it.
// CHECK-LABEL: func.func @range_float
// CHECK: %[[E:.*]] = tensor.empty() : tensor<i64>
// CHECK: %[[N:.*]] = dq.kernel "range_length" ins(%arg0, %arg1, %arg2 : tensor<f32>, tensor<f32>, tensor<f32>) outs(%[[E]] : tensor<i64>)
// CHECK: %[[LEN:.*]] = dq.readback_scalar %[[N]][] : tensor<i64>
// CHECK: %[[OUT:.*]] = tensor.empty(%[[LEN]]) : tensor<?xf32>
// CHECK: dq.range ins(%arg0, %arg2 : tensor<f32>, tensor<f32>) outs(%[[OUT]] : tensor<?xf32>)
func.func @range_float(%s: tensor<f32>, %l: tensor<f32>, %d: tensor<f32>) -> tensor<?xf32> {
  %0 = "onnx.Range"(%s, %l, %d) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
