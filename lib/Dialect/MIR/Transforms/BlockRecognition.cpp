//===- BlockRecognition.cpp - Blocks out of raised primitive graphs -------===//
//
// What an exporter spells out in primitives, recognized as the MIR op that
// means it, so the fusion patterns and kernels apply to imported graphs:
//   rms_norm   x · rsqrt(mean(x²) + eps) [· w], mean as reduce mean, sum·(1/H)
//              or sum/H, x² as x·x or pow(x, 2)
//   softmax    exp(x − max(x)) / Σ exp(x − max(x))  (or · reciprocal(Σ))
//   silu       x · sigmoid(x); sigmoid from 1 / (1 + exp(−x))
//   RoPE       x·cos(cat(f, f)) + rotate_half(x)·sin(cat(f, f)) on heads
//              split from a packed [B, S, H·D] projection
//   causal     scores + a constant causal (or sliding-window) −inf mask
//   matmuls    transposes folded into transpose flags, a shared weight
//              reshaped to [1, K, N] read as [K, N], batch dims merged around
//              a 3-D matmul split back
// GQA's repeat (reshape → tile/broadcast → reshape), SwiGLU and attention
// are then what rlx-mir-fuse already recognizes.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"

#include "RLX/Dialect/MIR/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRRECOGNIZEBLOCKS
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

int64_t lastAxis(Value v) { return MIRBuilder::typeOf(v).getRank() - 1; }

bool isAxis(ReduceOp r, int64_t axis) {
  int64_t rank = r.getInput().getType().getRank();
  return r.getAxes().size() == 1 && (r.getAxes()[0] + rank) % rank == (axis + rank) % rank;
}

/// mean(v) over the last axis with kept dims: reduce mean, or reduce sum
/// times 1/H, or reduce sum divided by H. Returns v.
Value matchMeanLast(Value m) {
  auto sumOf = [&](Value s, double factor) -> Value {
    auto r = s.getDefiningOp<ReduceOp>();
    if (!r || r.getKind() != ReduceKind::Sum || !r.getKeepDims() || !isAxis(r, lastAxis(s)))
      return Value();
    double h = static_cast<double>(r.getInput().getType().getShape().back());
    return std::abs(factor * h - 1.0) < 1e-6 ? r.getInput() : Value();
  };
  if (auto r = m.getDefiningOp<ReduceOp>())
    if (r.getKind() == ReduceKind::Mean && r.getKeepDims() && isAxis(r, lastAxis(m)))
      return r.getInput();
  double c;
  if (auto mul = m.getDefiningOp<MulOp>())
    for (unsigned i = 0; i < 2; ++i)
      if (matchSplat(mul->getOperand(1 - i), c))
        if (Value v = sumOf(mul->getOperand(i), c))
          return v;
  if (auto div = m.getDefiningOp<DivOp>())
    if (matchSplat(div.getRhs(), c) && c != 0.0)
      if (Value v = sumOf(div.getLhs(), 1.0 / c))
        return v;
  return Value();
}

/// x when `sq` is x·x or pow(x, 2).
Value matchSquare(Value sq) {
  if (auto m = sq.getDefiningOp<MulOp>(); m && m.getLhs() == m.getRhs())
    return m.getLhs();
  double e;
  if (auto p = sq.getDefiningOp<PowOp>(); p && matchSplat(p.getRhs(), e) && e == 2.0)
    return p.getLhs();
  return Value();
}

/// x · rsqrt(mean(x²) + eps) → rms_norm(x).
struct RmsNormFromPrimitives : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      Value x = op->getOperand(i);
      auto rs = op->getOperand(1 - i).getDefiningOp<RsqrtOp>();
      auto add = rs ? rs.getInput().getDefiningOp<AddOp>() : nullptr;
      if (!add)
        continue;
      for (unsigned j = 0; j < 2; ++j) {
        double eps;
        if (!matchSplat(add->getOperand(1 - j), eps) || eps <= 0)
          continue;
        Value sq = matchMeanLast(add->getOperand(j));
        if (!sq || matchSquare(sq) != x || op.getType() != MIRBuilder::typeOf(x))
          continue;
        rw.replaceOpWithNewOp<RmsNormOp>(op, x, Value(), rw.getF64FloatAttr(eps));
        return success();
      }
    }
    return failure();
  }
};

/// rms_norm(x) · w with w broadcast along the last axis → rms_norm(x, w).
struct RmsNormWeight : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      auto n = op->getOperand(i).getDefiningOp<RmsNormOp>();
      Value w = op->getOperand(1 - i);
      if (!n || n.getWeight() || !n->hasOneUse() || op.getType() != n.getType())
        continue;
      auto wt = MIRBuilder::typeOf(w);
      int64_t h = n.getType().getShape().back();
      if (wt.getNumElements() != h || wt.getShape().back() != h ||
          wt.getElementType() != n.getType().getElementType())
        continue;
      MIRBuilder mb(rw, op.getLoc());
      Value w1 = wt.getRank() == 1 ? w : mb.reshape(w, {h});
      Value norm = mb.create<RmsNormOp>(n.getInput(), w1, n.getEpsAttr());
      return replaceWithBuilt(rw, op, mb, norm);
    }
    return failure();
  }
};

/// `v` is `x` or an exact float widening of it (exporters compute LayerNorm's
/// variance in f64).
bool isOrWidens(Value v, Value x) {
  if (v == x)
    return true;
  // Only to f32 or f64, which every narrower float converts to exactly.
  auto c = v.getDefiningOp<CastOp>();
  Type to = MIRBuilder::elementType(v), from = MIRBuilder::elementType(x);
  return c && c.getInput() == x && isa<FloatType>(from) && (to.isF32() || to.isF64()) &&
         to.getIntOrFloatBitWidth() >= from.getIntOrFloatBitWidth();
}

/// (x − mean(x)) · rsqrt(var(x) + eps) → layer_norm(x), var(x) = mean((x' −
/// mean(x'))²) with x' = x or x widened (then the variance is cast back).
struct LayerNormFromPrimitives : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      auto centered = op->getOperand(i).getDefiningOp<SubOp>();
      auto rs = op->getOperand(1 - i).getDefiningOp<RsqrtOp>();
      auto add = rs ? rs.getInput().getDefiningOp<AddOp>() : nullptr;
      if (!centered || !add || matchMeanLast(centered.getRhs()) != centered.getLhs())
        continue;
      Value x = centered.getLhs();
      for (unsigned j = 0; j < 2; ++j) {
        double eps;
        Value var = add->getOperand(j);
        if (!matchSplat(add->getOperand(1 - j), eps) || eps <= 0)
          continue;
        if (auto c = var.getDefiningOp<CastOp>())
          var = c.getInput();
        Value sq = matchSquare(matchMeanLast(var) ? matchMeanLast(var) : Value());
        if (!sq)
          continue;
        bool same = sq == centered.getResult();
        if (!same) {
          auto c2 = sq.getDefiningOp<SubOp>();
          if (!c2 || !isOrWidens(c2.getLhs(), x) || matchMeanLast(c2.getRhs()) != c2.getLhs())
            continue;
        }
        if (MIRBuilder::typeOf(var).getShape() != MIRBuilder::shapeOf(add->getOperand(j)) ||
            op.getType() != MIRBuilder::typeOf(x))
          continue;
        rw.replaceOpWithNewOp<LayerNormOp>(op, x, Value(), Value(), rw.getF64FloatAttr(eps));
        return success();
      }
    }
    return failure();
  }
};

/// A [H] vector (or a [1..., H] view of one) of `n`'s element type.
Value rowVector(MIRBuilder &mb, Value v, RankedTensorType n) {
  auto t = MIRBuilder::typeOf(v);
  int64_t h = n.getShape().back();
  if (t.getNumElements() != h || t.getShape().back() != h ||
      t.getElementType() != n.getElementType())
    return Value();
  return t.getRank() == 1 ? v : mb.reshape(v, {h});
}

/// layer_norm(x) · w → layer_norm(x, w); layer_norm(x[, w]) + b →
/// layer_norm(x, w, b), w and b broadcast along the last axis.
template <typename RootOp>
struct LayerNormAffine : OpRewritePattern<RootOp> {
  using OpRewritePattern<RootOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(RootOp op, PatternRewriter &rw) const override {
    constexpr bool isWeight = std::is_same_v<RootOp, MulOp>;
    for (unsigned i = 0; i < 2; ++i) {
      auto n = op->getOperand(i).template getDefiningOp<LayerNormOp>();
      if (!n || n.getBias() || (isWeight && n.getWeight()) || !n->hasOneUse() ||
          op.getType() != n.getType())
        continue;
      MIRBuilder mb(rw, op.getLoc());
      Value v = rowVector(mb, op->getOperand(1 - i), n.getType());
      if (!v) {
        mb.discardUnused(&rw);
        continue;
      }
      Value w = isWeight ? v : n.getWeight(), b = isWeight ? Value() : v;
      rw.template replaceOpWithNewOp<LayerNormOp>(op, n.getInput(), w, b, n.getEpsAttr());
      return success();
    }
    return failure();
  }
};

/// The splat scalar of a mul by a constant, and the other operand.
std::optional<double> splatFactor(Value v, Value &x) {
  auto mul = v.getDefiningOp<MulOp>();
  if (!mul)
    return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    double c;
    if (matchSplat(mul->getOperand(1 - i), c) && mul->getOperand(i).getType() == mul.getType()) {
      x = mul->getOperand(i);
      return c;
    }
  }
  return std::nullopt;
}

/// x when `v` is x³: pow(x, 3) or x·x·x.
Value matchCube(Value v) {
  double e;
  if (auto p = v.getDefiningOp<PowOp>(); p && matchSplat(p.getRhs(), e) && e == 3.0)
    return p.getLhs();
  if (auto m = v.getDefiningOp<MulOp>())
    for (unsigned i = 0; i < 2; ++i)
      if (Value x = matchSquare(m->getOperand(i)); x && x == m->getOperand(1 - i))
        return x;
  return Value();
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-6 * std::abs(b); }

/// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) → gelu_tanh(x) (HF gelu_new,
/// torch's gelu(approximate="tanh") written out).
struct GeluTanhFromPrimitives : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      Value x;
      auto half = splatFactor(op->getOperand(i), x);
      auto onePlus = op->getOperand(1 - i).getDefiningOp<AddOp>();
      if (!half || !near(*half, 0.5) || !onePlus)
        continue;
      for (unsigned j = 0; j < 2; ++j) {
        double one;
        auto th = onePlus->getOperand(j).getDefiningOp<TanhOp>();
        if (!th || !matchSplat(onePlus->getOperand(1 - j), one) || one != 1.0)
          continue;
        Value inner;
        auto c = splatFactor(th.getInput(), inner);
        auto sum = inner ? inner.getDefiningOp<AddOp>() : nullptr;
        if (!c || !near(*c, std::sqrt(2.0 / M_PI)) || !sum)
          continue;
        for (unsigned k = 0; k < 2; ++k) {
          Value cube;
          auto a = splatFactor(sum->getOperand(1 - k), cube);
          if (sum->getOperand(k) == x && a && near(*a, 0.044715) && matchCube(cube) == x &&
              op.getType() == MIRBuilder::typeOf(x)) {
            rw.replaceOpWithNewOp<GeluTanhOp>(op, x);
            return success();
          }
        }
      }
    }
    return failure();
  }
};

/// `m` is max(x) along `axis` with the axis kept: a keep-dims max reduce, or
/// the reshape of one without kept dims (aten.max.dim's value) back to it.
bool isMaxAlong(Value m, Value x, int64_t axis) {
  Value r = m;
  if (auto rs = m.getDefiningOp<ReshapeOp>())
    r = rs.getInput();
  auto mx = r.getDefiningOp<ReduceOp>();
  if (!mx || mx.getKind() != ReduceKind::Max || mx.getInput() != x || !isAxis(mx, axis))
    return false;
  if (r == m)
    return mx.getKeepDims();
  SmallVector<int64_t> kept(MIRBuilder::shapeOf(x));
  int64_t rank = kept.size();
  kept[(axis % rank + rank) % rank] = 1;
  return !mx.getKeepDims() && MIRBuilder::shapeOf(m) == ArrayRef<int64_t>(kept);
}

/// exp(x − max(x)) / Σ exp(x − max(x)) (or · reciprocal(Σ)) → softmax(x).
template <typename RootOp>
struct Softmax : OpRewritePattern<RootOp> {
  using OpRewritePattern<RootOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(RootOp op, PatternRewriter &rw) const override {
    Value e = op.getLhs(), sumValue = op.getRhs();
    if constexpr (std::is_same_v<RootOp, MulOp>) {
      auto rec = sumValue.template getDefiningOp<ReciprocalOp>();
      if (!rec) {
        std::swap(e, sumValue);
        rec = sumValue.template getDefiningOp<ReciprocalOp>();
      }
      if (!rec)
        return failure();
      sumValue = rec.getInput();
    }
    auto ex = e.template getDefiningOp<ExpOp>();
    auto sum = sumValue.template getDefiningOp<ReduceOp>();
    if (!ex || !sum || sum.getKind() != ReduceKind::Sum || !sum.getKeepDims() ||
        sum.getInput() != e || sum.getAxes().size() != 1)
      return failure();
    int64_t axis = sum.getAxes()[0];
    Value x = ex.getInput();
    if (auto sub = x.template getDefiningOp<SubOp>())
      if (isMaxAlong(sub.getRhs(), sub.getLhs(), axis))
        x = sub.getLhs();
    if (MIRBuilder::typeOf(x) != op.getType())
      return failure();
    rw.template replaceOpWithNewOp<SoftmaxOp>(op, x, rw.getI64IntegerAttr(axis));
    return success();
  }
};

/// 1 / (1 + exp(−x)) → sigmoid(x); x · sigmoid(x) → silu(x).
Value matchSigmoidDenominator(Value d) {
  auto add = d.getDefiningOp<AddOp>();
  if (!add)
    return Value();
  for (unsigned i = 0; i < 2; ++i) {
    double one;
    auto ex = add->getOperand(i).getDefiningOp<ExpOp>();
    auto neg = ex ? ex.getInput().getDefiningOp<NegOp>() : nullptr;
    if (neg && matchSplat(add->getOperand(1 - i), one) && one == 1.0)
      return neg.getInput();
  }
  return Value();
}

struct SigmoidFromDiv : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DivOp op, PatternRewriter &rw) const override {
    double one;
    Value x = matchSigmoidDenominator(op.getRhs());
    if (!x || !matchSplat(op.getLhs(), one) || one != 1.0 || MIRBuilder::typeOf(x) != op.getType())
      return failure();
    rw.replaceOpWithNewOp<SigmoidOp>(op, x);
    return success();
  }
};

struct SigmoidFromReciprocal : OpRewritePattern<ReciprocalOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReciprocalOp op, PatternRewriter &rw) const override {
    Value x = matchSigmoidDenominator(op.getInput());
    if (!x || MIRBuilder::typeOf(x) != op.getType())
      return failure();
    rw.replaceOpWithNewOp<SigmoidOp>(op, x);
    return success();
  }
};

struct SiluFromSigmoid : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      auto s = op->getOperand(1 - i).getDefiningOp<SigmoidOp>();
      if (s && s.getInput() == op->getOperand(i) && op.getType() == s.getType()) {
        rw.replaceOpWithNewOp<SiluOp>(op, op->getOperand(i));
        return success();
      }
    }
    return failure();
  }
};

/// max(x, 0) → relu(x) (NaN-propagating both; torch.relu as exporters write
/// it, tpp-mlir's MLP), so it fuses as a matmul's activation.
struct ReluFromMax : OpRewritePattern<MaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaxOp op, PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      double c;
      if (matchSplat(op->getOperand(1 - i), c) && c == 0.0 &&
          op->getOperand(i).getType() == op.getType()) {
        rw.replaceOpWithNewOp<ReluOp>(op, op->getOperand(i));
        return success();
      }
    }
    return failure();
  }
};

/// scores + C, C a constant that hides future keys (bottom-right causal,
/// optionally a sliding window) with −inf (or the dtype's lowest value)
/// → causal_mask(scores).
struct CausalMaskFromConstant : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      Value s = op->getOperand(i);
      DenseElementsAttr c;
      if (MIRBuilder::typeOf(s) != op.getType() ||
          !matchPattern(op->getOperand(1 - i), m_Constant(&c)) || c.isSplat())
        continue;
      auto ct = cast<RankedTensorType>(c.getType());
      auto st = MIRBuilder::typeOf(s);
      if (!isa<FloatType>(ct.getElementType()) || ct.getRank() < 2 || st.getRank() < 2 ||
          !st.hasStaticShape())
        continue;
      // The mask covers exactly the scores' last two dims [Sq, Sk] and is
      // the same for every batch and head (its other dims are 1).
      int64_t sq = st.getShape()[st.getRank() - 2], sk = st.getShape().back();
      if (ct.getShape().take_back(2) != st.getShape().take_back(2) ||
          ct.getNumElements() != sq * sk)
        continue;
      auto window = causalWindow(c, sq, sk);
      if (!window)
        continue;
      rw.replaceOpWithNewOp<CausalMaskOp>(op, s, *window > 0 ? rw.getI64IntegerAttr(*window)
                                                              : IntegerAttr());
      return success();
    }
    return failure();
  }

  /// 0 when the constant is exactly the bottom-right causal mask, w > 0 when
  /// it is exactly the sliding window of w keys, nullopt otherwise. Row i
  /// sees keys (last − w, last] ∩ [0, Sk) with last = i + Sk − Sq; hidden
  /// entries are −inf or ≤ −1e30, visible ones exactly 0.
  static std::optional<int64_t> causalWindow(DenseElementsAttr c, int64_t sq, int64_t sk) {
    auto values = llvm::to_vector(c.getValues<APFloat>());
    auto hidden = [](const APFloat &v) {
      return v.isInfinity() ? v.isNegative() : !v.isNaN() && v.convertToDouble() <= -1.0e30;
    };
    // Each row: one contiguous visible range that ends at `last` (nothing
    // visible when last < 0); record where it starts.
    SmallVector<int64_t> first(sq, 0), lastOf(sq, 0);
    for (int64_t i = 0; i < sq; ++i) {
      int64_t last = i + sk - sq, lo = -1, hi = -1, count = 0;
      for (int64_t j = 0; j < sk; ++j) {
        const APFloat &v = values[i * sk + j];
        bool visible = v.isZero() && !v.isNegative();
        if (!visible && !hidden(v))
          return std::nullopt;
        if (visible) {
          lo = lo < 0 ? j : lo;
          hi = j;
          ++count;
        }
      }
      if (last < 0 ? count != 0 : (count == 0 || hi != last || count != hi - lo + 1))
        return std::nullopt;
      lastOf[i] = last;
      first[i] = lo;
    }
    // Plain causal: every row starts at key 0.
    std::optional<int64_t> w;
    for (int64_t i = 0; i < sq; ++i)
      if (lastOf[i] >= 0 && first[i] > 0) {
        int64_t wi = lastOf[i] - first[i] + 1;
        if (w && *w != wi)
          return std::nullopt;
        w = wi;
      }
    if (!w)
      return 0;
    // Rows starting at 0 must be ones the window does not cut yet.
    for (int64_t i = 0; i < sq; ++i)
      if (lastOf[i] >= 0 && first[i] == 0 && lastOf[i] + 1 > *w)
        return std::nullopt;
    return w;
  }
};

/// f when `x` is f [..., h] repeated twice along a new axis before the last:
/// broadcast(reshape(f → [..., 1, h]) → [..., 2, h]), which a reshape to
/// [..., 2h] makes concat(f, f) (buddy-mlir's DeepSeek-R1 import writes the
/// RoPE tables so).
static Value twiceAlongNewAxis(Value x) {
  auto bc = x.getDefiningOp<BroadcastOp>();
  auto rs = bc ? bc.getInput().getDefiningOp<ReshapeOp>() : ReshapeOp();
  if (!rs)
    return Value();
  ArrayRef<int64_t> out = bc.getType().getShape(), in = rs.getType().getShape(),
                    f = MIRBuilder::shapeOf(rs.getInput());
  int64_t r = out.size();
  if (r < 2 || in.size() != out.size() || f.size() + 1 != in.size() || in[r - 2] != 1 ||
      out[r - 2] != 2 || ShapedType::isDynamic(in[r - 1]))
    return Value();
  for (int64_t a = 0; a < r; ++a)
    if (a != r - 2 && in[a] != out[a])
      return Value();
  for (int64_t a = 0; a < r - 2; ++a)
    if (f[a] != in[a])
      return Value();
  return f.back() == in[r - 1] ? rs.getInput() : Value();
}

/// f when `v` is cos(concat(f, f)) (or sin), seen through reshapes; or
/// cos of f repeated along a new axis (twiceAlongNewAxis) that the reshapes
/// merge back.
Value tableSource(Value v, bool wantCos) {
  while (auto r = v.getDefiningOp<ReshapeOp>())
    v = r.getInput();
  Operation *def = v.getDefiningOp();
  if (!def || !(wantCos ? isa<CosOp>(def) : isa<SinOp>(def)))
    return Value();
  // (The caller checks that the table it reads is [..., S, 2h] for f
  // [..., S, h]: the reshapes then merged exactly the [2, h] axes.)
  if (Value f = twiceAlongNewAxis(def->getOperand(0)))
    return f;
  auto cat = def->getOperand(0).getDefiningOp<ConcatOp>();
  if (!cat || cat.getInputs().size() != 2 || cat.getInputs()[0] != cat.getInputs()[1])
    return Value();
  int64_t rank = cat.getType().getRank();
  if ((static_cast<int64_t>(cat.getAxis()) + rank) % rank != rank - 1)
    return Value();
  return cat.getInputs()[0];
}

/// x when `r` is rotate_half(x) = concat(−x[..., h:], x[..., :h]).
Value matchRotateHalf(Value r) {
  auto cat = r.getDefiningOp<ConcatOp>();
  if (!cat || cat.getInputs().size() != 2)
    return Value();
  int64_t rank = MIRBuilder::typeOf(r).getRank();
  if ((static_cast<int64_t>(cat.getAxis()) + rank) % rank != rank - 1)
    return Value();
  auto neg = cat.getInputs()[0].getDefiningOp<NegOp>();
  auto hi = neg ? neg.getInput().getDefiningOp<SliceOp>() : nullptr;
  auto lo = cat.getInputs()[1].getDefiningOp<SliceOp>();
  if (!hi || !lo || hi.getInput() != lo.getInput())
    return Value();
  int64_t d = MIRBuilder::typeOf(r).getShape().back(), h = d / 2;
  auto unit = [&](SliceOp s, int64_t off) {
    for (int64_t a = 0; a < rank; ++a) {
      if (s.getStrides()[a] != 1)
        return false;
      if (a == rank - 1)
        return s.getOffsets()[a] == off && s.getType().getShape()[a] == h;
      if (s.getOffsets()[a] != 0 || s.getType().getShape()[a] != s.getInput().getType().getShape()[a])
        return false;
    }
    return true;
  };
  return unit(hi, h) && unit(lo, 0) ? lo.getInput() : Value();
}

/// x·cos + rotate_half(x)·sin on heads [B, H, S, D] split from a packed
/// [B, S, H·D] projection → the split of rope(projection) (tables [S, D/2]).
struct RopeFromPrimitives : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      auto m1 = op->getOperand(i).getDefiningOp<MulOp>();
      auto m2 = op->getOperand(1 - i).getDefiningOp<MulOp>();
      if (!m1 || !m2)
        continue;
      for (unsigned a = 0; a < 2; ++a)
        for (unsigned b = 0; b < 2; ++b) {
          Value x = m1->getOperand(a), cosF = m1->getOperand(1 - a);
          Value rot = m2->getOperand(b), sinF = m2->getOperand(1 - b);
          if (matchRotateHalf(rot) != x)
            continue;
          Value f = tableSource(cosF, true);
          if (!f || tableSource(sinF, false) != f)
            continue;
          if (succeeded(rewrite(op, x, f, {cosF, sinF}, rw)))
            return success();
        }
    }
    return failure();
  }

  /// True when `shape` is [1..., a, b] (leading dims all 1).
  static bool onlyLast2(ArrayRef<int64_t> shape, int64_t a, int64_t b) {
    return shape.size() >= 2 && shape.take_back(2) == ArrayRef<int64_t>{a, b} &&
           llvm::all_of(shape.drop_back(2), [](int64_t d) { return d == 1; });
  }

  static LogicalResult rewrite(AddOp op, Value x, Value f, ArrayRef<Value> tables,
                               PatternRewriter &rw) {
    // x = transpose(reshape(p [B, S, H·D] → [B, S, H, D]), [0, 2, 1, 3]).
    // (Or of heads computed per head first, as Qwen3's q/k norm: then the
    // packed projection is the [B, S, H·D] view of those heads.)
    auto tr = x.getDefiningOp<TransposeOp>();
    auto xt = MIRBuilder::typeOf(x);
    if (!tr || tr.getPermutation() != ArrayRef<int64_t>{0, 2, 1, 3} || op.getType() != xt ||
        !xt.hasStaticShape())
      return failure();
    int64_t b = xt.getShape()[0], h = xt.getShape()[1], s = xt.getShape()[2],
            d = xt.getShape()[3];
    Value heads4 = tr.getInput();
    if (MIRBuilder::shapeOf(heads4) != ArrayRef<int64_t>{b, s, h, d} || d % 2 != 0)
      return failure();
    auto rs = heads4.getDefiningOp<ReshapeOp>();
    bool packedInput =
        rs && MIRBuilder::typeOf(rs.getInput()).getShape() == ArrayRef<int64_t>{b, s, h * d};
    // Tables shared by batch and heads: cos/sin read as [1..., S, D] against
    // x's [B, H, S, D], computed from f [1..., S, D/2].
    for (Value t : tables)
      if (!onlyLast2(MIRBuilder::shapeOf(t), s, d))
        return failure();
    auto ft = MIRBuilder::typeOf(f);
    if (!onlyLast2(ft.getShape(), s, d / 2))
      return failure();
    MIRBuilder mb(rw, op.getLoc());
    Value f2 = ft.getRank() == 2 ? f : mb.reshape(f, {s, d / 2});
    Value cos = mb.unary<CosOp>(f2), sin = mb.unary<SinOp>(f2);
    Value packed = packedInput ? rs.getInput() : mb.reshape(heads4, {b, s, h * d});
    Value r = mb.create<RopeOp>(packed, cos, sin, rw.getI64IntegerAttr(d), IntegerAttr(),
                                RopeStyleAttr::get(rw.getContext(), RopeStyle::NeoX));
    Value heads = mb.reshape(r, {b, s, h, d});
    return replaceWithBuilt(rw, op, mb, mb.transpose(heads, {0, 2, 1, 3}));
  }
};

/// The perm that swaps the last two axes.
bool swapsLastTwo(ArrayRef<int64_t> perm) {
  int64_t n = perm.size();
  for (int64_t i = 0; i < n - 2; ++i)
    if (perm[i] != i)
      return false;
  return n >= 2 && perm[n - 2] == n - 1 && perm[n - 1] == n - 2;
}

/// matmul(a, transpose(b)) → matmul(a, b, transpose_b) (and for a);
/// matmul(a, reshape(w [K, N] → [1, K, N])) → matmul(a, w), and the same for
/// a constant w of shape [1, K, N].
struct MatmulOperands : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rw) const override {
    Value a = op.getLhs(), b = op.getRhs();
    bool ta = op.getTransposeA(), tb = op.getTransposeB();
    bool changed = false;
    if (auto r = b.getDefiningOp<ReshapeOp>()) {
      auto in = MIRBuilder::typeOf(r.getInput());
      ArrayRef<int64_t> out = r.getType().getShape();
      if (in.getRank() == 2 && out.size() > 2 &&
          llvm::all_of(out.drop_back(2), [](int64_t d) { return d == 1; }) &&
          out.take_back(2) == in.getShape() &&
          MIRBuilder::typeOf(a).getRank() >= static_cast<int64_t>(out.size())) {
        b = r.getInput();
        changed = true;
      }
    }
    // A weight frozen as a constant already shaped [1, K, N] (torch-mlir's
    // TOSA): its [K, N] view, which folds into a constant of that shape.
    if (auto c = b.getDefiningOp<ConstantOp>()) {
      auto ct = MIRBuilder::typeOf(b);
      ArrayRef<int64_t> cs = ct.getShape();
      if (ct.getRank() > 2 && ct.hasStaticShape() &&
          llvm::all_of(cs.drop_back(2), [](int64_t d) { return d == 1; }) &&
          MIRBuilder::typeOf(a).getRank() >= ct.getRank()) {
        b = MIRBuilder(rw, op.getLoc()).reshape(b, {cs[cs.size() - 2], cs.back()});
        changed = true;
      }
    }
    if (auto t = b.getDefiningOp<TransposeOp>(); t && swapsLastTwo(t.getPermutation())) {
      b = t.getInput();
      tb = !tb;
      changed = true;
    } else if (t && t.getPermutation() == ArrayRef<int64_t>{0, 2, 3, 1}) {
      // kᵀ straight from [B, S, H, D] (GPT-2): the head split, then the
      // swap as transpose_b.
      b = MIRBuilder(rw, op.getLoc()).transpose(t.getInput(), {0, 2, 1, 3});
      tb = !tb;
      changed = true;
    }
    if (auto t = a.getDefiningOp<TransposeOp>(); t && swapsLastTwo(t.getPermutation())) {
      a = t.getInput();
      ta = !ta;
      changed = true;
    }
    if (!changed)
      return failure();
    auto mm = MatmulOp::create(rw, op.getLoc(), a, b, ta, tb);
    if (mm.getType() != op.getType()) {
      // Undo: the matmul and any view made for it above.
      rw.eraseOp(mm);
      for (Value v : {b, a})
        if (Operation *def = v.getDefiningOp();
            def && def->use_empty() && isa<ReshapeOp, TransposeOp>(def))
          rw.eraseOp(def);
      return failure();
    }
    rw.replaceOp(op, mm);
    return success();
  }
};

/// The splat scalar `c` (all dims 1) when `v` is mul(x, c) or mul(c, x) of
/// x's type; x goes to `x`.
static std::optional<double> scaledBy(Value v, Value &x) {
  auto mul = v.getDefiningOp<MulOp>();
  if (!mul)
    return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    double c;
    Value other = mul->getOperand(1 - i);
    if (matchSplat(other, c) && mul->getOperand(i).getType() == mul.getType() &&
        llvm::all_of(MIRBuilder::shapeOf(other), [](int64_t d) { return d == 1; })) {
      x = mul->getOperand(i);
      return c;
    }
  }
  return std::nullopt;
}

/// matmul(a·c1, b·c2) → matmul(a, b)·(c1·c2) for splat scalars: SDPA's
/// decomposition scales q and kᵀ each by (1/√D)^½; attention recognition
/// wants one scale on the scores.
struct MatmulScaledOperands : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rw) const override {
    Value a = op.getLhs(), b = op.getRhs();
    auto ca = scaledBy(a, a), cb = scaledBy(b, b);
    if (!ca && !cb)
      return failure();
    // Not for f16: the split scale keeps f16 scores in range (PyTorch's
    // reason for it), and the product of two small scales may underflow.
    auto et = op.getType().getElementType();
    if (!et.isF32() && !et.isF64() && !et.isBF16())
      return failure();
    auto mm = MatmulOp::create(rw, op.getLoc(), a, b, op.getTransposeA(), op.getTransposeB());
    if (mm.getType() != op.getType()) {
      rw.eraseOp(mm);
      return failure();
    }
    double c = ca.value_or(1.0) * cb.value_or(1.0);
    auto ct = RankedTensorType::get(SmallVector<int64_t>(op.getType().getRank(), 1), et);
    Value scale = ConstantOp::create(rw, op.getLoc(), DenseElementsAttr::get(
                      ct, rw.getFloatAttr(et, c).getValue()));
    rw.replaceOpWithNewOp<MulOp>(op, mm.getResult(), scale);
    return success();
  }
};

/// mul(mul(x, c1), c2) → mul(x, c1·c2) for splat scalars (one use of the
/// inner mul): the two halves of SDPA's split scale become one.
struct MergeScalarMuls : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rw) const override {
    Value inner, x;
    auto c2 = scaledBy(op.getResult(), inner);
    if (!c2 || !inner.hasOneUse())
      return failure();
    auto c1 = scaledBy(inner, x);
    auto et = op.getType().getElementType();
    if (!c1 || (!et.isF32() && !et.isF64() && !et.isBF16()))
      return failure();
    auto ct = RankedTensorType::get(SmallVector<int64_t>(op.getType().getRank(), 1), et);
    Value scale = ConstantOp::create(rw, op.getLoc(), DenseElementsAttr::get(
                      ct, rw.getFloatAttr(et, *c1 * *c2).getValue()));
    rw.replaceOpWithNewOp<MulOp>(op, x, scale);
    return success();
  }
};

/// reshape(matmul(reshape(a → [B·H, M, K]), reshape(b → [B·H, K, N])) →
/// [B, H, M, N]) → matmul(a', b') with a', b' the [B, H, ., .] views of the
/// operands: the 4-D matmul TOSA splits into 3-D.
struct MatmulBatchDims : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rw) const override {
    auto mm = op.getInput().getDefiningOp<MatmulOp>();
    if (!mm || !mm->hasOneUse() || mm.getType().getRank() != 3)
      return failure();
    auto out = op.getType();
    auto ra = mm.getLhs().getDefiningOp<ReshapeOp>();
    auto rb = mm.getRhs().getDefiningOp<ReshapeOp>();
    if (!ra || !rb || out.getRank() < 4 || !out.hasStaticShape() ||
        out.getShape().take_back(2) != mm.getType().getShape().take_back(2))
      return failure();
    // The operands' own batch dims must be the output's (no other split).
    auto viewOf = [&](ReshapeOp r) -> SmallVector<int64_t> {
      SmallVector<int64_t> shape(out.getShape().drop_back(2));
      llvm::append_range(shape, r.getType().getShape().take_back(2));
      return shape;
    };
    // Both operands carry the whole merged batch (no broadcast operand).
    int64_t batch = 1;
    for (int64_t dim : out.getShape().drop_back(2))
      batch *= dim;
    auto source = [&](ReshapeOp r) {
      auto in = MIRBuilder::typeOf(r.getInput());
      return in.hasStaticShape() && r.getType().hasStaticShape() &&
             r.getType().getRank() == 3 && r.getType().getDimSize(0) == batch &&
             in.getNumElements() == r.getType().getNumElements();
    };
    if (!source(ra) || !source(rb))
      return failure();
    MIRBuilder mb(rw, op.getLoc());
    Value a = mb.reshape(ra.getInput(), viewOf(ra));
    Value b = mb.reshape(rb.getInput(), viewOf(rb));
    return replaceWithBuilt(rw, op, mb, mb.matmul(a, b, mm.getTransposeA(), mm.getTransposeB()));
  }
};

/// matmul(reshape(x [..., K] → [R, K]), w) → reshape(matmul(x, w) → [R, N]):
/// a linear layer exporters flatten to 2-D rows keeps the rows' shape, and
/// the reshape moves on towards (and cancels against) the one that restores it.
struct MatmulRowDims : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rw) const override {
    auto rows = op.getLhs().getDefiningOp<ReshapeOp>();
    if (!rows || op.getTransposeA() || op.getType().getRank() != 2 ||
        MIRBuilder::typeOf(op.getRhs()).getRank() != 2)
      return failure();
    auto x = MIRBuilder::typeOf(rows.getInput());
    if (x.getRank() < 3 || !x.hasStaticShape())
      return failure();
    // The rows keep x's leading dims; K is x's trailing dims (one, or several
    // merged, as after attention's [B, S, H, D] output).
    int64_t k = rows.getType().getShape().back(), tail = 1, split = x.getRank();
    while (split > 0 && tail < k)
      tail *= x.getShape()[--split];
    if (tail != k || split < 2)
      return failure();
    Value in = rows.getInput();
    if (split != x.getRank() - 1) {
      SmallVector<int64_t> shape(x.getShape().take_front(split));
      shape.push_back(k);
      in = MIRBuilder(rw, op.getLoc()).reshape(in, shape);
    }
    auto full = MatmulOp::create(rw, op.getLoc(), in, op.getRhs(), false, op.getTransposeB());
    rw.replaceOpWithNewOp<ReshapeOp>(op, full.getResult(),
                                     MIRBuilder::pattern(op.getType().getShape()));
    return success();
  }
};

/// Elementwise binary ops on two reshapes of same-shaped values:
/// add(reshape(a), reshape(b)) → reshape(add(a, b)).
struct SinkReshapeBelowBinary : OpInterfaceRewritePattern<ElementwiseOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(ElementwiseOpInterface op, PatternRewriter &rw) const override {
    if (op->getNumOperands() != 2 || op->getNumResults() != 1 || isa<SelectOp>(op))
      return failure();
    auto ra = op->getOperand(0).getDefiningOp<ReshapeOp>();
    auto rb = op->getOperand(1).getDefiningOp<ReshapeOp>();
    if (!ra || !rb || ra.getInput().getType() != rb.getInput().getType() ||
        ra.getType() != rb.getType() || op->getResult(0).getType() != ra.getType())
      return failure();
    Operation *e = rw.clone(*op);
    e->setOperands({ra.getInput(), rb.getInput()});
    e->getResult(0).setType(RankedTensorType::get(ra.getInput().getType().getShape(),
                                                  MIRBuilder::elementType(op->getResult(0))));
    rw.replaceOpWithNewOp<ReshapeOp>(op, e->getResult(0), ra.getShape());
    return success();
  }
};

/// add(reshape(y [..., N] → [R, N]), b) with b [N] or [1, N] (a bias row,
/// possibly broadcast to [R, N] first)
/// → reshape(add(y, b [N]) → [R, N]): a biased linear that the exporter
/// flattened to 2-D rows keeps the rows' shape, so the bias (and RoPE after
/// it) sits on the matmul's own result.
struct SinkRowsReshapeBelowBias : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      auto rows = op->getOperand(i).getDefiningOp<ReshapeOp>();
      Value bias = op->getOperand(1 - i);
      if (!rows || op.getType() != rows.getType() || rows.getType().getRank() != 2)
        continue;
      // linalg-on-tensors broadcasts the row explicitly.
      if (auto bc = bias.getDefiningOp<BroadcastOp>())
        bias = bc.getInput();
      auto y = MIRBuilder::typeOf(rows.getInput());
      ArrayRef<int64_t> bs = MIRBuilder::shapeOf(bias);
      int64_t n = rows.getType().getShape()[1];
      if (y.getRank() < 3 || !y.hasStaticShape() || y.getShape().back() != n ||
          bs.empty() || bs.back() != n ||
          !llvm::all_of(bs.drop_back(), [](int64_t d) { return d == 1; }))
        continue;
      MIRBuilder mb(rw, op.getLoc());
      Value b = bs.size() == 1 ? bias : mb.reshape(bias, {n});
      Value sum = i == 0 ? mb.add(rows.getInput(), b) : mb.add(b, rows.getInput());
      return replaceWithBuilt(rw, op, mb, mb.reshape(sum, MIRBuilder::pattern(op.getType().getShape())));
    }
    return failure();
  }
};

/// u(reshape(x)) → reshape(u(x)) for a unary elementwise u (not cast): the
/// view moves below the math, so elementwise chains (RoPE tables computed in
/// the graph) are of one shape and fuse.
struct SinkReshapeBelowUnary : OpInterfaceRewritePattern<ElementwiseOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(ElementwiseOpInterface op, PatternRewriter &rw) const override {
    if (op->getNumOperands() != 1 || op->getNumResults() != 1 || isa<CastOp>(op))
      return failure();
    auto r = op->getOperand(0).getDefiningOp<ReshapeOp>();
    if (!r)
      return failure();
    Operation *u = rw.clone(*op);
    u->setOperand(0, r.getInput());
    u->getResult(0).setType(RankedTensorType::get(r.getInput().getType().getShape(),
                                                  MIRBuilder::elementType(op->getResult(0))));
    rw.replaceOpWithNewOp<ReshapeOp>(op, u->getResult(0), r.getShape());
    return success();
  }
};

/// reshape(cast(x)) → cast(reshape(x)): the cast moves next to its consumer.
struct HoistReshapeAboveCast : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rw) const override {
    auto c = op.getInput().getDefiningOp<CastOp>();
    if (!c || !c->hasOneUse())
      return failure();
    MIRBuilder mb(rw, op.getLoc());
    return replaceWithBuilt(
        rw, op, mb, mb.cast(mb.reshape(c.getInput(), op.getShape()), op.getType().getElementType()));
  }
};

struct MIRRecognizeBlocksPass
    : mir::impl::MIRRecognizeBlocksBase<MIRRecognizeBlocksPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateBlockRecognitionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::rlx::mir::populateBlockRecognitionPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<RmsNormFromPrimitives, RmsNormWeight, LayerNormFromPrimitives,
               LayerNormAffine<MulOp>, LayerNormAffine<AddOp>, GeluTanhFromPrimitives, Softmax<DivOp>, Softmax<MulOp>,
               SigmoidFromDiv, SigmoidFromReciprocal, SiluFromSigmoid, ReluFromMax,
               CausalMaskFromConstant,
               RopeFromPrimitives, MatmulOperands, MatmulScaledOperands, MergeScalarMuls, MatmulBatchDims, MatmulRowDims,
               SinkReshapeBelowUnary, SinkReshapeBelowBinary, SinkRowsReshapeBelowBias,
               HoistReshapeAboveCast>(ctx);
  ReshapeOp::getCanonicalizationPatterns(patterns, ctx);
  TransposeOp::getCanonicalizationPatterns(patterns, ctx);
  populateQuantRecognitionPatterns(patterns);
}
