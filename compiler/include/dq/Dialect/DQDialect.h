//===- DQDialect.h - dq dialect ---------------------------------*- C++ -*-===//
#ifndef DQ_DIALECT_DQDIALECT_H
#define DQ_DIALECT_DQDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dq/Dialect/DQOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dq/Dialect/DQOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "dq/Dialect/DQOps.h.inc"

#endif // DQ_DIALECT_DQDIALECT_H
