//===- GradRules.cpp - Reverse-mode rules of the primitive MIR ops ---------===//
//
// One vector-Jacobian product per op; docs/autodiff.md lists what each
// reads from the forward pass. Operand gradients may have the shape the
// operand was broadcast to; the caller (rlx-mir-grad) sums them down.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

bool isStatic(Value v) { return MIRBuilder::typeOf(v).hasStaticShape(); }

Value reduce(MIRBuilder &mb, ReduceKind kind, Value x, ArrayRef<int64_t> axes, bool keep) {
  return mb.reduce(kind, x, axes, keep);
}

/// A scalar-body elementwise op over `ins` (same shape or broadcastable) with
/// one result of `resultType`; `body` gets the scalar block arguments.
Value elementwise(MIRBuilder &mb, ValueRange ins, RankedTensorType resultType,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  if (mb.failed() || anyNullValue(ins))
    return mb.fail();
  OpBuilder &b = mb.builder();
  auto op = FusedElementwiseOp::create(b, mb.getLoc(), TypeRange{resultType}, ins);
  OpBuilder::InsertionGuard guard(b);
  Block *block = b.createBlock(&op.getBody());
  for (Value in : ins)
    block->addArgument(MIRBuilder::elementType(in), mb.getLoc());
  Value r = body(b, mb.getLoc(), block->getArguments());
  YieldOp::create(b, mb.getLoc(), ValueRange{r});
  return op.getResult(0);
}

/// select(cmp(a, b), dy, 0) elementwise: the gradient that flows where the
/// comparison holds.
Value gradWhere(MIRBuilder &mb, arith::CmpFPredicate pred, Value a, Value bVal, Value dy) {
  auto t = MIRBuilder::typeOf(dy);
  return elementwise(mb, {a, bVal, dy}, t, [&](OpBuilder &b, Location l, ValueRange s) -> Value {
    Value c = arith::CmpFOp::create(b, l, pred, s[0], s[1]);
    Value zero = arith::ConstantOp::create(b, l, b.getFloatAttr(s[2].getType(), 0.0));
    return arith::SelectOp::create(b, l, c, s[2], zero);
  });
}

Value scalarLike(MIRBuilder &mb, Value like, double v) {
  return mb.scalar(MIRBuilder::elementType(like), v);
}

/// d/dx of the activation `op` at x (y its output), times dy.
Value unaryVjp(MIRBuilder &mb, Operation *op, Value x, Value y, Value dy) {
  auto c = [&](double v) { return scalarLike(mb, x, v); };
  if (isa<NegOp>(op))
    return mb.unary<NegOp>(dy);
  if (isa<ExpOp>(op))
    return mb.mul(dy, y);
  if (isa<LogOp>(op))
    return mb.div(dy, x);
  if (isa<SqrtOp>(op))
    return mb.div(mb.mul(dy, c(0.5)), y);
  if (isa<RsqrtOp>(op)) // d x^-1/2 = -1/2 · y³
    return mb.mul(dy, mb.mul(c(-0.5), mb.mul(y, mb.mul(y, y))));
  if (isa<ReciprocalOp>(op))
    return mb.unary<NegOp>(mb.mul(dy, mb.mul(y, y)));
  if (isa<TanhOp>(op))
    return mb.mul(dy, mb.sub(c(1.0), mb.mul(y, y)));
  if (isa<SigmoidOp>(op))
    return mb.mul(dy, mb.mul(y, mb.sub(c(1.0), y)));
  if (isa<SiluOp>(op)) { // s · (1 + x · (1 − s))
    Value s = mb.unary<SigmoidOp>(x);
    return mb.mul(dy, mb.mul(s, mb.add(c(1.0), mb.mul(x, mb.sub(c(1.0), s)))));
  }
  if (isa<GeluOp>(op)) { // Φ(x) + x·φ(x)
    Value cdf = mb.mul(c(0.5), mb.add(c(1.0), mb.unary<ErfOp>(mb.mul(x, c(M_SQRT1_2)))));
    Value pdf = mb.mul(c(0.5 * M_2_SQRTPI * M_SQRT1_2),
                       mb.unary<ExpOp>(mb.mul(c(-0.5), mb.mul(x, x))));
    return mb.mul(dy, mb.add(cdf, mb.mul(x, pdf)));
  }
  if (isa<GeluTanhOp>(op)) {
    double k = std::sqrt(2.0 / M_PI), a = 0.044715;
    Value x2 = mb.mul(x, x);
    Value t = mb.unary<TanhOp>(mb.mul(c(k), mb.mul(x, mb.add(c(1.0), mb.mul(c(a), x2)))));
    Value dt = mb.mul(mb.sub(c(1.0), mb.mul(t, t)), mb.mul(c(k), mb.add(c(1.0), mb.mul(c(3 * a), x2))));
    Value d = mb.add(mb.mul(c(0.5), mb.add(c(1.0), t)), mb.mul(c(0.5), mb.mul(x, dt)));
    return mb.mul(dy, d);
  }
  if (isa<ReluOp>(op))
    return gradWhere(mb, arith::CmpFPredicate::OGT, x, c(0.0), dy);
  if (isa<ErfOp>(op))
    return mb.mul(dy, mb.mul(c(M_2_SQRTPI), mb.unary<ExpOp>(mb.unary<NegOp>(mb.mul(x, x)))));
  if (isa<SinOp>(op))
    return mb.mul(dy, mb.unary<CosOp>(x));
  if (isa<CosOp>(op))
    return mb.unary<NegOp>(mb.mul(dy, mb.unary<SinOp>(x)));
  if (isa<AbsOp>(op))
    return mb.sub(gradWhere(mb, arith::CmpFPredicate::OGT, x, c(0.0), dy),
                  gradWhere(mb, arith::CmpFPredicate::OLT, x, c(0.0), dy));
  return Value();
}

/// The reduced axes of a reduce op, non-negative and sorted.
SmallVector<int64_t> reducedAxes(ReduceOp op) {
  int64_t rank = op.getInput().getType().getRank();
  SmallVector<int64_t> axes;
  for (int64_t a : op.getAxes())
    axes.push_back(a < 0 ? a + rank : a);
  llvm::sort(axes);
  return axes;
}

LogicalResult noRule(Operation *op, StringRef why = "") {
  auto d = op->emitError("rlx-mir-grad: no reverse-mode rule for '") << op->getName() << "'";
  if (!why.empty())
    d << ": " << why;
  return failure();
}

} // namespace

Value mlir::rlx::mir::ad::zerosLike(MIRBuilder &mb, Value like) {
  if (!like)
    return mb.fail();
  auto t = MIRBuilder::typeOf(like);
  if (t.hasStaticShape())
    return ConstantOp::create(mb.builder(), mb.getLoc(),
                              DenseElementsAttr::get(t, mb.builder().getFloatAttr(t.getElementType(), 0.0)));
  return mb.mul(like, scalarLike(mb, like, 0.0));
}

Value mlir::rlx::mir::ad::sumTo(MIRBuilder &mb, Value g, RankedTensorType target) {
  if (!g)
    return mb.fail();
  auto gt = MIRBuilder::typeOf(g);
  if (gt == target)
    return g;
  int64_t lead = gt.getRank() - target.getRank();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < gt.getRank(); ++d) {
    if (d < lead) {
      axes.push_back(d);
      continue;
    }
    int64_t want = target.getDimSize(d - lead), have = gt.getDimSize(d);
    if (want == 1 && have != 1)
      axes.push_back(d);
  }
  Value r = axes.empty() ? g : reduce(mb, ReduceKind::Sum, g, axes, /*keep=*/true);
  if (!r)
    return r;
  if (MIRBuilder::typeOf(r).getShape() != target.getShape())
    r = mb.reshape(r, MIRBuilder::pattern(target.getShape()));
  return r;
}

LogicalResult mlir::rlx::mir::ad::vjp(MIRBuilder &mb, Operation *op, Value dy,
                                      ArrayRef<bool> need, SmallVectorImpl<Value> &dx) {
  dx.assign(op->getNumOperands(), Value());
  auto want = [&](unsigned i) { return i < need.size() && need[i]; };
  Value y = op->getNumResults() ? op->getResult(0) : Value();

  if (isa<AddOp>(op)) {
    dx[0] = dy;
    dx[1] = dy;
    return success();
  }
  if (isa<SubOp>(op)) {
    dx[0] = dy;
    if (want(1))
      dx[1] = mb.unary<NegOp>(dy);
    return success();
  }
  if (auto m = dyn_cast<MulOp>(op)) {
    if (want(0))
      dx[0] = mb.mul(dy, m.getRhs());
    if (want(1))
      dx[1] = mb.mul(dy, m.getLhs());
    return success();
  }
  if (auto d = dyn_cast<DivOp>(op)) {
    if (want(0))
      dx[0] = mb.div(dy, d.getRhs());
    if (want(1)) // −dy · lhs / rhs² = −dy · y / rhs
      dx[1] = mb.unary<NegOp>(mb.div(mb.mul(dy, y), d.getRhs()));
    return success();
  }
  if (isa<MaxOp, MinOp>(op)) {
    // Ties send the gradient to the left operand (as torch.maximum's split
    // is not defined here either way).
    auto pa = isa<MaxOp>(op) ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE;
    auto pb = isa<MaxOp>(op) ? arith::CmpFPredicate::OLT : arith::CmpFPredicate::OGT;
    if (want(0))
      dx[0] = gradWhere(mb, pa, op->getOperand(0), op->getOperand(1), dy);
    if (want(1))
      dx[1] = gradWhere(mb, pb, op->getOperand(0), op->getOperand(1), dy);
    return success();
  }
  if (auto p = dyn_cast<PowOp>(op)) {
    Value a = p.getLhs(), e = p.getRhs();
    if (want(0)) { // e · a^(e−1)
      Value em1 = mb.sub(e, scalarLike(mb, e, 1.0));
      dx[0] = mb.mul(dy, mb.mul(e, mb.create<PowOp>(a, em1)));
    }
    if (want(1)) // y · log(a)
      dx[1] = mb.mul(dy, mb.mul(y, mb.unary<LogOp>(a)));
    return success();
  }
  if (op->getNumOperands() == 1 && isa<ElementwiseOpInterface>(op) && !isa<CastOp>(op)) {
    Value r = unaryVjp(mb, op, op->getOperand(0), y, dy);
    if (!r)
      return noRule(op);
    dx[0] = r;
    return success();
  }
  if (auto c = dyn_cast<CastOp>(op)) {
    Type et = MIRBuilder::elementType(c.getInput());
    if (!isa<FloatType>(et))
      return success();
    dx[0] = mb.cast(dy, et);
    return success();
  }
  if (auto m = dyn_cast<MatmulOp>(op)) {
    Value a = m.getLhs(), b = m.getRhs();
    bool ta = m.getTransposeA(), tb = m.getTransposeB();
    if (want(0))
      dx[0] = !ta ? mb.matmul(dy, b, false, !tb) : mb.matmul(b, dy, tb, true);
    if (want(1)) {
      // A weight shared by all rows of a batched lhs (a linear layer): fold
      // the batch into the rows so the gradient comes out 2-D, not as
      // per-batch products summed afterwards.
      if (MIRBuilder::typeOf(b).getRank() == 2 && MIRBuilder::typeOf(a).getRank() > 2 && !ta) {
        auto rows = [&](Value v) {
          int64_t cols = MIRBuilder::shapeOf(v).back();
          return mb.reshape(v, {MIRBuilder::typeOf(v).hasStaticShape()
                                    ? MIRBuilder::typeOf(v).getNumElements() / cols
                                    : -1,
                                cols});
        };
        a = rows(a);
        dy = rows(dy);
      }
      dx[1] = !tb ? mb.matmul(a, dy, !ta, false) : mb.matmul(dy, a, true, ta);
    }
    return success();
  }
  if (auto r = dyn_cast<ReduceOp>(op)) {
    if (r.getKind() != ReduceKind::Sum && r.getKind() != ReduceKind::Mean)
      return noRule(op, "only sum and mean reductions are differentiated");
    auto in = r.getInput().getType();
    SmallVector<int64_t> axes = reducedAxes(r);
    Value g = dy;
    if (!r.getKeepDims()) {
      SmallVector<int64_t> kept = MIRBuilder::pattern(in.getShape());
      for (int64_t a : axes)
        kept[a] = 1;
      g = mb.reshape(g, kept);
    }
    g = mb.broadcast(g, MIRBuilder::pattern(in.getShape()));
    if (r.getKind() == ReduceKind::Mean) {
      int64_t count = 1;
      for (int64_t a : axes) {
        if (in.isDynamicDim(a))
          return noRule(op, "a mean over a dynamic axis; bind the dims first (rlx-mir-specialize)");
        count *= in.getDimSize(a);
      }
      g = mb.mul(g, scalarLike(mb, dy, 1.0 / static_cast<double>(count)));
    }
    dx[0] = g;
    return success();
  }
  if (auto s = dyn_cast<SoftmaxOp>(op)) { // y · (dy − Σ dy·y)
    auto axis = static_cast<int64_t>(s.getAxis());
    Value dot = reduce(mb, ReduceKind::Sum, mb.mul(dy, y), {axis}, true);
    dx[0] = mb.mul(y, mb.sub(dy, dot));
    return success();
  }
  if (auto r = dyn_cast<RopeOp>(op)) {
    // A rotation per pair: its transpose rotates by the opposite angle.
    if (want(1) || want(2))
      return noRule(op, "the cos/sin tables are not differentiated");
    dx[0] = mb.create<RopeOp>(dy, r.getCos(), mb.unary<NegOp>(r.getSin()), r.getHeadDimAttr(),
                              r.getRotaryDimAttr(), r.getStyleAttr());
    return success();
  }
  if (auto c = dyn_cast<CausalMaskOp>(op)) {
    // Masked entries (−inf) get no gradient: dy · exp(mask(0)).
    Value keep =
        mb.unary<ExpOp>(mb.create<CausalMaskOp>(zerosLike(mb, dy), c.getWindowAttr()));
    dx[0] = mb.mul(dy, keep);
    return success();
  }
  if (auto s = dyn_cast<SelectOp>(op)) {
    Value zero = scalarLike(mb, dy, 0.0);
    if (want(1))
      dx[1] = mb.select(s.getCondition(), dy, zero);
    if (want(2))
      dx[2] = mb.select(s.getCondition(), zero, dy);
    return success();
  }
  if (auto r = dyn_cast<ReshapeOp>(op)) {
    dx[0] = mb.reshape(dy, MIRBuilder::pattern(r.getInput().getType().getShape()));
    return success();
  }
  if (auto t = dyn_cast<TransposeOp>(op)) {
    ArrayRef<int64_t> perm = t.getPermutation();
    SmallVector<int64_t> inv(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      inv[p] = static_cast<int64_t>(i);
    dx[0] = mb.transpose(dy, inv);
    return success();
  }
  if (auto s = dyn_cast<SliceOp>(op)) {
    // Zeros around dy, one axis at a time (unit strides).
    Value x = s.getInput();
    auto xt = s.getInput().getType();
    Value g = dy;
    for (int64_t d = 0; d < xt.getRank(); ++d) {
      if (s.getStrides()[d] != 1)
        return noRule(op, "strided slices are not differentiated");
      if (!g)
        return failure();
      int64_t off = s.getOffsets()[d], size = MIRBuilder::typeOf(g).getDimSize(d);
      int64_t full = xt.getDimSize(d);
      if (off == 0 && size == full && !ShapedType::isDynamic(full))
        continue;
      if (ShapedType::isDynamic(full) || ShapedType::isDynamic(size))
        return noRule(op, "a slice of a dynamic axis; bind the dims first (rlx-mir-specialize)");
      // Zero pieces of g's current shape with axis d resized.
      auto piece = [&](int64_t n) {
        SmallVector<int64_t> shape(MIRBuilder::shapeOf(g));
        shape[d] = n;
        auto t = RankedTensorType::get(shape, xt.getElementType());
        return ConstantOp::create(mb.builder(), mb.getLoc(),
                                  DenseElementsAttr::get(t, mb.builder().getFloatAttr(
                                                                xt.getElementType(), 0.0)))
            .getResult();
      };
      SmallVector<Value> parts;
      if (off > 0)
        parts.push_back(piece(off));
      parts.push_back(g);
      if (full - off - size > 0)
        parts.push_back(piece(full - off - size));
      g = parts.size() == 1 ? g : mb.concat(parts, d);
    }
    (void)x;
    dx[0] = g;
    return success();
  }
  if (auto c = dyn_cast<ConcatOp>(op)) {
    auto axis = static_cast<int64_t>(c.getAxis());
    int64_t rank = MIRBuilder::typeOf(dy).getRank();
    if (axis < 0)
      axis += rank;
    int64_t off = 0;
    for (auto [i, in] : llvm::enumerate(c.getInputs())) {
      int64_t n = MIRBuilder::typeOf(in).getDimSize(axis);
      if (ShapedType::isDynamic(n))
        return noRule(op, "a concat along a dynamic axis; bind the dims first (rlx-mir-specialize)");
      if (want(i)) {
        SmallVector<int64_t> offsets(rank, 0), sizes(rank, -1), strides(rank, 1);
        offsets[axis] = off;
        sizes[axis] = n;
        dx[i] = mb.slice(dy, offsets, sizes, strides);
      }
      off += n;
    }
    return success();
  }
  if (isa<BroadcastOp>(op)) {
    dx[0] = dy; // summed down to the operand's shape by the caller
    return success();
  }
  if (auto g = dyn_cast<GatherOp>(op)) {
    // d table = onehot(ids)ᵀ · dy, the one-hot rows gathered from an identity.
    if (want(0)) {
      auto table = g.getTable().getType();
      int64_t v = table.getDimSize(0);
      if (table.getRank() != 2 || ShapedType::isDynamic(v) || !isStatic(dy))
        return noRule(op, "needs a static 2-D table and static ids");
      // The one-hot rows come from a V×V identity constant.
      constexpr int64_t kMaxOneHotRows = 8192;
      if (v > kMaxOneHotRows)
        return noRule(op, "the embedding gradient builds a V×V one-hot constant; a table of " +
                              std::to_string(v) + " rows is over the " +
                              std::to_string(kMaxOneHotRows) + "-row limit");
      auto et = table.getElementType();
      auto eyeType = RankedTensorType::get({v, v}, et);
      SmallVector<Attribute> eye(v * v, mb.builder().getFloatAttr(et, 0.0));
      for (int64_t i = 0; i < v; ++i)
        eye[i * v + i] = mb.builder().getFloatAttr(et, 1.0);
      Value id = ConstantOp::create(mb.builder(), mb.getLoc(), DenseElementsAttr::get(eyeType, eye));
      Value onehot = mb.create<GatherOp>(id, g.getIndices());
      int64_t n = MIRBuilder::typeOf(g.getIndices()).getNumElements();
      Value oh2 = mb.reshape(onehot, {n, v});
      Value dy2 = mb.reshape(dy, {n, table.getDimSize(1)});
      dx[0] = mb.matmul(oh2, dy2, true, false);
    }
    return success();
  }
  if (isa<ConstantOp>(op))
    return success();
  if (isa<FusedMatmulOp, AttentionOp, RmsNormOp, LayerNormOp, ResidualRmsNormOp,
          FusedElementwiseOp>(op))
    return noRule(op, "unfuse it first (rlx-mir-prepare-for-ad)");
  return noRule(op);
}
