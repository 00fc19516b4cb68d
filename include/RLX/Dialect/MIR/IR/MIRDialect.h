//===- MIRDialect.h - rlx_mir dialect ---------------------------*- C++ -*-===//
//
// The tensor-graph level of RLX: primitive and fused ops, the target of
// convert-rlx-hir-to-mir and the source of bufferization to rlx_lir.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRDIALECT_H
#define RLX_DIALECT_MIR_IR_MIRDIALECT_H

#include "RLX/Dialect/Common/IR/RLXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Dialect.h"

#include "RLX/Dialect/MIR/IR/MIRDialect.h.inc"

#endif // RLX_DIALECT_MIR_IR_MIRDIALECT_H
