//===- AttentionLowering.cpp - HIR attention to MIR -----------------------===//
//
// Direct: one rlx_mir.attention. Fusable: the primitive chain attention
// recognition folds back:
//   q, k, v -> [B, H, S, D] (reshape/transpose; K/V heads repeated by a
//   broadcast for GQA) -> matmul(q, k^T) -> * scale -> [softcap] ->
//   [causal_mask] -> [+ additive mask | select(bool mask)] -> softmax ->
//   matmul(p, v) -> back to the query layout.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

/// x in `layout` with `heads` heads -> [B, heads, S, D].
static Value toBHSD(MIRBuilder &mb, Value x, AttnLayout layout, int64_t heads) {
  ArrayRef<int64_t> s = MIRBuilder::shapeOf(x);
  switch (layout) {
  case AttnLayout::BSD: {
    int64_t d = s[2] / heads;
    Value r = mb.reshape(x, {s[0] < 0 ? -1 : s[0], s[1] < 0 ? -1 : s[1], heads, d});
    return mb.transpose(r, {0, 2, 1, 3});
  }
  case AttnLayout::BSHD:
    return mb.transpose(x, {0, 2, 1, 3});
  case AttnLayout::BHSD:
    return x;
  }
  llvm_unreachable("unknown layout");
}

/// [B, Hkv, S, D] -> [B, Hkv·group, S, D] by repeating each kv head (HF repeat_kv).
static Value repeatKv(MIRBuilder &mb, Value x, int64_t group) {
  if (group == 1)
    return x;
  SmallVector<int64_t> p = MIRBuilder::pattern(MIRBuilder::shapeOf(x));
  int64_t hkv = p[1];
  Value r = mb.reshape(x, {p[0], hkv, 1, p[2], p[3]});
  Value b = mb.broadcast(r, {p[0], hkv, group, p[2], p[3]});
  return mb.reshape(b, {p[0], hkv * group, p[2], p[3]});
}

Value mlir::rlx::detail::lowerAttention(MIRBuilder &mb, FusionPolicy policy,
                                        const AttentionConfig &cfg, Value q, Value k,
                                        Value v, Value mask) {
  OpBuilder &b = mb.builder();
  if (policy == FusionPolicy::Direct) {
    MLIRContext *ctx = b.getContext();
    auto f64 = [&](std::optional<double> x) { return x ? b.getF64FloatAttr(*x) : FloatAttr(); };
    return AttentionOp::create(
        b, mb.getLoc(), q, k, v, mask, b.getI64IntegerAttr(cfg.numHeads),
        b.getI64IntegerAttr(cfg.numKvHeads), b.getI64IntegerAttr(cfg.headDim),
        MaskKindAttr::get(ctx, cfg.maskKind),
        cfg.window ? b.getI64IntegerAttr(*cfg.window) : IntegerAttr(), f64(cfg.scale),
        f64(cfg.softcap), AttnLayoutAttr::get(ctx, cfg.layout));
  }
  Type et = MIRBuilder::elementType(q);
  Value qh = toBHSD(mb, q, cfg.layout, cfg.numHeads);
  Value kh = repeatKv(mb, toBHSD(mb, k, cfg.layout, cfg.numKvHeads),
                      cfg.numHeads / cfg.numKvHeads);
  Value vh = repeatKv(mb, toBHSD(mb, v, cfg.layout, cfg.numKvHeads),
                      cfg.numHeads / cfg.numKvHeads);
  Value s = mb.matmul(qh, kh, false, true);
  double scale = cfg.scale.value_or(1.0 / std::sqrt(static_cast<double>(cfg.headDim)));
  s = mb.mul(s, mb.scalar(et, scale));
  if (cfg.softcap) {
    Value c = mb.scalar(et, *cfg.softcap);
    s = mb.mul(mb.unary<TanhOp>(mb.div(s, c)), c);
  }
  if (cfg.maskKind != MaskKind::None)
    s = CausalMaskOp::create(b, mb.getLoc(), s,
                             cfg.window ? b.getI64IntegerAttr(*cfg.window) : IntegerAttr());
  if (mask) {
    // Masks of rank 3 are [B, Sq, Sk]: give them the head axis first.
    if (MIRBuilder::typeOf(mask).getRank() == 3) {
      SmallVector<int64_t> p = MIRBuilder::pattern(MIRBuilder::shapeOf(mask));
      mask = mb.reshape(mask, {p[0], 1, p[1], p[2]});
    }
    if (MIRBuilder::elementType(mask).isInteger(1))
      s = mb.select(mask, s, mb.scalar(et, -std::numeric_limits<double>::infinity()));
    else
      s = mb.add(s, mask);
  }
  Value p = mb.softmax(s, -1);
  Value o = mb.matmul(p, vh);
  switch (cfg.layout) {
  case AttnLayout::BSD: {
    ArrayRef<int64_t> qs = MIRBuilder::shapeOf(q);
    int64_t dv = MIRBuilder::shapeOf(o)[3];
    Value t = mb.transpose(o, {0, 2, 1, 3});
    return mb.reshape(t, {qs[0] < 0 ? -1 : qs[0], qs[1] < 0 ? -1 : qs[1], cfg.numHeads * dv});
  }
  case AttnLayout::BSHD:
    return mb.transpose(o, {0, 2, 1, 3});
  case AttnLayout::BHSD:
    return o;
  }
  llvm_unreachable("unknown layout");
}
