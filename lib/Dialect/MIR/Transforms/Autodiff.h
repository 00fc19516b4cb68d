//===- Autodiff.h - Shared pieces of MIR autodiff (internal) ----*- C++ -*-===//
//
// The unfusing that rlx-mir-prepare-for-ad applies (and rlx-mir-grad applies
// to its copy of the forward function) and the reverse-mode rules.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_DIALECT_MIR_TRANSFORMS_AUTODIFF_H
#define RLX_LIB_DIALECT_MIR_TRANSFORMS_AUTODIFF_H

#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::rlx::mir::ad {

/// Rewrites every fused op and elementwise region of `fn` into primitives
/// (see rlx-mir-prepare-for-ad). Emits an error at the first op it cannot
/// unfuse.
LogicalResult unfuse(func::FuncOp fn);

/// Errors (at the offending op) unless `fn` is MIR on tensors: no rlx_hir or
/// rlx_lir op, no memref argument.
LogicalResult checkIsMir(func::FuncOp fn, StringRef pass);

/// The vector-Jacobian product of `op` (one result, cotangent `dy`): fills
/// `dx[i]` for every operand `i` with `need[i]`, at the operand's shape or at
/// a shape it broadcasts to (the caller sums broadcast axes away). Fails
/// (with an error at `op`) when the op has no rule.
LogicalResult vjp(MIRBuilder &mb, Operation *op, Value dy, ArrayRef<bool> need,
                  SmallVectorImpl<Value> &dx);

/// Sums `g` over the axes along which a value of `target`'s shape was
/// broadcast to `g`'s shape, and reshapes to `target`.
Value sumTo(MIRBuilder &mb, Value g, RankedTensorType target);

/// A zero tensor of `like`'s type (a broadcast constant when static).
Value zerosLike(MIRBuilder &mb, Value like);

} // namespace mlir::rlx::mir::ad

#endif // RLX_LIB_DIALECT_MIR_TRANSFORMS_AUTODIFF_H
