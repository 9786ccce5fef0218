//===- DQBase.td - dq dialect definition -------------------*- tablegen -*-===//
#ifndef DQ_BASE_TD
#define DQ_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def DQ_Dialect : Dialect {
  let name = "dq";
  let cppNamespace = "::mlir::dq";
  let summary = "dynqual's dynamic-shape execution dialect";
  let description = [{
    Ops of the dynqual compiler under test: destination-style compute ops that work on tensors
    before bufferization and on memrefs after it, plus the runtime-facing ops (output
    allocation, host scratch, the transient pool, synchronized scalar readback, device copies).
  }];
  let useDefaultTypePrinterParser = 1;
}

class DQ_Type<string name, string typeMnemonic> : TypeDef<DQ_Dialect, name> {
  let mnemonic = typeMnemonic;
}

def DQ_ContextType : DQ_Type<"Context", "context"> {
  let summary = "handle to the runtime execution context (output allocator, scratch, pool)";
}

#endif // DQ_BASE_TD
