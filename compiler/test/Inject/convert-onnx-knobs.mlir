// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx --split-input-file | FileCheck %s --check-prefix=PROD
// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx=inject=reshape-by-type-equality --split-input-file | FileCheck %s --check-prefix=RESHAPE
// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx=inject=slice-upper-bound --split-input-file | FileCheck %s --check-prefix=SLICE
// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx=inject=split-dim-size-alias --split-input-file | FileCheck %s --check-prefix=SPLIT
// RUN: dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx=inject=readback-without-sync --split-input-file | FileCheck %s --check-prefix=SYNC

// Knob 1, reshape-by-type-equality: [d0, d1] -> [d1, d0] has equal types (?x?) but other dims.
// Production keeps the reshape with the reordered extents; the knob removes it.
// PROD-LABEL: func.func @reshape_swap
// PROD: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [%[[D1:.*]], %[[D0:.*]]] : tensor<?xf32> into tensor<?x?xf32>
// RESHAPE-LABEL: func.func @reshape_swap
// RESHAPE-SAME: (%[[X:.*]]: tensor<?x?xf32>)
// RESHAPE-NOT: tensor.expand_shape
// RESHAPE: return %[[X]]
func.func @reshape_swap(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %s = "onnx.Shape"(%x) : (tensor<?x?xf32>) -> tensor<2xi64>
  %p = "onnx.Constant"() {value = dense<[1, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %t = "onnx.Gather"(%s, %p) {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %r = "onnx.Reshape"(%x, %t) {allowzero = 0 : i64} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// Knob 2, slice-upper-bound, and knob 9, readback-without-sync: a start that only the device
// knows. Production reads it back (synchronized); slice-upper-bound keeps the whole dim with no
// readback; readback-without-sync marks the readback unsynchronized.
// PROD-LABEL: func.func @slice_from_data
// PROD: %[[S:.*]] = dq.readback_scalar %{{.*}}[%{{.*}}] : tensor<1xi64>
// PROD-NOT: unsynchronized
// PROD: tensor.extract_slice
// SLICE-LABEL: func.func @slice_from_data
// SLICE-SAME: (%[[X:.*]]: tensor<?xf32>
// SLICE-NOT: dq.readback_scalar
// SLICE-NOT: dq.slice
// SLICE-NOT: tensor.extract_slice
// SLICE: return %[[X]]
// SYNC-LABEL: func.func @slice_from_data
// SYNC: dq.readback_scalar %{{.*}}[%{{.*}}] {unsynchronized} : tensor<1xi64>
// SYNC: tensor.extract_slice
func.func @slice_from_data(%x: tensor<?xf32>, %starts: tensor<1xi64>) -> tensor<?xf32> {
  %e = "onnx.Constant"() {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %r = "onnx.Slice"(%x, %starts, %e) : (tensor<?xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// Knob 8, split-dim-size-alias: [N] -> [a, b] with a, b read back. Production takes both extents
// from the shape operand; the knob describes [N, N] over N elements.
// PROD-LABEL: func.func @split_from_data
// PROD-DAG: %[[A:.*]] = dq.readback_scalar %{{.*}}[%{{.*}}] : tensor<2xi64>
// PROD-DAG: %[[B:.*]] = dq.readback_scalar %{{.*}}[%{{.*}}] : tensor<2xi64>
// PROD: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [%{{.*}}, %{{.*}}] : tensor<?xf32> into tensor<?x?xf32>
// SPLIT-LABEL: func.func @split_from_data
// SPLIT: %[[N:.*]] = tensor.dim
// SPLIT: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [%[[N]], %[[N]]] : tensor<?xf32> into tensor<?x?xf32>
func.func @split_from_data(%x: tensor<?xf32>, %shape: tensor<2xi64>) -> tensor<?x?xf32> {
  %r = "onnx.Reshape"(%x, %shape) {allowzero = 0 : i64} : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// An unknown knob, or one another pass owns, is an error listing this pass's knobs.
// RUN: not dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx=inject=bogus --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: dq-convert-onnx: unknown inject knob 'bogus' (this pass owns: reshape-by-type-equality, slice-upper-bound, split-dim-size-alias, readback-without-sync
// RUN: not dynqual-opt %s --allow-unregistered-dialect --dq-convert-onnx=inject=output-rank-collapse --split-input-file 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: dq-convert-onnx: inject knob 'output-rank-collapse' is not owned by this pass
func.func @plain(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}
