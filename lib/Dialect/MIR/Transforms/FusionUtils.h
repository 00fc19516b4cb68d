//===- FusionUtils.h - Helpers shared by the MIR fusion patterns -*- C++ -*-===//
//
// Internal to lib/Dialect/MIR/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_DIALECT_MIR_TRANSFORMS_FUSIONUTILS_H
#define RLX_LIB_DIALECT_MIR_TRANSFORMS_FUSIONUTILS_H

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "RLX/Dialect/MIR/Transforms/Fusion.h"

namespace mlir::rlx::mir {

/// What every fusion pattern carries: the optional report and its family
/// name (the pass that applies it alone).
struct FusionReporter {
  FusionReporter(FusionReport *report, StringRef family) : report(report), family(family) {}

  void miss(Operation *op, const Twine &reason) const {
    if (report)
      report->missed(op, family, reason);
  }
  void missMultiUse(Operation *op, Value v) const {
    if (report)
      report->missedMultiUse(op, family, v);
  }

  FusionReport *report;
  std::string family;
};

/// Base class of the fusion patterns rooted at one op type.
template <typename OpT>
struct FusionPattern : OpRewritePattern<OpT>, FusionReporter {
  FusionPattern(MLIRContext *ctx, FusionReport *report, StringRef family,
                PatternBenefit benefit = 1)
      : OpRewritePattern<OpT>(ctx, benefit), FusionReporter(report, family) {}
};

/// Replaces `root` with the matmul `spec` describes and erases `producer`,
/// the matmul whose stages `spec` extends (now without users). Fails, changing
/// nothing, when the fused op cannot be built.
LogicalResult replaceWithFusedMatmul(RewriterBase &rw, Operation *root, const FusedMatmulSpec &spec,
                            Operation *producer);

/// Epilogues on slices of one packed projection (PackedProjections.cpp): RoPE
/// on its q/k column slices (`rope`, the rope family) or SwiGLU on its two
/// halves (the SwiGLU family).
void populatePackedProjectionPatterns(RewritePatternSet &patterns, FusionReport *report,
                                      bool rope);

/// The activation a unary MIR op applies, if it is one of ActivationKind.
std::optional<ActivationKind> activationOf(Operation *op);

/// True when `v` is a splat constant; its value goes to `out`.
bool matchSplat(Value v, double &out);

/// The op in `block` that contains `op` (op itself when it is in `block`).
Operation *ancestorIn(Block *block, Operation *op);

/// A point in `block` after every definition of `operands` and before every
/// user of the results of `ops`, or nullptr when there is none. New ops are
/// inserted before the returned op.
Operation *findInsertionPoint(Block *block, ArrayRef<Value> operands,
                              ArrayRef<Operation *> ops);

} // namespace mlir::rlx::mir

#endif // RLX_LIB_DIALECT_MIR_TRANSFORMS_FUSIONUTILS_H
