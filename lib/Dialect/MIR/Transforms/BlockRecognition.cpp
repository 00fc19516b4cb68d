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
      if (auto mx = sub.getRhs().template getDefiningOp<ReduceOp>())
        if (mx.getKind() == ReduceKind::Max && mx.getKeepDims() && mx.getInput() == sub.getLhs() &&
            isAxis(mx, axis))
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

/// f when `v` is cos(concat(f, f)) (or sin), seen through reshapes.
Value tableSource(Value v, bool wantCos) {
  while (auto r = v.getDefiningOp<ReshapeOp>())
    v = r.getInput();
  Operation *def = v.getDefiningOp();
  if (!def || !(wantCos ? isa<CosOp>(def) : isa<SinOp>(def)))
    return Value();
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
    auto tr = x.getDefiningOp<TransposeOp>();
    auto rs = tr ? tr.getInput().getDefiningOp<ReshapeOp>() : nullptr;
    auto xt = MIRBuilder::typeOf(x);
    if (!tr || tr.getPermutation() != ArrayRef<int64_t>{0, 2, 1, 3} || !rs ||
        op.getType() != xt || !xt.hasStaticShape())
      return failure();
    int64_t b = xt.getShape()[0], h = xt.getShape()[1], s = xt.getShape()[2],
            d = xt.getShape()[3];
    if (MIRBuilder::typeOf(rs.getInput()).getShape() != ArrayRef<int64_t>{b, s, h * d} ||
        rs.getType().getShape() != ArrayRef<int64_t>{b, s, h, d} || d % 2 != 0)
      return failure();
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
    Value r = mb.create<RopeOp>(rs.getInput(), cos, sin, rw.getI64IntegerAttr(d), IntegerAttr(),
                                RopeStyleAttr::get(rw.getContext(), RopeStyle::NeoX));
    Value heads = mb.reshape(r, MIRBuilder::pattern(rs.getType().getShape()));
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
/// matmul(a, reshape(w [K, N] → [1, K, N])) → matmul(a, w).
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
    if (auto t = b.getDefiningOp<TransposeOp>(); t && swapsLastTwo(t.getPermutation())) {
      b = t.getInput();
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
      rw.eraseOp(mm);
      return failure();
    }
    rw.replaceOp(op, mm);
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
    if (x.getRank() < 3 || !x.hasStaticShape() ||
        x.getShape().back() != rows.getType().getShape().back())
      return failure();
    auto full = MatmulOp::create(rw, op.getLoc(), rows.getInput(), op.getRhs(), false,
                                 op.getTransposeB());
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
  patterns.add<RmsNormFromPrimitives, RmsNormWeight, Softmax<DivOp>, Softmax<MulOp>,
               SigmoidFromDiv, SigmoidFromReciprocal, SiluFromSigmoid, CausalMaskFromConstant,
               RopeFromPrimitives, MatmulOperands, MatmulBatchDims, MatmulRowDims,
               SinkReshapeBelowUnary, SinkReshapeBelowBinary,
               HoistReshapeAboveCast>(ctx);
  ReshapeOp::getCanonicalizationPatterns(patterns, ctx);
  TransposeOp::getCanonicalizationPatterns(patterns, ctx);
}
