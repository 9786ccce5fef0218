//===- DQOps.td - dq dialect operations --------------------*- tablegen -*-===//
#ifndef DQ_OPS_TD
#define DQ_OPS_TD

include "dq/Dialect/DQBase.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"

class DQ_Op<string mnemonic, list<Trait> traits = []> : Op<DQ_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Destination-style compute ops. On tensors each op has one result per init; on memrefs none.
//===----------------------------------------------------------------------===//

class DQ_DPSOp<string mnemonic, list<Trait> traits = []>
    : DQ_Op<mnemonic, !listconcat(traits, [DestinationStyleOpInterface,
                                           AttrSizedOperandSegments])> {
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let hasVerifier = 1;
  code dpsExtra = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() { return getOutputsMutable(); }
  }];
  let extraClassDeclaration = dpsExtra;
}

def DQ_ElementwiseOp : DQ_DPSOp<"elementwise"> {
  let summary = "elementwise op with numpy broadcasting of inputs to the init shape";
  let description = [{
    `kind` names the ONNX semantics and equals the Program.h kernel name: add, sub, mul, div,
    equal, where, cast; pow, max, min, and, or, less, less_equal, greater, greater_equal (binary);
    xor, mod, fmod (binary); neg, sqrt, reciprocal, sigmoid, tanh, erf, exp, cos, sin, not,
    isnan, relu, abs, log, floor, ceil, round, sign (unary). Inputs broadcast
    to the init's shape (ranks right-aligned, each input dim 1 or equal). Integer div truncates.
  }];
  let arguments = (ins StrAttr:$kind, Variadic<AnyShaped>:$inputs, Variadic<AnyShaped>:$outputs);
  let assemblyFormat = [{
    $kind (`ins` `(` $inputs^ `:` type($inputs) `)`)? `outs` `(` $outputs `:` type($outputs) `)`
    attr-dict (`->` type($results)^)?
  }];
}

def DQ_ExpandOp : DQ_DPSOp<"expand"> {
  let summary = "broadcast copy of the input to the init shape (ONNX Expand)";
  let arguments = (ins Variadic<AnyShaped>:$inputs, Variadic<AnyShaped>:$outputs);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $outputs `:` type($outputs) `)`
    attr-dict (`->` type($results)^)?
  }];
}

def DQ_SliceOp : DQ_DPSOp<"slice"> {
  let summary = "strided slice with normalized, clamped per-axis starts and steps";
  let description = [{
    out[i...] = in[starts[k] + i_k * steps[k] ...]. One start and one step per input axis; the
    output extents are the init's dims, computed from the clamped bounds.
  }];
  let arguments = (ins Variadic<AnyShaped>:$inputs, Variadic<AnyShaped>:$outputs,
                       Variadic<Index>:$starts, Variadic<Index>:$steps);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $outputs `:` type($outputs) `)`
    `starts` `(` $starts `)` `steps` `(` $steps `)` attr-dict (`->` type($results)^)?
  }];
}

def DQ_TransposeOp : DQ_DPSOp<"transpose"> {
  let summary = "ONNX Transpose with a static permutation";
  let arguments = (ins Variadic<AnyShaped>:$inputs, Variadic<AnyShaped>:$outputs,
                       DenseI64ArrayAttr:$permutation);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $outputs `:` type($outputs) `)`
    `permutation` `=` $permutation attr-dict (`->` type($results)^)?
  }];
}

def DQ_TransposeViewOp : DQ_Op<"transpose_view", [Pure]> {
  let summary = "a transposed view of a tensor: permuted strides, no data movement";
  let description = [{
    Result dim i is input dim `permutation[i]`. Bufferizes to `memref.transpose` of the input's
    buffer (the result aliases the input), so a consumer that walks strides reads the input in
    place; `dq-promote-strided-operands` copies it where a kernel needs a contiguous operand.
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `permutation` `=` $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def DQ_ConcatOp : DQ_DPSOp<"concat"> {
  let summary = "ONNX Concat along a non-negative axis";
  let arguments = (ins Variadic<AnyShaped>:$inputs, Variadic<AnyShaped>:$outputs,
                       I64Attr:$axis);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $outputs `:` type($outputs) `)`
    `axis` `=` $axis attr-dict (`->` type($results)^)?
  }];
}

def DQ_GatherOp : DQ_DPSOp<"gather"> {
  let summary = "ONNX Gather (data, indices) along a non-negative axis";
  let arguments = (ins Variadic<AnyShaped>:$inputs, Variadic<AnyShaped>:$outputs,
                       I64Attr:$axis);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $outputs `:` type($outputs) `)`
    `axis` `=` $axis attr-dict (`->` type($results)^)?
  }];
}

def DQ_RangeOp : DQ_DPSOp<"range"> {
  let summary = "out[i] = start + i * delta; inputs are 0-d start and delta";
  let arguments = (ins Variadic<AnyShaped>:$inputs, Variadic<AnyShaped>:$outputs);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $outputs `:` type($outputs) `)`
    attr-dict (`->` type($results)^)?
  }];
}

def DQ_FillOp : DQ_DPSOp<"fill"> {
  let summary = "fill the init with a scalar value (ONNX ConstantOfShape)";
  let arguments = (ins Variadic<AnyShaped>:$inputs, Variadic<AnyShaped>:$outputs,
                       TypedAttrInterface:$value);
  let assemblyFormat = [{
    `outs` `(` $outputs `:` type($outputs) `)` `value` `=` $value
    (`ins` `(` $inputs^ `:` type($inputs) `)`)? attr-dict (`->` type($results)^)?
  }];
}

def DQ_KernelOp : DQ_DPSOp<"kernel"> {
  let summary = "a Program.h kernel that takes attributes: matmul, softmax, reductions, ...";
  let description = [{
    `kernel` is the Program.h kernel name (matmul, softmax, layer_norm, reduce_sum, reduce_mean,
    reduce_max, reduce_min, reduce_prod, reduce_l2, reduce_sum_square, reduce_log_sum_exp,
    log_softmax, leaky_relu, arg_max, arg_min, one_hot, trilu, cumsum, gather_elements, gather_nd,
    range_length, count_nonzero, nonzero, compress, top_k, tile, pad, scatter_nd,
    scatter_elements; fused_elementwise: a chain of float elementwise ops that
    dq-fuse-elementwise made, `imm` its step program, Program.h). `imm` and `fimm` are
    the kernel's integer and float immediates (the emitter writes them after the input count),
    `scalars` its scalar register operands, in Program.h order.
  }];
  let arguments = (ins StrAttr:$kernel, Variadic<AnyShaped>:$inputs, Variadic<AnyShaped>:$outputs,
                       Variadic<Index>:$scalars,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$imm,
                       DefaultValuedAttr<DenseF64ArrayAttr, "{}">:$fimm);
  let assemblyFormat = [{
    $kernel (`ins` `(` $inputs^ `:` type($inputs) `)`)? `outs` `(` $outputs `:` type($outputs) `)`
    (`scalars` `(` $scalars^ `)`)? attr-dict (`->` type($results)^)?
  }];
}

def DQ_CopyOp : DQ_DPSOp<"copy"> {
  let summary = "device copy between memref views, with the kind chosen by copy lowering";
  let description = [{
    `kind` is one of "memcpy", "copy2d", "strided", or "host": a host loop over both views
    (emitted as HostCopy, which refuses device memory). Copy lowering only chooses "host" under
    the singleton-copy-host-path inject knob (docs/fuzz/knobs.md). Only exists after
    bufferization.
  }];
  let arguments = (ins Variadic<AnyShaped>:$inputs, Variadic<AnyShaped>:$outputs,
                       StrAttr:$kind);
  let assemblyFormat = [{
    $kind `ins` `(` $inputs `:` type($inputs) `)` `outs` `(` $outputs `:` type($outputs) `)`
    attr-dict (`->` type($results)^)?
  }];
}

//===----------------------------------------------------------------------===//
// Runtime-facing ops.
//===----------------------------------------------------------------------===//

def DQ_GetContextOp : DQ_Op<"get_context", [Pure]> {
  let summary = "the runtime execution context of the running program";
  let results = (outs DQ_ContextType:$context);
  let assemblyFormat = "attr-dict `:` type($context)";
}

def DQ_AllocOutputOp : DQ_Op<"alloc_output"> {
  let summary = "allocate graph output `index` through the caller's output allocator";
  let description = [{
    The requested shape is the result type's static dims plus `dynamic_sizes` for each `?`,
    i.e. the precise external dims of the graph output.
  }];
  let arguments = (ins DQ_ContextType:$context, I64Attr:$index, Variadic<Index>:$dynamic_sizes);
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = [{
    $context `[` $index `]` `(` $dynamic_sizes `)` attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def DQ_GetHostScratchOp : DQ_Op<"get_host_scratch"> {
  let summary = "host-side scratch buffer for host-written scalars (staging)";
  let arguments = (ins DQ_ContextType:$context, Variadic<Index>:$dynamic_sizes);
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = "$context `(` $dynamic_sizes `)` attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def DQ_GetPoolOp : DQ_Op<"get_pool"> {
  let summary = "the transient device pool, grown on demand to at least `bytes`";
  let arguments = (ins DQ_ContextType:$context, Index:$bytes);
  let results = (outs MemRefRankOf<[I8], [1]>:$result);
  let assemblyFormat = "$context `(` $bytes `)` attr-dict `:` type($result)";
}

def DQ_ReadbackScalarOp : DQ_Op<"readback_scalar"> {
  let summary = "synchronized device-to-host read of one element, as index";
  let description = [{
    With the unit attribute `unsynchronized` (set only by the readback-without-sync inject knob,
    docs/fuzz/knobs.md) the element is copied to host-mapped memory and read on the host with no
    synchronization in between.
  }];
  let arguments = (ins AnyShaped:$source, Variadic<Index>:$indices);
  let results = (outs Index:$result);
  let assemblyFormat = "$source `[` $indices `]` attr-dict `:` type($source)";
}

#endif // DQ_OPS_TD
