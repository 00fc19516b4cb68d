//===- AttentionLowering.cpp - HIR attention to MIR -----------------------===//
//
// Direct: one rlx_mir.attention. Fusable: the primitive chain that attention
// recognition folds back (MIRBuilder::attentionChain). Attention with sinks
// is always the chain.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

Value mlir::rlx::detail::lowerAttention(MIRBuilder &mb, FusionPolicy policy,
                                        const AttentionConfig &cfg, Value q, Value k,
                                        Value v, Value mask, Value sinks) {
  OpBuilder &b = mb.builder();
  // rlx_mir.attention has no sinks: with them, the chain on either policy.
  if (policy == FusionPolicy::Direct && !sinks) {
    MLIRContext *ctx = b.getContext();
    auto f64 = [&](std::optional<double> x) { return x ? b.getF64FloatAttr(*x) : FloatAttr(); };
    return AttentionOp::create(
        b, mb.getLoc(), q, k, v, mask, b.getI64IntegerAttr(cfg.numHeads),
        b.getI64IntegerAttr(cfg.numKvHeads), b.getI64IntegerAttr(cfg.headDim),
        MaskKindAttr::get(ctx, cfg.maskKind),
        cfg.window ? b.getI64IntegerAttr(*cfg.window) : IntegerAttr(), f64(cfg.scale),
        f64(cfg.softcap), AttnLayoutAttr::get(ctx, cfg.layout));
  }
  return mb.attentionChain(cfg, q, k, v, mask, sinks);
}
