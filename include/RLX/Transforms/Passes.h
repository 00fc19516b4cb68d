//===- Passes.h - Target-independent RLX utility passes ---------*- C++ -*-===//
//
// Low-precision float conversion lowering and math approximations, used by
// the CPU and GPU pipelines. Generated from Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TRANSFORMS_PASSES_H
#define RLX_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::rlx {

/// arith.extf/truncf of f8E4M3FN and f4E2M1FN → integer arithmetic; with
/// `includeBf16`, f32/f64 → bf16 too, and f64 → f16 through f32 rounded to odd
/// (see rlx-expand-low-precision-floats).
void populateExpandLowPrecisionFloatPatterns(RewritePatternSet &patterns,
                                             bool includeBf16 = false);

#define GEN_PASS_DECL
#include "RLX/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "RLX/Transforms/Passes.h.inc"

} // namespace mlir::rlx

#endif // RLX_TRANSFORMS_PASSES_H
