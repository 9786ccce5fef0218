// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file --verify-diagnostics | FileCheck %s

// checks that a same-type dynamic reshape whose shape is Shape(x) itself is removed (every
// dim is the same SSA value).
// CHECK-LABEL: func.func @reshape_same_dims_removed
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: dq.readback_scalar
// CHECK: return %[[X]]
func.func @reshape_same_dims_removed(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %s = "onnx.Shape"(%x) : (tensor<?x?xf32>) -> tensor<2xi64>
  %r = "onnx.Reshape"(%x, %s) {allowzero = 0 : i64} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// checks that 0 entries copy the input dims, which proves the reshape [0, 0] is a no-op.
// CHECK-LABEL: func.func @reshape_zero_entries_removed
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK: return %[[X]]
func.func @reshape_zero_entries_removed(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %s = "onnx.Constant"() {value = dense<[0, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %r = "onnx.Reshape"(%x, %s) {allowzero = 0 : i64} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// checks that a same-type dynamic reshape with reordered dims [d1, d0] is kept: the type is the
// same but the runtime dims change (allowzero = 1: entries are taken as they are).
// CHECK-LABEL: func.func @reshape_reordered_dims_kept
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[D0:.*]] = tensor.dim %{{.*}}, %[[C0]]
// CHECK-DAG: %[[D1:.*]] = tensor.dim %{{.*}}, %[[C1]]
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<?x?xf32> into tensor<?xf32>
// CHECK: %[[OUT:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [%[[D1]], %[[D0]]] : tensor<?xf32> into tensor<?x?xf32>
// CHECK: return %[[OUT]]
func.func @reshape_reordered_dims_kept(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %s = "onnx.Shape"(%x) : (tensor<?x?xf32>) -> tensor<2xi64>
  %i = "onnx.Constant"() {value = dense<[1, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %t = "onnx.Gather"(%s, %i) {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %r = "onnx.Reshape"(%x, %t) {allowzero = 1 : i64} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// checks that a same-type reshape whose shape comes from device data is kept (dims unknown)
// and reads the shape back, one dq.readback_scalar per element.
// CHECK-LABEL: func.func @reshape_unknown_dims_kept
// CHECK-COUNT-2: dq.readback_scalar %{{.*}} : tensor<2xi64>
// CHECK-NOT: dq.readback_scalar
// CHECK: tensor.collapse_shape
// CHECK: tensor.expand_shape
func.func @reshape_unknown_dims_kept(%x: tensor<?x?xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %r = "onnx.Reshape"(%x, %s) {allowzero = 1 : i64} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// checks that splitting one dynamic dim [n*4] into [n, 4] (shape = Concat(Div(Shape[0], 4), 4))
// takes each extent from the shape operand: n is the host quotient, not the source dim
// (allowzero = 1: entries are taken as they are).
// CHECK-LABEL: func.func @reshape_split_dynamic_dim
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[D:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?xf32>
// CHECK: %[[N:.*]] = arith.divsi %[[D]], %[[C4]] : index
// CHECK-NOT: dq.readback_scalar
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [%[[N]], 4] : tensor<?xf32> into tensor<?x4xf32>
func.func @reshape_split_dynamic_dim(%x: tensor<?xf32>) -> tensor<?x4xf32> {
  %s = "onnx.Shape"(%x) : (tensor<?xf32>) -> tensor<1xi64>
  %four = "onnx.Constant"() {value = dense<4> : tensor<1xi64>} : () -> tensor<1xi64>
  %n = "onnx.Div"(%s, %four) : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %shape = "onnx.Concat"(%n, %four) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = "onnx.Reshape"(%x, %shape) {allowzero = 1 : i64} : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// checks that with allowzero = 0 a runtime entry that may be 0 copies the input dim at run time:
// extent = select(n == 0, d, n), still computed from the shape operand.
// CHECK-LABEL: func.func @reshape_split_allowzero_0
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[D:.*]] = tensor.dim
// CHECK: %[[N:.*]] = arith.divsi %[[D]], %[[C4]] : index
// CHECK: %[[Z:.*]] = arith.cmpi eq, %[[N]], %[[C0]] : index
// CHECK: %[[E:.*]] = arith.select %[[Z]], %[[D]], %[[N]] : index
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [%[[E]], 4]
func.func @reshape_split_allowzero_0(%x: tensor<?xf32>) -> tensor<?x4xf32> {
  %s = "onnx.Shape"(%x) : (tensor<?xf32>) -> tensor<1xi64>
  %four = "onnx.Constant"() {value = dense<4> : tensor<1xi64>} : () -> tensor<1xi64>
  %n = "onnx.Div"(%s, %four) : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %shape = "onnx.Concat"(%n, %four) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = "onnx.Reshape"(%x, %shape) {allowzero = 0 : i64} : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// checks that a -1 entry is inferred from the element count: [?, 6] -> [-1, 3] gives
// d0 * 6 / 3 (hand calculation: the other entries multiply to 3).
// CHECK-LABEL: func.func @reshape_minus_one
// CHECK: %[[C6:.*]] = arith.constant 6 : index
// CHECK: %[[NUMEL:.*]] = arith.muli %{{.*}}, %[[C6]] : index
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[INF:.*]] = arith.divsi %[[NUMEL]], %[[C3]] : index
// CHECK: tensor.expand_shape %{{.*}} output_shape [%[[INF]], 3] : tensor<?xf32> into tensor<?x3xf32>
func.func @reshape_minus_one(%x: tensor<?x6xf32>) -> tensor<?x3xf32> {
  %s = "onnx.Constant"() {value = dense<[-1, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %r = "onnx.Reshape"(%x, %s) {allowzero = 0 : i64} : (tensor<?x6xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// -----

// checks that a reshape to rank 0 collapses a static all-ones shape.
// CHECK-LABEL: func.func @reshape_to_scalar
// CHECK: tensor.cast %{{.*}} : tensor<?xf32> to tensor<1xf32>
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
func.func @reshape_to_scalar(%x: tensor<?xf32>) -> tensor<f32> {
  %s = "onnx.Constant"() {value = dense<> : tensor<0xi64>} : () -> tensor<0xi64>
  %r = "onnx.Reshape"(%x, %s) : (tensor<?xf32>, tensor<0xi64>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// checks that a rank-0 input reshaped to [1, 1] gets an expand_shape with one static output extent
// per result dim: without them the tensor.expand_shape verifier rejected the op ("expected number
// of static shape dims to be equal to the output rank (2) but found 0").
// CHECK-LABEL: func.func @reshape_scalar_to_ones
// CHECK-SAME: (%[[X:.*]]: tensor<f32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[X]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK: return %[[E]]
func.func @reshape_scalar_to_ones(%x: tensor<f32>) -> tensor<1x1xf32> {
  %s = "onnx.Constant"() {value = dense<[1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %r = "onnx.Reshape"(%x, %s) {allowzero = 0 : i64} : (tensor<f32>, tensor<2xi64>) -> tensor<1x1xf32>
  return %r : tensor<1x1xf32>
}
