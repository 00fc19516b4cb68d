//===- IndexOps.cpp - scatter_add, cumsum and topk: shapes and rules -------===//
//
// The shape rules (inferReturnTypes) and the DifferentiableOpInterface /
// BatchableOpInterface rules of the ops in MIRIndexOps.td.
//
//===----------------------------------------------------------------------===//

#include "RuleUtils.h"

#include "RLX/Dialect/Common/IR/ShapeRules.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;
using namespace mlir::rlx::mir::rules;

//===----------------------------------------------------------------------===//
// scatter_add
//===----------------------------------------------------------------------===//

LogicalResult ScatterAddOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                             Adaptor a, SmallVectorImpl<Type> &out) {
  auto dest = getRankedTensor(loc, a.getDest(), "dest");
  auto ids = getRankedTensor(loc, a.getIndices(), "indices");
  auto upd = getRankedTensor(loc, a.getUpdates(), "updates");
  if (failed(dest) || failed(ids) || failed(upd))
    return failure();
  if (dest->getRank() < 1)
    return shapeError(loc, "scatter_add needs a dest of rank >= 1 [N, D...]");
  if (failed(checkSameElementType(loc, {*dest, *upd}, {"dest", "updates"})))
    return failure();
  SmallVector<int64_t> want(ids->getShape());
  llvm::append_range(want, dest->getShape().drop_front());
  bool ok = static_cast<int64_t>(want.size()) == upd->getRank();
  for (size_t d = 0; ok && d < want.size(); ++d)
    ok = dimsMatch(want[d], upd->getDimSize(d));
  if (!ok)
    return shapeError(loc, "scatter_add updates must be indices.shape + dest.shape[1:] = " +
                               shapeToString(want) + ", got " + shapeToString(upd->getShape()));
  out.push_back(*dest);
  return success();
}

LogicalResult ScatterAddOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool> need,
                                SmallVectorImpl<Value> &dx) {
  // The transpose of a scatter-add is a gather of the cotangent (both clamp
  // indices the same way).
  dx.assign(3, Value());
  Value dy = firstOf(cotangents);
  if (!dy)
    return success();
  if (wants(need, 0))
    dx[0] = dy;
  if (wants(need, 2))
    dx[2] = mb.create<GatherOp>(dy, getIndices());
  return done(*this, mb, Mode::Reverse);
}

LogicalResult ScatterAddOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  Value td = tangents[0], tu = tangents[2];
  if (!tu) {
    dy.assign({td});
    return success();
  }
  dy.assign({mb.create<ScatterAddOp>(td ? td : mb.zerosLike(getDest()), getIndices(), tu)});
  return done(*this, mb, Mode::Forward);
}

LogicalResult ScatterAddOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool> batched,
                                  SmallVectorImpl<Value> &results) {
  // One scatter over the flattened batch: entry b's indices, clamped into
  // its own [0, N) first, move to rows b·N.
  int64_t n = batchSize(operands, batched);
  auto dest = getDest().getType(), ids = getIndices().getType();
  int64_t rows = dest.getDimSize(0);
  if (ShapedType::isDynamic(n) || ShapedType::isDynamic(rows) || !ids.hasStaticShape())
    return noRule(*this, Mode::Batching, "needs a static batch, N and indices");
  auto batchedOf = [&](unsigned i) {
    Value v = operands[i];
    if (batched[i])
      return v;
    SmallVector<int64_t> shape{n};
    llvm::append_range(shape, MIRBuilder::pattern(MIRBuilder::shapeOf(v)));
    return mb.broadcast(v, shape);
  };
  Value d = batchedOf(0), idx = batchedOf(1), u = batchedOf(2);
  idx = flattenedBatchIndices(mb, idx, n, rows);
  int64_t count = n * product(ids.getShape());
  SmallVector<int64_t> rest = MIRBuilder::pattern(dest.getShape().drop_front());
  SmallVector<int64_t> destFlat{n * rows}, updFlat{count};
  destFlat.append(rest);
  updFlat.append(rest);
  Value r = mb.create<ScatterAddOp>(mb.reshape(d, destFlat), mb.reshape(idx, {count}),
                                    mb.reshape(u, updFlat));
  SmallVector<int64_t> back{n, rows};
  back.append(rest);
  return single(*this, mb, mb.reshape(r, back), Mode::Batching, results);
}

//===----------------------------------------------------------------------===//
// cumsum
//===----------------------------------------------------------------------===//

LogicalResult CumsumOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor a,
                                         SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  if (failed(x) || failed(normalizeAxis(loc, a.getAxis(), x->getRank())))
    return failure();
  if (x->getElementType().isInteger(1))
    return shapeError(loc, "cumsum of i1 is not defined here (torch counts in int64): cast first");
  out.push_back(*x);
  return success();
}

int64_t CumsumOp::getNormalizedAxis() {
  return axisFromZero(static_cast<int64_t>(getAxis()), getType().getRank());
}

LogicalResult CumsumOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool>,
                            SmallVectorImpl<Value> &dx) {
  // Each output sums a run of inputs; each input reaches the outputs of the
  // opposite direction's run: the cumsum the other way round.
  Value dy = firstOf(cotangents);
  dx.assign({dy ? mb.create<CumsumOp>(dy, getAxis(), getExclusive(), !getReverse()) : Value()});
  return done(*this, mb, Mode::Reverse);
}

LogicalResult CumsumOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  dy.assign({mb.create<CumsumOp>(tangents[0], getAxis(), getExclusive(), getReverse())});
  return done(*this, mb, Mode::Forward);
}

LogicalResult CumsumOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool>,
                              SmallVectorImpl<Value> &results) {
  return single(*this, mb,
                mb.create<CumsumOp>(operands[0], getNormalizedAxis() + 1, getExclusive(),
                                    getReverse()),
                Mode::Batching, results);
}

//===----------------------------------------------------------------------===//
// topk
//===----------------------------------------------------------------------===//

LogicalResult TopKOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc, Adaptor a,
                                       SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  if (failed(x))
    return failure();
  if (x->getRank() < 1)
    return shapeError(loc, "topk needs an input of rank >= 1");
  int64_t k = a.getK(), n = x->getShape().back();
  if (k < 1 || (!ShapedType::isDynamic(n) && k > n))
    return shapeError(loc, "topk k = " + Twine(k) + " must be in [1, " + Twine(n) +
                               "] (the last axis)");
  SmallVector<int64_t> shape(x->getShape());
  shape.back() = k;
  out.push_back(RankedTensorType::get(shape, x->getElementType()));
  out.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 64)));
  return success();
}

/// The rows of the last axis flattened: indices [..., k] made global into a
/// [R·N] vector. Null unless the shapes are static.
static Value globalIndices(MIRBuilder &mb, TopKOp op) {
  auto x = op.getInput().getType();
  if (!x.hasStaticShape())
    return Value();
  ArrayRef<int64_t> lead = x.getShape().drop_back();
  Value off = rowOffsets(mb, lead, x.getRank(), x.getShape().back(), mb.builder().getI64Type());
  return mb.add(op.getIndices(), off);
}

LogicalResult TopKOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool>,
                          SmallVectorImpl<Value> &dx) {
  // The values' cotangent goes back to the positions they came from.
  dx.assign(1, Value());
  Value dy = firstOf(cotangents);
  if (!dy)
    return success();
  Value ids = globalIndices(mb, *this);
  if (!ids)
    return noRule(*this, Mode::Reverse, "needs static shapes; bind the dims first");
  auto x = getInput().getType();
  int64_t total = x.getNumElements();
  // Rows of one element: dest [R·N, 1], updates ids.shape + [1].
  Value zeros = mb.zerosLike(getInput());
  SmallVector<int64_t> upd(MIRBuilder::shapeOf(dy));
  upd.push_back(1);
  Value g = mb.create<ScatterAddOp>(mb.reshape(zeros, {total, 1}), ids, mb.reshape(dy, upd));
  dx[0] = mb.reshape(g, MIRBuilder::pattern(x.getShape()));
  return done(*this, mb, Mode::Reverse);
}

LogicalResult TopKOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  Value ids = globalIndices(mb, *this);
  if (!ids)
    return noRule(*this, Mode::Forward, "needs static shapes; bind the dims first");
  auto x = getInput().getType();
  Value rows = mb.reshape(tangents[0], {x.getNumElements(), 1});
  Value picked = mb.create<GatherOp>(rows, ids); // [..., k, 1]
  dy.assign({mb.reshape(picked, MIRBuilder::pattern(getValues().getType().getShape())), Value()});
  return done(*this, mb, Mode::Forward);
}

LogicalResult TopKOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool>,
                            SmallVectorImpl<Value> &results) {
  OpBuilder &b = mb.builder();
  auto op = TopKOp::create(b, mb.getLoc(), operands[0], getK());
  results.assign({op.getValues(), op.getIndices()});
  return success();
}
