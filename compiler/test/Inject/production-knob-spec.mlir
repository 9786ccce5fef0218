// The order knobs of dq-production: host-scalars-after-reuse runs dq-optimize-memrefs (with its
// knob) before dq-materialize-host-scalars; promote-before-reuse runs
// dq-promote-strided-operands before dq-optimize-memrefs; a pass knob lands on its pass.
// RUN: dynqual-opt %s --dq-production --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PROD
// RUN: dynqual-opt %s --dq-production=inject=host-scalars-after-reuse --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: dynqual-opt %s --dq-production=inject=promote-before-reuse --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PROMOTE
// RUN: dynqual-opt %s --dq-production=inject=slice-upper-bound --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=SLICE
// views=false (alone or with a knob) lands on dq-convert-onnx.
// RUN: dynqual-opt %s --dq-production=views=false --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=VIEWS
// RUN: dynqual-opt %s '--dq-production=inject=slice-upper-bound views=false' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=KNOBVIEWS
// PROD: dq-convert-onnx{inject= views=true}
// PROD: dq-fuse-elementwise
// PROD: dq-use-output-allocator{inject=}
// PROD-NEXT: dq-materialize-host-scalars
// PROD-NEXT: dq-optimize-memrefs{inject=}
// PROD-NEXT: dq-promote-strided-operands{inject=}
// PROD-NEXT: dq-pool-allocs
// PROD-NEXT: dq-lower-copies{inject=}
// HOST: dq-use-output-allocator{inject=}
// HOST-NEXT: dq-optimize-memrefs{inject=host-scalars-after-reuse}
// HOST-NEXT: dq-materialize-host-scalars
// PROMOTE: dq-materialize-host-scalars
// PROMOTE-NEXT: dq-promote-strided-operands{inject=}
// PROMOTE-NEXT: dq-optimize-memrefs{inject=}
// SLICE: dq-convert-onnx{inject=slice-upper-bound views=true}
// VIEWS: dq-convert-onnx{inject= views=false}
// KNOBVIEWS: dq-convert-onnx{inject=slice-upper-bound views=false}
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// An unknown knob names dq-production and lists every knob.
// RUN: not dynqual-opt %s --dq-production=inject=bogus -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: dq-production: unknown inject knob 'bogus' (knobs: reshape-by-type-equality, {{.*}}, rotary-layout-swap)
