//===- MoeOps.cpp - grouped_matmul: shape rule and chain --------------------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

LogicalResult GroupedMatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                Adaptor a, SmallVectorImpl<Type> &out) {
  auto x = getRankedTensor(loc, a.getInput(), "input");
  auto w = getRankedTensor(loc, a.getWeight(), "weight");
  auto ids = getRankedTensor(loc, a.getIds(), "ids");
  if (failed(x) || failed(w) || failed(ids) ||
      failed(checkSameElementType(loc, {*x, *w}, {"input", "weight"})))
    return failure();
  if (x->getRank() != 2 || w->getRank() != 3 || ids->getRank() != 1)
    return shapeError(loc, "grouped_matmul needs input [T, K], weight [E, N, K] and ids [T], "
                           "got " + shapeToString(x->getShape()) + ", " +
                               shapeToString(w->getShape()) + " and " +
                               shapeToString(ids->getShape()));
  if (w->getDimSize(0) == 0)
    return shapeError(loc, "grouped_matmul needs at least one expert, got weight " +
                               shapeToString(w->getShape()));
  if (!dimsMatch(x->getDimSize(1), w->getDimSize(2)))
    return shapeError(loc, "grouped_matmul K is " + Twine(x->getDimSize(1)) +
                               " in the input but " + Twine(w->getDimSize(2)) +
                               " in the weight [E, N, K]");
  if (!dimsMatch(x->getDimSize(0), ids->getDimSize(0)))
    return shapeError(loc, "grouped_matmul needs one expert id per row: " +
                               Twine(x->getDimSize(0)) + " rows, " + Twine(ids->getDimSize(0)) +
                               " ids");
  out.push_back(RankedTensorType::get({x->getDimSize(0), w->getDimSize(1)},
                                      x->getElementType()));
  return success();
}

FailureOr<SmallVector<Value>> GroupedMatmulOp::decompose(MIRBuilder &mb) {
  auto wt = getWeight().getType();
  auto xt = getInput().getType();
  for (ShapedType t : {ShapedType(wt), ShapedType(xt), ShapedType(getIds().getType())})
    if (failed(MIRBuilder::requireStaticShape(*this, t)))
      return failure();
  int64_t e = wt.getDimSize(0), t = xt.getDimSize(0);
  Type et = xt.getElementType();
  Type idType = getIds().getType().getElementType();
  // Every expert on every row: [E, T, N].
  Value all = mb.matmul(getInput(), getWeight(), /*transA=*/false, /*transB=*/true);
  // Each row keeps its expert's product (ids clamped to [0, E), or with
  // zero_out_of_range none kept); a select, so that another expert's inf or
  // NaN does not reach the row.
  bool clamp = !getZeroOutOfRange();
  Value experts = mb.reshape(mb.iota(e, idType), {e, 1, 1});
  Value rowIds = mb.reshape(getIds(), {t, 1});
  int64_t n = wt.getDimSize(1);
  auto picked = mb.elementwise(
      TypeRange{RankedTensorType::get({e, t, n}, et)}, ValueRange{all, experts, rowIds},
      [&](OpBuilder &b, Location loc, ValueRange a) -> SmallVector<Value> {
        Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(idType, 0));
        Value last = arith::ConstantOp::create(b, loc, b.getIntegerAttr(idType, e - 1));
        Value id = clamp ? arith::MinSIOp::create(
                               b, loc, arith::MaxSIOp::create(b, loc, a[2], zero), last)
                         : a[2];
        Value hit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, a[1], id);
        Value none = arith::ConstantOp::create(b, loc, b.getFloatAttr(et, 0.0));
        return {arith::SelectOp::create(b, loc, hit, a[0], none)};
      })[0];
  Value y = mb.reduce(ReduceKind::Sum, picked, {0}, /*keepDims=*/false);
  if (mb.failed() || !y)
    return emitError("grouped_matmul: cannot build its decomposition for these types"),
           failure();
  return SmallVector<Value>{y};
}
