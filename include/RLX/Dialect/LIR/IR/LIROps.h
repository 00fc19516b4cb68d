//===- LIROps.h - rlx_lir ops -----------------------------------*- C++ -*-===//
//
// rlx_lir.view (a buffer in the arena), rlx_lir.kernel (one destination-style
// kernel whose body is the MIR computation) and rlx_lir.yield.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_LIR_IR_LIROPS_H
#define RLX_DIALECT_LIR_IR_LIROPS_H

#include "RLX/Dialect/LIR/IR/LIRDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::rlx::lir {
class YieldOp;
} // namespace mlir::rlx::lir

#define GET_OP_CLASSES
#include "RLX/Dialect/LIR/IR/LIROps.h.inc"

#endif // RLX_DIALECT_LIR_IR_LIROPS_H
