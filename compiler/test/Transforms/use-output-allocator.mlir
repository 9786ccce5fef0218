// RUN: dynqual-opt %s --split-input-file --dq-use-output-allocator | FileCheck %s

// checks that the reviewer's case (16 elements, expand_shape'd by two independent runtime sizes,
// cast to 4x4) requests [4, 4] at rank 2, keeps the ABI cast, and views the output allocation.
// CHECK-LABEL: func.func @static_result
// CHECK-SAME: (%[[A:.*]]: index, %[[B:.*]]: index)
// CHECK-NOT: memref.alloc
// CHECK: %[[CTX:.*]] = dq.get_context
// CHECK: %[[OUT:.*]] = dq.alloc_output %[[CTX]][0] () : memref<4x4xf32>
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[OUT]] {{\[\[}}0, 1]] : memref<4x4xf32> into memref<16xf32>
// CHECK: dq.fill outs(%[[FLAT]] : memref<16xf32>)
// CHECK: %[[C:.*]] = memref.cast %[[FLAT]] : memref<16xf32> to memref<?xf32>
// CHECK: %[[E:.*]] = memref.expand_shape %[[C]] {{\[\[}}0, 1]] output_shape [%[[A]], %[[B]]]
// CHECK: %[[S:.*]] = memref.cast %[[E]] : memref<?x?xf32> to memref<4x4xf32>
// CHECK: return %[[S]]
func.func @static_result(%a: index, %b: index) -> memref<4x4xf32> {
  %buf = memref.alloc() : memref<16xf32>
  dq.fill outs(%buf : memref<16xf32>) value = 1.0 : f32
  %c = memref.cast %buf : memref<16xf32> to memref<?xf32>
  %e = memref.expand_shape %c [[0, 1]] output_shape [%a, %b] : memref<?xf32> into memref<?x?xf32>
  %s = memref.cast %e : memref<?x?xf32> to memref<4x4xf32>
  return %s : memref<4x4xf32>
}

// -----

// checks that returning the dynamic 2-D type requests the two independent sizes [%a, %b], not a
// size derived from the 16-element source.
// CHECK-LABEL: func.func @dynamic_result
// CHECK-SAME: (%[[A:.*]]: index, %[[B:.*]]: index)
// CHECK-NOT: memref.alloc
// CHECK: dq.alloc_output %{{.*}}[0] (%[[A]], %[[B]]) : memref<?x?xf32>
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @dynamic_result(%a: index, %b: index) -> memref<?x?xf32> {
  %buf = memref.alloc() : memref<16xf32>
  dq.fill outs(%buf : memref<16xf32>) value = 1.0 : f32
  %c = memref.cast %buf : memref<16xf32> to memref<?xf32>
  %e = memref.expand_shape %c [[0, 1]] output_shape [%a, %b] : memref<?xf32> into memref<?x?xf32>
  return %e : memref<?x?xf32>
}

// -----

// checks that a collapsed output multiplies the dims of its group, and that the output index is
// the position in the return.
// CHECK-LABEL: func.func @collapse_second_result
// CHECK-SAME: (%[[X:.*]]: memref<2xf32>, %[[N:.*]]: index)
// CHECK-NOT: memref.alloc
// CHECK: %[[SIZE:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK: dq.alloc_output %{{.*}}[1] (%[[SIZE]]) : memref<?xf32>
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @collapse_second_result(%x: memref<2xf32>, %n: index) -> (memref<2xf32>, memref<?xf32>) {
  %buf = memref.alloc(%n) : memref<?x3xf32>
  dq.fill outs(%buf : memref<?x3xf32>) value = 0.0 : f32
  %f = memref.collapse_shape %buf [[0, 1]] : memref<?x3xf32> into memref<?xf32>
  return %x, %f : memref<2xf32>, memref<?xf32>
}

// -----

// checks that an input returned directly and a returned subview (only part of its buffer) are
// left alone: the runtime copies them.
// CHECK-LABEL: func.func @untraceable
// CHECK-NOT: dq.alloc_output
// CHECK: memref.alloc() : memref<8xf32>
// CHECK-NOT: dq.alloc_output
// CHECK: return
func.func @untraceable(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32, strided<[1], offset: 2>>) {
  %buf = memref.alloc() : memref<8xf32>
  dq.fill outs(%buf : memref<8xf32>) value = 0.0 : f32
  %v = memref.subview %buf[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  return %x, %v : memref<4xf32>, memref<4xf32, strided<[1], offset: 2>>
}

// -----

// checks that a returned output collapsing four dims, three of them dynamic, is allocated with the
// product of all four extents (the `x[a, b, c, 3] -> Add -> Reshape(-1)` graph of
// corpus/collapse4_dynamic; the pass once iterated a destroyed temporary here, docs/sanitizers.md).
// CHECK-LABEL: func.func @collapse_four_dims
// CHECK-SAME: (%[[A:[^:]*]]: index, %[[B:[^:]*]]: index, %[[C:[^:]*]]: index)
// CHECK-NOT: memref.alloc
// CHECK: %[[AB:.*]] = arith.muli %[[A]], %[[B]] : index
// CHECK: %[[ABC:.*]] = arith.muli %[[AB]], %[[C]] : index
// CHECK: %[[THREE:.*]] = arith.constant 3 : index
// CHECK: %[[SIZE:.*]] = arith.muli %[[ABC]], %[[THREE]] : index
// CHECK: %[[OUT:.*]] = dq.alloc_output %{{.*}}[0] (%[[SIZE]]) : memref<?xf32>
// CHECK: memref.expand_shape %[[OUT]] {{\[\[}}0, 1, 2, 3]] output_shape [%[[A]], %[[B]], %[[C]], 3]
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @collapse_four_dims(%a: index, %b: index, %c: index) -> memref<?xf32> {
  %buf = memref.alloc(%a, %b, %c) : memref<?x?x?x3xf32>
  dq.fill outs(%buf : memref<?x?x?x3xf32>) value = 0.0 : f32
  %f = memref.collapse_shape %buf [[0, 1, 2, 3]] : memref<?x?x?x3xf32> into memref<?xf32>
  return %f : memref<?xf32>
}

// -----

// checks that a same-type reshape of the output is kept: memref<?x?xf32> holds [%a, %b] and
// [%b, %a] alike, so the producer must write through a view with its own dims [%a, %b], not into
// the allocation requested with the returned dims [%b, %a].
// CHECK-LABEL: func.func @same_type_reshape
// CHECK-SAME: (%[[A:.*]]: index, %[[B:.*]]: index)
// CHECK: %[[OUT:.*]] = dq.alloc_output %{{.*}}[0] (%[[B]], %[[A]]) : memref<?x?xf32>
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[OUT]] {{\[\[}}0, 1]] : memref<?x?xf32> into memref<?xf32>
// CHECK: %[[VIEW:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [%[[A]], %[[B]]]
// CHECK: dq.fill outs(%[[VIEW]] : memref<?x?xf32>)
func.func @same_type_reshape(%a: index, %b: index) -> memref<?x?xf32> {
  %buf = memref.alloc(%a, %b) : memref<?x?xf32>
  dq.fill outs(%buf : memref<?x?xf32>) value = 1.0 : f32
  %c = memref.collapse_shape %buf [[0, 1]] : memref<?x?xf32> into memref<?xf32>
  %e = memref.expand_shape %c [[0, 1]] output_shape [%b, %a] : memref<?xf32> into memref<?x?xf32>
  return %e : memref<?x?xf32>
}

// -----

// checks a result of static size 0 on a dynamic dim (a fuzz finding: Flatten of an empty slice):
// the output's flat view is memref<?xf32>, since 0 x ? is not a static size the collapse_shape
// verifier accepts; the builder's own inference made it memref<0xf32>, which it then refused.
// CHECK-LABEL: func.func @zero_by_dynamic
// CHECK: %[[OUT:.*]] = dq.alloc_output %{{.*}}[0] (%{{.*}}) : memref<0x?xf32>
// CHECK: memref.collapse_shape %[[OUT]] {{\[\[}}0, 1]] : memref<0x?xf32> into memref<?xf32>
// CHECK: return
func.func @zero_by_dynamic(%a: index, %b: index) -> memref<0x?xf32> {
  %buf = memref.alloc(%a, %b) : memref<?x?xf32>
  dq.fill outs(%buf : memref<?x?xf32>) value = 1.0 : f32
  %s = memref.cast %buf : memref<?x?xf32> to memref<0x?xf32>
  return %s : memref<0x?xf32>
}

// -----

// checks that an output whose size is computed after its allocation, just before another
// output's allocation, is placed there while that allocation still exists: the insertion point
// was the erased allocation of the first output ("operation's operand is unlinked").
// CHECK-LABEL: func.func @dim_defined_before_other_output
// CHECK-NOT: memref.alloc(
// CHECK: %[[N:.*]] = arith.muli
// CHECK: dq.alloc_output %{{.*}}[0] (%[[N]], %{{.*}}) : memref<?x?xf32>
// CHECK: %[[OUT:.*]] = dq.alloc_output %{{.*}}[1] (%[[N]]) : memref<?x1xf32>
// CHECK-NOT: memref.alloc(
// CHECK: return
func.func @dim_defined_before_other_output(%a: index) -> (memref<?x?xf32>, memref<?x1xf32>) {
  %c2 = arith.constant 2 : index
  %buf = memref.alloc(%a) : memref<2x?xf32>
  %n = arith.muli %a, %c2 : index
  %t = memref.alloc(%n, %a) : memref<?x?xf32>
  dq.fill outs(%t : memref<?x?xf32>) value = 1.0 : f32
  dq.fill outs(%buf : memref<2x?xf32>) value = 2.0 : f32
  %c = memref.collapse_shape %buf [[0, 1]] : memref<2x?xf32> into memref<?xf32>
  %e = memref.expand_shape %c [[0, 1]] output_shape [%n, 1] : memref<?xf32> into memref<?x1xf32>
  return %t, %e : memref<?x?xf32>, memref<?x1xf32>
}

// -----

// checks that a dim defined from another dim, right after it, still precedes the output request:
// the insertion point moves past each definition at or after it, in any order (it used to stop at
// the op defining %b once %a had moved it there, and the request used %b before its definition).
// CHECK-LABEL: func.func @dim_defined_from_the_previous_dim
// CHECK: %[[A:.*]] = arith.divsi
// CHECK: %[[B:.*]] = arith.divsi
// CHECK: dq.alloc_output %{{.*}}[0] (%[[A]], %[[B]]) : memref<?x?xf32>
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @dim_defined_from_the_previous_dim(%n: index) -> memref<?x?xf32> {
  %c2 = arith.constant 2 : index
  %buf = memref.alloc(%n) : memref<?xf32>
  %a = arith.divsi %n, %c2 : index
  %b = arith.divsi %n, %a : index
  dq.fill outs(%buf : memref<?xf32>) value = 1.0 : f32
  %e = memref.expand_shape %buf [[0, 1]] output_shape [%a, %b] : memref<?xf32> into memref<?x?xf32>
  return %e : memref<?x?xf32>
}

// -----

// checks the same with the dims listed latest-defined first: the point is the one after the last
// definition whatever the order of the output_shape operands.
// CHECK-LABEL: func.func @dims_in_reverse_definition_order
// CHECK: %[[A:.*]] = arith.divsi
// CHECK: %[[B:.*]] = arith.divsi
// CHECK: dq.alloc_output %{{.*}}[0] (%[[B]], %[[A]]) : memref<?x?xf32>
// CHECK: return
func.func @dims_in_reverse_definition_order(%n: index) -> memref<?x?xf32> {
  %c2 = arith.constant 2 : index
  %buf = memref.alloc(%n) : memref<?xf32>
  %a = arith.divsi %n, %c2 : index
  %b = arith.divsi %n, %a : index
  dq.fill outs(%buf : memref<?xf32>) value = 1.0 : f32
  %e = memref.expand_shape %buf [[0, 1]] output_shape [%b, %a] : memref<?xf32> into memref<?x?xf32>
  return %e : memref<?x?xf32>
}
