//===- TensorRules.cpp - Derivatives and vmap of matmul, reduce, softmax, ...//
//
// DifferentiableOpInterface and BatchableOpInterface for the non-elementwise
// compute ops: matmul, reduce, softmax, gather, rope, causal_mask and
// constant. docs/autodiff.md lists what each reverse-mode rule reads from
// the forward pass.
//
//===----------------------------------------------------------------------===//

#include "RuleUtils.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;
using namespace mlir::rlx::mir::rules;

namespace {

/// The reduced axes of a reduce op, non-negative and sorted.
SmallVector<int64_t> reducedAxes(ReduceOp op) {
  int64_t rank = op.getInput().getType().getRank();
  SmallVector<int64_t> axes;
  for (int64_t a : op.getAxes())
    axes.push_back(axisFromZero(a, rank));
  llvm::sort(axes);
  return axes;
}

} // namespace

//===----------------------------------------------------------------------===//
// constant
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::vjp(MIRBuilder &, ValueRange, ArrayRef<bool>,
                              SmallVectorImpl<Value> &dx) {
  dx.clear();
  return success();
}
LogicalResult ConstantOp::jvp(MIRBuilder &, ValueRange, SmallVectorImpl<Value> &dy) {
  dy.assign(1, Value());
  return success();
}
LogicalResult ConstantOp::batch(MIRBuilder &, ValueRange, ArrayRef<bool>,
                                SmallVectorImpl<Value> &) {
  return noRule(*this, Mode::Batching, "a constant has no operand to batch");
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool> need,
                            SmallVectorImpl<Value> &dx) {
  dx.assign(2, Value());
  Value dy = firstOf(cotangents);
  if (!dy)
    return success();
  Value a = getLhs(), b = getRhs();
  bool ta = getTransposeA(), tb = getTransposeB();
  if (wants(need, 0))
    dx[0] = !ta ? mb.matmul(dy, b, false, !tb) : mb.matmul(b, dy, tb, true);
  if (wants(need, 1)) {
    // A weight shared by all rows of a batched lhs (a linear layer): fold
    // the batch into the rows so the gradient comes out 2-D, not as
    // per-batch products summed afterwards.
    if (MIRBuilder::typeOf(b).getRank() == 2 && MIRBuilder::typeOf(a).getRank() > 2 && !ta) {
      auto rows = [&](Value v) {
        auto t = MIRBuilder::typeOf(v);
        int64_t cols = t.getShape().back();
        return mb.reshape(v, {t.hasStaticShape() ? t.getNumElements() / cols : -1, cols});
      };
      a = rows(a);
      dy = rows(dy);
    }
    dx[1] = !tb ? mb.matmul(a, dy, !ta, false) : mb.matmul(dy, a, true, ta);
  }
  return done(*this, mb, Mode::Reverse);
}

LogicalResult MatmulOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  bool ta = getTransposeA(), tb = getTransposeB();
  Value l = tangents[0] ? mb.matmul(tangents[0], getRhs(), ta, tb) : Value();
  Value r = tangents[1] ? mb.matmul(getLhs(), tangents[1], ta, tb) : Value();
  dy.assign({l && r ? mb.add(l, r) : (l ? l : r)});
  return done(*this, mb, Mode::Forward);
}

LogicalResult MatmulOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool> batched,
                              SmallVectorImpl<Value> &results) {
  // Batch axes broadcast numpy-style, so a batched operand only needs its
  // batch lined up in front of the result's batch axes.
  int64_t rank = getType().getRank() + 1;
  Value l = batched[0] ? mb.expandAfterLeading(operands[0], rank) : operands[0];
  Value r = batched[1] ? mb.expandAfterLeading(operands[1], rank) : operands[1];
  return single(*this, mb, mb.matmul(l, r, getTransposeA(), getTransposeB()), Mode::Batching,
                results);
}

//===----------------------------------------------------------------------===//
// reduce
//===----------------------------------------------------------------------===//

/// `v` (the reduction's result or its cotangent) broadcast back over the
/// reduced axes of `op`'s input.
static Value overInput(MIRBuilder &mb, ReduceOp op, Value v) {
  auto in = op.getInput().getType();
  if (!op.getKeepDims()) {
    SmallVector<int64_t> kept = MIRBuilder::pattern(in.getShape());
    for (int64_t a : reducedAxes(op))
      kept[a] = 1;
    v = mb.reshape(v, kept);
  }
  return mb.broadcast(v, MIRBuilder::pattern(in.getShape()));
}

/// max/min: the share of each input element in the result, 1/ties where
/// it attains it, else 0 (torch.amax/amin's gradient: ties split evenly).
static Value extremumShare(MIRBuilder &mb, ReduceOp op) {
  auto in = op.getInput().getType();
  Value hit = mb.elementwise(
      TypeRange{in}, ValueRange{op.getInput(), overInput(mb, op, op.getResult())},
      [&](OpBuilder &b, Location loc, ValueRange x) -> SmallVector<Value> {
        Type et = x[0].getType();
        Value eq = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x[0], x[1]);
        Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(et, 1.0));
        Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(et, 0.0));
        return {arith::SelectOp::create(b, loc, eq, one, zero)};
      })[0];
  Value ties = mb.broadcast(mb.reduce(ReduceKind::Sum, hit, reducedAxes(op), /*keepDims=*/true),
                            MIRBuilder::pattern(in.getShape()));
  return mb.div(hit, ties);
}

LogicalResult ReduceOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool>,
                            SmallVectorImpl<Value> &dx) {
  dx.assign(1, Value());
  Value dy = firstOf(cotangents);
  if (!dy)
    return success();
  if (getKind() == ReduceKind::Prod)
    return noRule(*this, Mode::Reverse, "prod reductions are not differentiated");
  auto in = getInput().getType();
  SmallVector<int64_t> axes = reducedAxes(*this);
  Value g = overInput(mb, *this, dy);
  if (getKind() == ReduceKind::Max || getKind() == ReduceKind::Min) {
    dx[0] = mb.mul(g, extremumShare(mb, *this));
    return done(*this, mb, Mode::Reverse);
  }
  if (getKind() == ReduceKind::Mean) {
    int64_t count = 1;
    for (int64_t a : axes) {
      if (in.isDynamicDim(a))
        return noRule(*this, Mode::Reverse,
                      "a mean over a dynamic axis; bind the dims first (rlx-mir-specialize)");
      count *= in.getDimSize(a);
    }
    g = mb.mul(g, mb.scalar(in.getElementType(), 1.0 / static_cast<double>(count)));
  }
  dx[0] = g;
  return done(*this, mb, Mode::Reverse);
}

LogicalResult ReduceOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  if (getKind() == ReduceKind::Max || getKind() == ReduceKind::Min) {
    dy.assign({mb.reduce(ReduceKind::Sum, mb.mul(tangents[0], extremumShare(mb, *this)),
                         getAxes(), getKeepDims())});
    return done(*this, mb, Mode::Forward);
  }
  if (getKind() != ReduceKind::Sum && getKind() != ReduceKind::Mean)
    return noRule(*this, Mode::Forward, "prod reductions are not differentiated");
  dy.assign({mb.reduce(getKind(), tangents[0], getAxes(), getKeepDims())});
  return done(*this, mb, Mode::Forward);
}

LogicalResult ReduceOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool>,
                              SmallVectorImpl<Value> &results) {
  SmallVector<int64_t> axes = reducedAxes(*this);
  for (int64_t &a : axes)
    ++a;
  return single(*this, mb, mb.reduce(getKind(), operands[0], axes, getKeepDims()),
                Mode::Batching, results);
}

//===----------------------------------------------------------------------===//
// softmax
//===----------------------------------------------------------------------===//

/// y · (t − Σ t·y) along the softmax axis: the (symmetric) Jacobian of
/// softmax applied to `t`, for both modes.
static Value softmaxJacobian(MIRBuilder &mb, SoftmaxOp op, Value t) {
  auto axis = static_cast<int64_t>(op.getAxis());
  Value y = op.getResult();
  Value dot = mb.reduce(ReduceKind::Sum, mb.mul(t, y), {axis}, /*keepDims=*/true);
  return mb.mul(y, mb.sub(t, dot));
}

LogicalResult SoftmaxOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool>,
                             SmallVectorImpl<Value> &dx) {
  Value dy = firstOf(cotangents);
  dx.assign({dy ? softmaxJacobian(mb, *this, dy) : Value()});
  return done(*this, mb, Mode::Reverse);
}

LogicalResult SoftmaxOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  dy.assign({softmaxJacobian(mb, *this, tangents[0])});
  return done(*this, mb, Mode::Forward);
}

LogicalResult SoftmaxOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool>,
                               SmallVectorImpl<Value> &results) {
  int64_t axis = axisFromZero(static_cast<int64_t>(getAxis()), getType().getRank()) + 1;
  return single(*this, mb, mb.softmax(operands[0], axis), Mode::Batching, results);
}

//===----------------------------------------------------------------------===//
// gather
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool> need,
                            SmallVectorImpl<Value> &dx) {
  // The transpose of a gather: the cotangent's rows added at the ids
  // (repeated ids accumulate; both ops clamp ids the same way).
  dx.assign(2, Value());
  Value dy = firstOf(cotangents);
  if (!dy || !wants(need, 0))
    return success();
  dx[0] = mb.create<ScatterAddOp>(mb.zerosLike(getTable()), getIndices(), dy);
  return done(*this, mb, Mode::Reverse);
}

LogicalResult GatherOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  dy.assign({tangents[0] ? mb.create<GatherOp>(tangents[0], getIndices()) : Value()});
  return done(*this, mb, Mode::Forward);
}

LogicalResult GatherOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool> batched,
                              SmallVectorImpl<Value> &results) {
  if (!batched[0])
    return single(*this, mb, mb.create<GatherOp>(operands[0], operands[1]), Mode::Batching,
                  results);
  // A batched table: one gather from the tables stacked row-wise, entry b's
  // ids (clamped into its own table) moved to rows b·V.
  int64_t n = batchSize(operands, batched);
  auto table = getTable().getType();
  int64_t rows = table.getDimSize(0);
  if (ShapedType::isDynamic(n) || !table.hasStaticShape())
    return noRule(*this, Mode::Batching, "a batched table needs static shapes");
  Value ids = operands[1];
  if (!batched[1]) {
    SmallVector<int64_t> shape{n};
    llvm::append_range(shape, MIRBuilder::pattern(MIRBuilder::shapeOf(ids)));
    ids = mb.broadcast(ids, shape);
  }
  SmallVector<int64_t> flat{n * rows};
  llvm::append_range(flat, table.getShape().drop_front());
  Value r = mb.create<GatherOp>(mb.reshape(operands[0], flat),
                                flattenedBatchIndices(mb, ids, n, rows));
  return single(*this, mb, r, Mode::Batching, results);
}

//===----------------------------------------------------------------------===//
// rope
//===----------------------------------------------------------------------===//

LogicalResult RopeOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool> need,
                          SmallVectorImpl<Value> &dx) {
  dx.assign(3, Value());
  Value dy = firstOf(cotangents);
  if (!dy)
    return success();
  if (wants(need, 1) || wants(need, 2))
    return noRule(*this, Mode::Reverse, "the cos/sin tables are not differentiated");
  // A rotation per pair: its transpose rotates by the opposite angle.
  dx[0] = mb.create<RopeOp>(dy, getCos(), mb.unary<NegOp>(getSin()), getHeadDimAttr(),
                            getRotaryDimAttr(), getStyleAttr());
  return done(*this, mb, Mode::Reverse);
}

LogicalResult RopeOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  if (tangents[1] || tangents[2])
    return noRule(*this, Mode::Forward, "the cos/sin tables are not differentiated");
  dy.assign({mb.create<RopeOp>(tangents[0], getCos(), getSin(), getHeadDimAttr(),
                               getRotaryDimAttr(), getStyleAttr())});
  return done(*this, mb, Mode::Forward);
}

LogicalResult RopeOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool> batched,
                            SmallVectorImpl<Value> &results) {
  // The batch folds into rope's own batch axis: [N, b, S, H] → [N·b, S, H];
  // per-batch tables are stretched to match.
  int64_t n = batchSize(operands, batched);
  auto in = getInput().getType();
  int64_t b = in.getDimSize(0), hidden = in.getDimSize(2);
  if (ShapedType::isDynamic(n) || ShapedType::isDynamic(b) || ShapedType::isDynamic(hidden))
    return noRule(*this, Mode::Batching, "needs static batch and hidden sizes");
  Value x = batched[0] ? operands[0] : mb.broadcast(operands[0], {n, b, -1, hidden});
  x = mb.reshape(x, {n * b, -1, hidden});
  auto table = [&](Value t, bool isBatched) -> Value {
    if (!isBatched && MIRBuilder::typeOf(t).getRank() == 2)
      return t;
    int64_t r = MIRBuilder::shapeOf(t).back();
    Value e = isBatched ? mb.expandAfterLeading(t, 4) : t;
    return mb.reshape(mb.broadcast(e, {n, b, -1, r}), {n * b, -1, r});
  };
  Value y = mb.create<RopeOp>(x, table(operands[1], batched[1]), table(operands[2], batched[2]),
                              getHeadDimAttr(), getRotaryDimAttr(), getStyleAttr());
  return single(*this, mb, mb.reshape(y, {n, b, -1, hidden}), Mode::Batching, results);
}

//===----------------------------------------------------------------------===//
// causal_mask
//===----------------------------------------------------------------------===//

/// t · exp(mask(0)): the tangent (or cotangent) where the entry is visible,
/// zero where it is masked (−inf has no derivative).
static Value maskedLike(MIRBuilder &mb, CausalMaskOp op, Value t) {
  Value keep = mb.unary<ExpOp>(
      mb.create<CausalMaskOp>(mb.zerosLike(t), op.getWindowAttr(), op.getChunked()));
  return mb.mul(t, keep);
}

LogicalResult CausalMaskOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool>,
                                SmallVectorImpl<Value> &dx) {
  Value dy = firstOf(cotangents);
  dx.assign({dy ? maskedLike(mb, *this, dy) : Value()});
  return done(*this, mb, Mode::Reverse);
}

LogicalResult CausalMaskOp::jvp(MIRBuilder &mb, ValueRange tangents,
                                SmallVectorImpl<Value> &dy) {
  dy.assign({maskedLike(mb, *this, tangents[0])});
  return done(*this, mb, Mode::Forward);
}

LogicalResult CausalMaskOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool>,
                                  SmallVectorImpl<Value> &results) {
  return single(*this, mb, mb.create<CausalMaskOp>(operands[0], getWindowAttr(), getChunked()),
                Mode::Batching, results);
}
