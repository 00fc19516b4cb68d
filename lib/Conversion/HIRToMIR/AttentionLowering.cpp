//===- AttentionLowering.cpp - HIR attention to MIR -----------------------===//
//
// Direct: one rlx_mir.attention. Fusable: the primitive chain that attention
// recognition folds back (MIRBuilder::attentionChain). Attention with sinks
// is attention_partial + attention_combine with the sinks on either policy
// (the chain for f64).
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
  MLIRContext *ctx = b.getContext();
  auto f64 = [&](std::optional<double> x) { return x ? b.getF64FloatAttr(*x) : FloatAttr(); };
  Type et = MIRBuilder::elementType(q);
  if (sinks && q && k && v && !et.isF64()) {
    // Sinks join the combine's denominator: one fused attention_partial
    // (rlx-mir-split-kv may split its keys) and attention_combine.
    auto partial = AttentionPartialOp::create(
        b, mb.getLoc(), q, k, v, mask, b.getI64IntegerAttr(cfg.numHeads),
        b.getI64IntegerAttr(cfg.numKvHeads), b.getI64IntegerAttr(cfg.headDim),
        MaskKindAttr::get(ctx, cfg.maskKind),
        cfg.window ? b.getI64IntegerAttr(*cfg.window) : IntegerAttr(), f64(cfg.scale),
        f64(cfg.softcap), AttnLayoutAttr::get(ctx, cfg.layout), b.getI64IntegerAttr(1),
        IntegerAttr());
    auto ot = cast<RankedTensorType>(partial.getPartialOutput().getType());
    auto rt = RankedTensorType::get(AttentionCombineOp::resultShape(ot.getShape(), cfg.layout), et);
    return AttentionCombineOp::create(b, mb.getLoc(), rt, partial.getPartialOutput(),
                                      partial.getLse(),
                                      MIRBuilder::elementType(sinks).isF32()
                                          ? sinks
                                          : mb.cast(sinks, b.getF32Type()),
                                      AttnLayoutAttr::get(ctx, cfg.layout))
        .getResult();
  }
  // f64 with sinks: the chain (attention_partial's statistics are f32).
  if (policy == FusionPolicy::Direct && !sinks) {
    return AttentionOp::create(
        b, mb.getLoc(), q, k, v, mask, b.getI64IntegerAttr(cfg.numHeads),
        b.getI64IntegerAttr(cfg.numKvHeads), b.getI64IntegerAttr(cfg.headDim),
        MaskKindAttr::get(ctx, cfg.maskKind),
        cfg.window ? b.getI64IntegerAttr(*cfg.window) : IntegerAttr(), f64(cfg.scale),
        f64(cfg.softcap), AttnLayoutAttr::get(ctx, cfg.layout));
  }
  return mb.attentionChain(cfg, q, k, v, mask, sinks);
}
