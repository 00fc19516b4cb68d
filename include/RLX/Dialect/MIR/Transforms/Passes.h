//===- Passes.h - rlx_mir transformation passes -----------------*- C++ -*-===//
//
// The MIR passes (fusion drivers, weight packing, specialization); generated
// from Passes.td. Pattern sets are in Fusion.h.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_TRANSFORMS_PASSES_H
#define RLX_DIALECT_MIR_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::rlx::mir {

#define GEN_PASS_DECL
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"

} // namespace mlir::rlx::mir

#endif // RLX_DIALECT_MIR_TRANSFORMS_PASSES_H
