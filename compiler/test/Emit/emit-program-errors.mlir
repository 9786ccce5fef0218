// RUN: dynqual-opt %s --split-input-file --verify-diagnostics --emit-dqp=- --emit-format=text -o /dev/null

// checks that an op the emitter does not know is named in the error.
func.func @unknown(%x: memref<4xf32>, %y: memref<4xf32>) -> memref<4xf32> {
  // expected-error @+1 {{unsupported in program emission: memref.copy (run dq-lower-copies first)}}
  memref.copy %x, %y : memref<4xf32> to memref<4xf32>
  return %y : memref<4xf32>
}

// -----

// checks that a float scalar store (which the program's int64 registers cannot carry) is refused.
func.func @float_store(%y: memref<1xf32>) -> memref<1xf32> {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  // expected-error @+1 {{unsupported in program emission: host store of a 'f32' element}}
  memref.store %f, %y[%c0] : memref<1xf32>
  return %y : memref<1xf32>
}
