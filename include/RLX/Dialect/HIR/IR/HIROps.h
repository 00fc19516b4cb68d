//===- HIROps.h - rlx_hir ops -----------------------------------*- C++ -*-===//
//
// The block ops of rlx_hir (linear, norms, swiglu, attention, rope,
// embedding, ...). Their shape rules are in Common/IR/ShapeRules.h.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_HIR_IR_HIROPS_H
#define RLX_DIALECT_HIR_IR_HIROPS_H

#include "RLX/Dialect/HIR/IR/HIRDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "RLX/Dialect/HIR/IR/HIROps.h.inc"

#endif // RLX_DIALECT_HIR_IR_HIROPS_H
