//===- LIRDialect.h - rlx_lir dialect ---------------------------*- C++ -*-===//
//
// The buffer level of RLX: destination-style kernels on memrefs and the arena
// buffer plan. Produced by One-Shot Bufferize from rlx_mir; consumed by the
// CPU and NVVM backends.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_LIR_IR_LIRDIALECT_H
#define RLX_DIALECT_LIR_IR_LIRDIALECT_H

#include "RLX/Dialect/Common/IR/RLXDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dialect.h"

#include "RLX/Dialect/LIR/IR/LIRDialect.h.inc"

namespace mlir::rlx::lir {
/// Argument attribute that marks a function's arena argument.
inline constexpr llvm::StringLiteral kArenaArgAttr = "rlx_lir.arena";
} // namespace mlir::rlx::lir

#endif // RLX_DIALECT_LIR_IR_LIRDIALECT_H
