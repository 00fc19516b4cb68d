//===- HIRDialect.h - rlx_hir dialect ---------------------------*- C++ -*-===//
//
// The block level of RLX (model builders write it; convert-rlx-hir-to-mir
// lowers it).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_HIR_IR_HIRDIALECT_H
#define RLX_DIALECT_HIR_IR_HIRDIALECT_H

#include "RLX/Dialect/Common/IR/RLXDialect.h"
#include "mlir/IR/Dialect.h"

#include "RLX/Dialect/HIR/IR/HIRDialect.h.inc"

#endif // RLX_DIALECT_HIR_IR_HIRDIALECT_H
