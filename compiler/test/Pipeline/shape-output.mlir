// RUN: dynqual-opt %s --allow-unregistered-dialect --split-input-file --dq-production | FileCheck %s

// checks that a Shape graph output, computed on the host, never reaches the caller-allocated
// output by a host store: the values go to host scratch and one dq.copy uploads them.
// CHECK-LABEL: func.func @shape
// CHECK: %[[OUT:.*]] = dq.alloc_output %{{.*}}[0] () : memref<2xi64>
// CHECK-NOT: memref.store {{.*}}%[[OUT]]
// CHECK: %[[H:.*]] = dq.get_host_scratch %{{.*}}() : memref<2xi64>
// CHECK-NOT: memref.store {{.*}}%[[OUT]]
// CHECK: memref.store %{{.*}}, %[[H]]
// CHECK-NOT: memref.store {{.*}}%[[OUT]]
// CHECK: dq.copy "memcpy" ins(%[[H]] : memref<2xi64>) outs(%[[OUT]] : memref<2xi64>)
// CHECK-NEXT: return %[[OUT]]
func.func @shape(%x: tensor<?x?xf32> {dq.name = "x"}) -> (tensor<2xi64> {dq.name = "s"}) {
  %s = "onnx.Shape"(%x) : (tensor<?x?xf32>) -> tensor<2xi64>
  return %s : tensor<2xi64>
}

// -----

// checks the rank-0 case: Shape -> Gather -> Sub -> Cast to i32 is one host scalar uploaded into
// the memref<i32> output.
// CHECK-LABEL: func.func @gather_scalar
// CHECK: %[[OUT:.*]] = dq.alloc_output %{{.*}}[0] () : memref<i32>
// CHECK-NOT: memref.store {{.*}}%[[OUT]]
// CHECK: %[[H:.*]] = dq.get_host_scratch %{{.*}}() : memref<i32>
// CHECK-NOT: memref.store {{.*}}%[[OUT]]
// CHECK: memref.store %{{.*}}, %[[H]][]
// CHECK-NOT: memref.store {{.*}}%[[OUT]]
// CHECK: dq.copy "memcpy" ins(%[[H]] : memref<i32>) outs(%[[OUT]] : memref<i32>)
// CHECK: return %[[OUT]]
func.func @gather_scalar(%x: tensor<?x?xf32> {dq.name = "x"}) -> (tensor<i32> {dq.name = "d"}) {
  %s = "onnx.Shape"(%x) : (tensor<?x?xf32>) -> tensor<2xi64>
  %i = "onnx.Constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %g = "onnx.Gather"(%s, %i) {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %m = "onnx.Sub"(%g, %i) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %d = "onnx.Cast"(%m) {to = 6 : i64} : (tensor<i64>) -> tensor<i32>
  return %d : tensor<i32>
}

// -----

// checks that a Concat of two shape vectors as a graph output is uploaded once, not stored.
// CHECK-LABEL: func.func @shape_concat
// CHECK: %[[OUT:.*]] = dq.alloc_output %{{.*}}[0] () : memref<4xi64>
// CHECK-NOT: memref.store {{.*}}%[[OUT]]
// CHECK: dq.copy "memcpy" ins(%{{.*}} : memref<4xi64>) outs(%[[OUT]] : memref<4xi64>)
// CHECK: return %[[OUT]]
func.func @shape_concat(%x: tensor<?x?xf32> {dq.name = "x"}, %y: tensor<?x?xf32> {dq.name = "y"}) -> (tensor<4xi64> {dq.name = "s"}) {
  %sx = "onnx.Shape"(%x) : (tensor<?x?xf32>) -> tensor<2xi64>
  %sy = "onnx.Shape"(%y) : (tensor<?x?xf32>) -> tensor<2xi64>
  %c = "onnx.Concat"(%sx, %sy) {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  return %c : tensor<4xi64>
}
