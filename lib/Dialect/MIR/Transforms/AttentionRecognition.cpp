//===- AttentionRecognition.cpp - matmul/softmax/matmul → attention -------===//
//
// Matches, from the value matmul backwards:
//   o  = matmul(p, vh)                       p = softmax(s, axis = -1)
//   s  = [add(s', additive mask) | select(bool mask, s', -inf)]
//   s' = [causal_mask(s'', window)]
//   s''= [mul(tanh(div(t, c)), c)]           (softcap c)
//   t  = [mul(u, scale) | div(u, 1/scale)]
//   u  = matmul(qh, kh, transpose_b)
// with qh/kh/vh in [B, H, S, D] obtained from packed [B, S, H·D]
// (reshape + transpose), BSHD (transpose) or BHSD inputs, and kh/vh possibly
// repeated across query heads (HF repeat_kv: reshape → broadcast → reshape).
// The output side undoes the layout change the same way. Every intermediate
// must have one use.
//
// The head-batched form (buddy-mlir's BuddyNext decode attention, and what
// TOSA exporters write when heads fold into the batch of a rank-3 matmul):
// q, k, v are [B·H, S, D] reshapes of [B, H, S, D] (k/v possibly repeat_kv'd
// straight into [B·Hkv·G, S, D]), the mask is [1, Sq, Sk] (or [Sq, Sk]) and
// the output is reshaped back to [B, H, Sq, D]. It is raised as BHSD.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"

#include "llvm/ADT/SetVector.h"

#include <array>
#include <cmath>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

struct MatchedScores {
  MatmulOp qk;
  Value mask;
  MaskKind maskKind = MaskKind::None;
  std::optional<int64_t> window;
  std::optional<double> scale, softcap;
  SmallVector<Operation *> chain;
};

/// Undoes HF repeat_kv: [B, Hkv·G, S, D] built by reshape(broadcast(reshape
/// (x → [B, Hkv, 1, S, D]) → [B, Hkv, G, S, D]) → [B, Hkv·G, S, D]).
/// With `headBatched`, the merge is into [B·Hkv·G, S, D] instead.
static Value unrepeat(Value x, int64_t &group, SmallVectorImpl<Operation *> &chain,
                      bool headBatched = false) {
  group = 1;
  auto merge = x.getDefiningOp<ReshapeOp>();
  if (!merge)
    return x;
  auto bcast = merge.getInput().getDefiningOp<BroadcastOp>();
  if (!bcast)
    return x;
  auto split = bcast.getInput().getDefiningOp<ReshapeOp>();
  if (!split)
    return x;
  auto s5 = split.getType(), b5 = bcast.getType();
  auto src = MIRBuilder::typeOf(split.getInput());
  auto out = merge.getType();
  if (s5.getRank() != 5 || src.getRank() != 4 || out.getRank() != (headBatched ? 3 : 4) ||
      s5.getShape()[2] != 1 || b5.getShape()[2] == ShapedType::kDynamic)
    return x;
  // Exactly repeat_kv: the split only inserts the unit axis, the broadcast
  // only stretches it (a K/V of one position broadcast along the sequence
  // is not GQA and was taken for it), the merge folds it into the heads.
  ArrayRef<int64_t> sd = src.getShape(), s = s5.getShape(), b = b5.getShape(),
                    o = out.getShape();
  // (Dims compare as written: a dynamic seq stays the same dynamic dim
  // through the chain; the heads and the group are static.)
  if (s[0] != sd[0] || s[1] != sd[1] || s[3] != sd[2] || s[4] != sd[3] || b[0] != s[0] ||
      b[1] != s[1] || b[3] != s[3] || b[4] != s[4] || ShapedType::isDynamic(b[1]))
    return x;
  bool merged = headBatched ? !ShapedType::isDynamic(b[0]) && o[0] == b[0] * b[1] * b[2] &&
                                  o[1] == b[3] && o[2] == b[4]
                            : o[0] == b[0] && o[1] == b[1] * b[2] && o[2] == b[3] && o[3] == b[4];
  if (!merged)
    return x;
  group = b5.getShape()[2];
  chain.append({merge, bcast, split});
  return split.getInput();
}

/// [B, H, S, D] behind a head-batched [B·H, S, D] operand (a reshape that
/// only merges the leading two axes), or null.
static Value unmergeHeads(Value x, SmallVectorImpl<Operation *> &chain) {
  auto rs = x.getDefiningOp<ReshapeOp>();
  if (!rs)
    return {};
  auto src = MIRBuilder::typeOf(rs.getInput());
  ArrayRef<int64_t> s = src.getShape(), o = rs.getType().getShape();
  if (src.getRank() != 4 || o.size() != 3 || ShapedType::isDynamic(s[0]) ||
      ShapedType::isDynamic(s[1]) || o[0] != s[0] * s[1] || o[1] != s[2] || o[2] != s[3])
    return {};
  chain.push_back(rs);
  return rs.getInput();
}

/// K or V of the head-batched form as BHSD: repeat_kv'd or only merged.
static Value headBatchedKV(Value x, int64_t &group, SmallVectorImpl<Operation *> &chain) {
  Value r = unrepeat(x, group, chain, /*headBatched=*/true);
  return r != x ? r : unmergeHeads(x, chain);
}

/// The keys of the head-batched form as BHSD: the right operand of a
/// transpose_b matmul (headBatchedKV), or of a plain one when it is the
/// [B·H, D, S] view of transpose(k, [0, 1, 3, 2]) with k [B, H, S, D]
/// (possibly repeat_kv'd; buddy's DeepSeek-R1 prefill writes Kᵀ that way).
static Value headBatchedKeys(MatmulOp qk, int64_t &group, SmallVectorImpl<Operation *> &chain) {
  if (qk.getTransposeB())
    return headBatchedKV(qk.getRhs(), group, chain);
  group = 1;
  SmallVector<Operation *> mine;
  Value kt = unmergeHeads(qk.getRhs(), mine);
  auto tr = kt ? kt.getDefiningOp<TransposeOp>() : TransposeOp();
  if (!tr || tr.getPermutation() != ArrayRef<int64_t>{0, 1, 3, 2})
    return {};
  mine.push_back(tr);
  chain.append(mine);
  return unrepeat(tr.getInput(), group, chain);
}

/// [B, H, S, D] from `x` in the operand's layout; reports the layout.
static Value fromBHSD(Value x, AttnLayout &layout, SmallVectorImpl<Operation *> &chain) {
  auto tr = x.getDefiningOp<TransposeOp>();
  if (!tr || tr.getPermutation() != ArrayRef<int64_t>{0, 2, 1, 3}) {
    layout = AttnLayout::BHSD;
    return x;
  }
  chain.push_back(tr);
  if (auto rs = tr.getInput().getDefiningOp<ReshapeOp>()) {
    if (MIRBuilder::typeOf(rs.getInput()).getRank() == 3) {
      chain.push_back(rs);
      layout = AttnLayout::BSD;
      return rs.getInput();
    }
  }
  layout = AttnLayout::BSHD;
  return tr.getInput();
}

struct AttentionFromChain : FusionPattern<MatmulOp> {
  using FusionPattern::FusionPattern;

  /// Walks up from the softmax input; fills `m` on success.
  static bool matchScores(Value s, MatchedScores &m) {
    Value cur = s;
    if (auto sel = cur.getDefiningOp<SelectOp>()) {
      double v;
      if (!matchSplat(sel.getOnFalse(), v) || !(std::isinf(v) && v < 0))
        return false;
      m.mask = sel.getCondition();
      m.chain.push_back(sel);
      cur = sel.getOnTrue();
    } else if (auto add = cur.getDefiningOp<AddOp>()) {
      // The scores operand is the one that leads to the QK matmul.
      for (unsigned i = 0; i < 2 && !m.mask; ++i) {
        Value cand = add->getOperand(i);
        Operation *d = cand.getDefiningOp();
        if (cand.getType() == add.getType() &&
            isa_and_nonnull<CausalMaskOp, MulOp, DivOp, MatmulOp>(d)) {
          m.mask = add->getOperand(1 - i);
          cur = cand;
        }
      }
      if (!m.mask)
        return false;
      m.chain.push_back(add);
    }
    if (auto cm = cur.getDefiningOp<CausalMaskOp>()) {
      m.maskKind = cm.getChunked()  ? MaskKind::Chunked
                   : cm.getWindow() ? MaskKind::SlidingWindow
                                    : MaskKind::Causal;
      m.window = cm.getWindow();
      m.chain.push_back(cm);
      cur = cm.getInput();
    }
    // softcap: mul(tanh(div(t, c)), c).
    if (auto mul = cur.getDefiningOp<MulOp>()) {
      for (unsigned i = 0; i < 2; ++i) {
        auto th = mul->getOperand(i).getDefiningOp<TanhOp>();
        double c1, c2;
        if (!th || !matchSplat(mul->getOperand(1 - i), c1))
          continue;
        auto div = th.getInput().getDefiningOp<DivOp>();
        if (!div || !matchSplat(div.getRhs(), c2) || c1 != c2)
          continue;
        m.softcap = c1;
        m.chain.append({mul, th, div});
        cur = div.getLhs();
        break;
      }
    }
    if (auto mul = cur.getDefiningOp<MulOp>()) {
      double c;
      for (unsigned i = 0; i < 2; ++i)
        if (matchSplat(mul->getOperand(1 - i), c) &&
            mul->getOperand(i).getType() == mul.getType()) {
          m.scale = c;
          m.chain.push_back(mul);
          cur = mul->getOperand(i);
          break;
        }
    } else if (auto div = cur.getDefiningOp<DivOp>()) {
      double c;
      if (matchSplat(div.getRhs(), c) && c != 0.0) {
        m.scale = 1.0 / c;
        m.chain.push_back(div);
        cur = div.getLhs();
      }
    }
    m.qk = cur.getDefiningOp<MatmulOp>();
    // Kᵀ as the operand's own transpose is taken in the head-batched form
    // only (headBatchedKeys undoes it).
    if (!m.qk || m.qk.getTransposeA() ||
        (!m.qk.getTransposeB() && m.qk.getType().getRank() != 3))
      return false;
    m.chain.push_back(m.qk);
    if (!m.scale)
      m.scale = 1.0;
    return true;
  }

  LogicalResult matchAndRewrite(MatmulOp pv, PatternRewriter &rw) const override {
    int64_t rank = pv.getType().getRank();
    if (pv.getTransposeA() || pv.getTransposeB() || (rank != 4 && rank != 3))
      return failure();
    auto sm = pv.getLhs().getDefiningOp<SoftmaxOp>();
    auto axis = sm ? static_cast<int64_t>(sm.getAxis()) : 0;
    if (!sm || (axis != -1 && axis != rank - 1))
      return failure();
    MatchedScores m;
    m.chain.push_back(sm);
    if (!matchScores(sm.getInput(), m))
      return failure();
    for (Operation *op : m.chain)
      if (!op->getResult(0).hasOneUse()) {
        missMultiUse(pv, op->getResult(0));
        return failure();
      }
    int64_t gk, gv;
    SmallVector<Operation *> views;
    AttnLayout lq, lk, lv;
    Value q, k, v;
    std::array<Value, 3> bhsd;
    Operation *root = pv;
    SmallVector<Operation *> outViews;
    // The query as [B, H, S, D] (for the head-batched form, its source).
    Value qBHSD = m.qk.getLhs();
    // What returns to the query's layout (pv, or the reshape back).
    Operation *out = pv;
    if (rank == 3) {
      // Head-batched: every operand a [B·H, S, D] view of [B, H, S, D]
      // (itself possibly a view of packed heads), the output reshaped back
      // to [B, H, Sq, D].
      qBHSD = unmergeHeads(m.qk.getLhs(), views);
      Value kh = headBatchedKeys(m.qk, gk, views);
      Value vh = headBatchedKV(pv.getRhs(), gv, views);
      if (!qBHSD || !kh || !vh || !pv->hasOneUse()) {
        miss(pv, "head-batched attention: q, k or v is not a [B*H, S, D] view of [B, H, S, D]");
        return failure();
      }
      q = fromBHSD(qBHSD, lq, views);
      k = fromBHSD(kh, lk, views);
      v = fromBHSD(vh, lv, views);
      bhsd = {qBHSD, kh, vh};
      auto back = dyn_cast<ReshapeOp>(*pv->user_begin());
      if (!back || back.getType().getRank() != 4) {
        miss(pv, "head-batched attention: the output is not reshaped back to [B, H, Sq, D]");
        return failure();
      }
      root = out = back;
      // [1, Sq, Sk] broadcasts over B·H as over B; a per-head mask must be
      // a view of [B, H, Sq, Sk].
      if (m.mask) {
        auto mt = MIRBuilder::typeOf(m.mask);
        if (mt.getRank() == 3 && mt.getShape()[0] != 1) {
          Value m4 = unmergeHeads(m.mask, views);
          if (!m4) {
            miss(pv, "head-batched attention: a per-head mask that is not a view of [B, H, Sq, Sk]");
            return failure();
          }
          m.mask = m4;
        }
      }
    } else {
      Value kh = unrepeat(m.qk.getRhs(), gk, views);
      Value vh = unrepeat(pv.getRhs(), gv, views);
      q = fromBHSD(m.qk.getLhs(), lq, views);
      k = fromBHSD(kh, lk, views);
      v = fromBHSD(vh, lv, views);
      bhsd = {m.qk.getLhs(), kh, vh};
    }
    // Operands whose packed layouts differ (v still packed, q and k roped
    // per head) are all taken as their [B, H, S, D] views.
    if (lq != lk || lq != lv) {
      q = bhsd[0], k = bhsd[1], v = bhsd[2];
      lq = lk = lv = AttnLayout::BHSD;
    }
    if (gk != gv) {
      miss(pv, "shape mismatch: k and v are repeated across query heads differently");
      return failure();
    }
    // The output side returns to the query's layout.
    if (lq != AttnLayout::BHSD) {
      if (!out->hasOneUse())
        return failure();
      auto tr = dyn_cast<TransposeOp>(*out->user_begin());
      if (!tr || tr.getPermutation() != ArrayRef<int64_t>{0, 2, 1, 3})
        return failure();
      if (out != pv)
        outViews.push_back(out);
      root = tr;
      if (lq == AttnLayout::BSD) {
        if (!tr->hasOneUse())
          return failure();
        auto rs = dyn_cast<ReshapeOp>(*tr->user_begin());
        if (!rs || rs.getType().getRank() != 3)
          return failure();
        outViews.push_back(tr);
        root = rs;
      }
    }
    // Restore a rank-3 [B, Sq, Sk] mask that the lowering gave a head axis.
    if (m.mask && rank == 4) {
      if (auto rs = m.mask.getDefiningOp<ReshapeOp>()) {
        auto src = MIRBuilder::typeOf(rs.getInput());
        if (src.getRank() == 3 && rs.getType().getRank() == 4 && rs.getType().getShape()[1] == 1)
          m.mask = rs.getInput();
      }
    }
    auto qT = MIRBuilder::typeOf(qBHSD);
    if (qT.getRank() != 4)
      return failure();
    int64_t heads = qT.getShape()[1], headDim = qT.getShape()[3];
    if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(headDim) || heads % gk != 0)
      return failure();
    AttentionConfig cfg;
    cfg.numHeads = heads;
    cfg.numKvHeads = heads / gk;
    cfg.headDim = headDim;
    cfg.maskKind = m.maskKind;
    cfg.window = m.window;
    cfg.softcap = m.softcap;
    cfg.layout = lq;
    double defaultScale = 1.0 / std::sqrt(static_cast<double>(headDim));
    if (std::abs(*m.scale - defaultScale) > 1e-6 * defaultScale)
      cfg.scale = m.scale;
    // The op's own shape rules decide whether the recognized form is legal.
    SmallVector<Type> inferred;
    if (failed(inferAttentionTypes(std::nullopt, cfg, q, k, v, m.mask, inferred)) ||
        inferred.front() != root->getResult(0).getType()) {
      miss(pv, "shape mismatch: the chain does not form a valid attention");
      return failure();
    }
    MLIRContext *ctx = rw.getContext();
    auto f64 = [&](std::optional<double> x) { return x ? rw.getF64FloatAttr(*x) : FloatAttr(); };
    rw.setInsertionPoint(root);
    Value attn = AttentionOp::create(
        rw, pv.getLoc(), q, k, v, m.mask, rw.getI64IntegerAttr(cfg.numHeads),
        rw.getI64IntegerAttr(cfg.numKvHeads), rw.getI64IntegerAttr(cfg.headDim),
        MaskKindAttr::get(ctx, cfg.maskKind),
        cfg.window ? rw.getI64IntegerAttr(*cfg.window) : IntegerAttr(), f64(cfg.scale),
        f64(cfg.softcap), AttnLayoutAttr::get(ctx, cfg.layout));
    rw.replaceOp(root, attn);
    // Erase what became dead: output views, the chain, the input views. Each
    // op once (q, k and v may come through the same views), and never `root`,
    // which replaceOp erased already (it is `pv` itself for BHSD).
    llvm::SetVector<Operation *> dead;
    dead.insert(outViews.begin(), outViews.end());
    dead.insert(pv);
    dead.insert(m.chain.begin(), m.chain.end());
    dead.insert(views.begin(), views.end());
    dead.remove(root);
    SmallVector<Operation *> worklist = dead.takeVector();
    for (bool changed = true; changed;) {
      changed = false;
      for (Operation *&op : worklist)
        if (op && op->use_empty()) {
          rw.eraseOp(op);
          op = nullptr;
          changed = true;
        }
    }
    return success();
  }
};

} // namespace

void mlir::rlx::mir::populateAttentionFusionPatterns(RewritePatternSet &patterns,
                                                     FusionReport *report) {
  patterns.add<AttentionFromChain>(patterns.getContext(), report, "rlx-mir-fuse-attention");
}
