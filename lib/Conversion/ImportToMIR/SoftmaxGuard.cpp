//===- SoftmaxGuard.cpp - Softmax forms: SDPA's guard, log-sum-exp --------===//
//
// PyTorch's SDPA decomposition (what torch-mlir's FX importer writes for HF
// `sdpa` attention) guards rows whose scores are all -inf:
//   p = where(all(s == -inf, dim = -1, keepdim), 0, softmax(s, -1))
// TOSA spells it tosa.equal → tosa.reduce_all → select; linalg-on-tensors as
// three linalg.generic ops (cmpf oeq, andi reduction from a `true` fill,
// arith.select). rlx_mir.softmax already gives 0 on such rows (its contract),
// so the guard is the softmax itself and is dropped; attention recognition
// then sees the plain chain. Only this exact form matches: the compared value
// is the softmax input (or its exact widening), the constant is -inf, the
// reduction runs over the softmax axis, and the selected value is zero.
//
// Also here, the other attention spellings exporters write: softmax through
// log-sum-exp, and GQA's repeat of key/value heads as an add of zeros.
//
//===----------------------------------------------------------------------===//

#include "RLX/Conversion/ImportToMIR/ImportToMIR.h"

#include "ImportUtils.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;
using namespace mlir::rlx::import_detail;

namespace {

/// True when `v` is a splat float constant equal to `want` (any float type,
/// MIR, TOSA or arith constant).
bool isSplatFloat(Value v, double want) {
  FloatAttr f;
  if (matchPattern(v, m_Constant(&f)))
    return f.getValueAsDouble() == want;
  DenseElementsAttr d;
  if (!matchPattern(v, m_Constant(&d)) || !d.isSplat() || !isa<FloatType>(d.getElementType()))
    return false;
  return d.getSplatValue<APFloat>().convertToDouble() == want;
}

/// `v` is `s` or an exact float widening of it (to f32 or f64: every
/// narrower float converts to them exactly).
bool isOrWidens(Value v, Value s) {
  if (v == s)
    return true;
  auto cast = v.getDefiningOp<CastOp>();
  if (!cast || cast.getInput() != s)
    return false;
  auto from = dyn_cast<FloatType>(getElementTypeOrSelf(s.getType()));
  auto to = getElementTypeOrSelf(v.getType());
  return from && (to.isF32() || to.isF64()) && from.getWidth() <= to.getIntOrFloatBitWidth();
}

/// The only op of `g`'s body before its yield, if there is exactly one.
Operation *singleBodyOp(linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  if (body.getOperations().size() != 2)
    return nullptr;
  return &body.front();
}

/// True when all maps of `g` are identities and all loops parallel.
bool isElementwise(linalg::GenericOp g) {
  return llvm::all_of(g.getIteratorTypesArray(),
                      [](utils::IteratorType t) { return t == utils::IteratorType::parallel; }) &&
         llvm::all_of(g.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); });
}

/// `m` == s == -inf elementwise: tosa.equal(s', -inf) or a linalg.generic
/// cmpf oeq of (extf of) its input against -inf, s' being s or its widening.
bool isNegInfTest(Value m, Value s) {
  if (auto eq = m.getDefiningOp<tosa::EqualOp>()) {
    for (unsigned i = 0; i < 2; ++i)
      if (isOrWidens(eq->getOperand(i), s) && isSplatFloat(eq->getOperand(1 - i), -INFINITY))
        return eq.getType() == RankedTensorType::get(
                                   cast<RankedTensorType>(s.getType()).getShape(),
                                   eq.getType().getElementType());
    return false;
  }
  auto g = m.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g->getNumResults() != 1 || !isElementwise(g) ||
      g.getDpsInputs()[0] != s)
    return false;
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto cmp = yield->getOperand(0).getDefiningOp<arith::CmpFOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::OEQ)
    return false;
  Value in = body.getArgument(0);
  for (unsigned i = 0; i < 2; ++i) {
    Value x = cmp->getOperand(i);
    if (auto ext = x.getDefiningOp<arith::ExtFOp>())
      x = ext.getIn();
    if (x == in && isSplatFloat(cmp->getOperand(1 - i), -INFINITY))
      return true;
  }
  return false;
}

/// `c` == all(s == -inf) along `axis` with kept dims.
bool isAllNegInf(Value c, Value s, int64_t axis) {
  auto st = cast<RankedTensorType>(s.getType());
  auto ct = dyn_cast<RankedTensorType>(c.getType());
  if (!ct || ct.getRank() != st.getRank() || ct.getShape()[axis] != 1)
    return false;
  if (auto all = c.getDefiningOp<tosa::ReduceAllOp>())
    return static_cast<int64_t>(all.getAxis()) == axis && isNegInfTest(all.getInput(), s);
  // linalg: andi over `axis` into a fill of true, the output map keeping
  // the axis as 0.
  auto g = c.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g->getNumResults() != 1)
    return false;
  auto fill = g.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  IntegerAttr init;
  if (!fill || !matchPattern(fill.getInputs()[0], m_Constant(&init)) || !init.getValue().isOne())
    return false;
  auto iters = g.getIteratorTypesArray();
  for (auto [i, t] : llvm::enumerate(iters))
    if ((t == utils::IteratorType::reduction) != (static_cast<int64_t>(i) == axis))
      return false;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!maps[0].isIdentity() || maps[1].getNumResults() != st.getRank())
    return false;
  for (int64_t d = 0; d < st.getRank(); ++d) {
    AffineExpr e = maps[1].getResult(d);
    if (d == axis ? e != getAffineConstantExpr(0, g.getContext())
                  : e != getAffineDimExpr(d, g.getContext()))
      return false;
  }
  Operation *op = singleBodyOp(g);
  auto andi = dyn_cast_or_null<arith::AndIOp>(op);
  Block &body = g.getRegion().front();
  if (!andi || !llvm::is_contained(andi->getOperands(), body.getArgument(0)) ||
      !llvm::is_contained(andi->getOperands(), body.getArgument(1)))
    return false;
  return isNegInfTest(g.getDpsInputs()[0], s);
}

/// softmax(s) guarded by where(all(s == -inf), 0, softmax(s)) → softmax(s).
struct DropSoftmaxGuard : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp sm, PatternRewriter &rw) const override {
    Value s = sm.getInput();
    auto st = cast<RankedTensorType>(s.getType());
    int64_t rank = st.getRank();
    int64_t axis = (static_cast<int64_t>(sm.getAxis()) % rank + rank) % rank;
    for (Operation *user : sm->getUsers()) {
      if (user->getNumResults() != 1 || user->getResult(0).getType() != sm.getType())
        continue;
      Value cond, zero;
      if (auto sel = dyn_cast<SelectOp>(user)) {
        if (sel.getOnFalse() != sm.getResult())
          continue;
        cond = sel.getCondition();
        zero = sel.getOnTrue();
      } else if (auto g = dyn_cast<linalg::GenericOp>(user)) {
        // select(in0, in1, in2) with in1/in2/out identity maps, in0 kept dims.
        auto sel = dyn_cast_or_null<arith::SelectOp>(singleBodyOp(g));
        if (!sel || g.getNumDpsInputs() != 3 || g.getDpsInputs()[2] != sm.getResult())
          continue;
        Block &body = g.getRegion().front();
        if (sel.getCondition() != body.getArgument(0) ||
            sel.getTrueValue() != body.getArgument(1) ||
            sel.getFalseValue() != body.getArgument(2))
          continue;
        SmallVector<AffineMap> maps = g.getIndexingMapsArray();
        if (!maps[1].isIdentity() || !maps[2].isIdentity() || !maps[3].isIdentity() ||
            llvm::any_of(g.getIteratorTypesArray(), [](utils::IteratorType t) {
              return t != utils::IteratorType::parallel;
            }))
          continue;
        // in0 is read with the softmax axis held at 0 (its kept unit dim).
        if (maps[0].getNumResults() != rank)
          continue;
        bool keptAxis = true;
        for (int64_t d = 0; d < rank; ++d) {
          AffineExpr e = maps[0].getResult(d);
          keptAxis &= d == axis ? e == getAffineConstantExpr(0, g.getContext())
                                : e == getAffineDimExpr(d, g.getContext());
        }
        if (!keptAxis)
          continue;
        cond = g.getDpsInputs()[0];
        zero = g.getDpsInputs()[1];
      } else {
        continue;
      }
      if (!isSplatFloat(zero, 0.0) || !isAllNegInf(cond, s, axis))
        continue;
      rw.replaceOp(user, sm.getResult());
      return success();
    }
    return failure();
  }
};

/// The log-sum-exp spelling of softmax (buddy-mlir's attention kernels):
///   m = max(s, a, keep);  l = m + log(sum(exp(s - m), a, keep));  exp(s - l)
/// is softmax(s, a); on a row of -inf it gives 0 where this arithmetic gives
/// NaN (rlx_mir.softmax's contract, as for SDPA's guard).
struct SoftmaxFromLogSumExp : OpRewritePattern<ExpOp> {
  using OpRewritePattern::OpRewritePattern;
  static ReduceOp keptReduce(Value v, ReduceKind kind) {
    auto r = v.getDefiningOp<ReduceOp>();
    return r && r.getKind() == kind && r.getKeepDims() && r.getAxes().size() == 1 ? r : nullptr;
  }
  LogicalResult matchAndRewrite(ExpOp op, PatternRewriter &rw) const override {
    auto outer = op.getInput().getDefiningOp<SubOp>();
    auto lse = outer ? outer.getRhs().getDefiningOp<AddOp>() : nullptr;
    if (!lse)
      return failure();
    Value s = outer.getLhs();
    for (unsigned i = 0; i < 2; ++i) {
      ReduceOp max = keptReduce(lse->getOperand(i), ReduceKind::Max);
      auto log = lse->getOperand(1 - i).getDefiningOp<LogOp>();
      ReduceOp sum = log ? keptReduce(log.getInput(), ReduceKind::Sum) : nullptr;
      auto e = sum ? sum.getInput().getDefiningOp<ExpOp>() : nullptr;
      auto inner = e ? e.getInput().getDefiningOp<SubOp>() : nullptr;
      if (!max || !inner || max.getInput() != s || inner.getLhs() != s ||
          inner.getRhs() != max.getResult() || max.getAxes() != sum.getAxes() ||
          op.getType() != s.getType())
        continue;
      return replaceIfSameType(rw, op, tryCreate<SoftmaxOp>(rw, op.getLoc(), /*diagnose=*/false,
                                                            s, max.getAxes()[0]));
    }
    return failure();
  }
};

/// x + zeros of a larger shape is x broadcast to it (exactly, but for the
/// sign of a zero): how buddy-mlir repeats GQA's key/value heads, which
/// attention recognition then sees as the usual repeat.
struct BroadcastFromAddOfZeros : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rw) const override {
    for (unsigned i = 0; i < 2; ++i) {
      Value x = op->getOperand(i);
      if (x.getType() == op.getType() || !isSplatFloat(op->getOperand(1 - i), 0.0) ||
          op->getOperand(1 - i).getType() != op.getType())
        continue;
      auto t = cast<RankedTensorType>(op.getType());
      if (!t.hasStaticShape())
        continue;
      return replaceIfSameType(rw, op, tryCreate<BroadcastOp>(rw, op.getLoc(), /*diagnose=*/false,
                                                              x, t.getShape()));
    }
    return failure();
  }
};

} // namespace

void mlir::rlx::populateSoftmaxGuardPatterns(RewritePatternSet &patterns) {
  patterns.add<DropSoftmaxGuard, SoftmaxFromLogSumExp, BroadcastFromAddOfZeros>(
      patterns.getContext());
}
