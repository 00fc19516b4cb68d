//===- Passes.h - RLX CPU backend passes ------------------------*- C++ -*-===//
//
// Generated declarations of the CPU passes (rlx-cpu-matmul-to-blas).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_CPU_PASSES_H
#define RLX_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

namespace mlir::rlx {
#define GEN_PASS_DECL
#include "RLX/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "RLX/Target/CPU/Passes.h.inc"
} // namespace mlir::rlx

#endif // RLX_TARGET_CPU_PASSES_H
