//===- LinalgBuilders.cpp - Helpers of the MIR→linalg lowering ------------===//

#include "LinalgBuilders.h"

#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::linalg_builders;

Value linalg_builders::empty(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
}

Value linalg_builders::filled(OpBuilder &b, Location loc, RankedTensorType type, double value) {
  Value init = empty(b, loc, type);
  Value v = cFloat(b, loc, type.getElementType(), value);
  return linalg::FillOp::create(b, loc, v, init).getResult(0);
}

Value linalg_builders::cIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value linalg_builders::cFloat(OpBuilder &b, Location loc, Type t, double v) {
  if (isa<FloatType>(t))
    return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
  return arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, static_cast<int64_t>(v)));
}

arith::FastMathFlagsAttr linalg_builders::reductionFlags(MLIRContext *ctx) {
  return arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::reassoc |
                                                arith::FastMathFlags::contract);
}

AffineMap linalg_builders::broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> inShape,
                                        ArrayRef<int64_t> outShape) {
  unsigned lead = outShape.size() - inShape.size();
  SmallVector<AffineExpr> exprs;
  for (unsigned i = 0; i < inShape.size(); ++i) {
    unsigned d = lead + i;
    if (inShape[i] == 1 && outShape[d] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(d, ctx));
  }
  return AffineMap::get(outShape.size(), 0, exprs, ctx);
}

SmallVector<Value> linalg_builders::elementwise(OpBuilder &b, Location loc, ValueRange inputs,
                                                TypeRange resultTypes, BodyFn body) {
  auto outType = cast<RankedTensorType>(resultTypes.front());
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(ctx, tensorTypeOf(in).getShape(), outType.getShape()));
  SmallVector<Value> inits;
  for (Type t : resultTypes) {
    inits.push_back(empty(b, loc, cast<RankedTensorType>(t)));
    maps.push_back(AffineMap::getMultiDimIdentityMap(outType.getRank(), ctx));
  }
  SmallVector<utils::IteratorType> iters(outType.getRank(), utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultTypes, inputs, inits, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> results = body(nb, nloc, args.take_front(inputs.size()));
        linalg::YieldOp::create(nb, nloc, results);
      });
  return SmallVector<Value>(generic.getResults());
}

Value linalg_builders::castTo(OpBuilder &b, Location loc, Value x, Type elementType) {
  auto t = tensorTypeOf(x);
  if (t.getElementType() == elementType)
    return x;
  auto outType = RankedTensorType::get(t.getShape(), elementType);
  return elementwise(b, loc, {x}, {outType},
                     [&](OpBuilder &nb, Location nloc, ValueRange args) -> SmallVector<Value> {
                       return {mir::convertScalar(nb, nloc, args[0], elementType)};
                     })
      .front();
}

Value linalg_builders::reduceLast(
    OpBuilder &b, Location loc, Value x, Type accType, double init,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  auto t = tensorTypeOf(x);
  int64_t rank = t.getRank();
  auto outType = RankedTensorType::get(t.getShape().drop_back(), accType);
  Value acc = filled(b, loc, outType, init);
  MLIRContext *ctx = b.getContext();
  AffineMap in = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap out = AffineMap::getMultiDimIdentityMap(rank, ctx).dropResult(rank - 1);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.back() = utils::IteratorType::reduction;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{outType}, ValueRange{x}, ValueRange{acc}, ArrayRef<AffineMap>{in, out},
      iters, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value elt = mir::convertScalar(nb, nloc, args[0], accType);
        linalg::YieldOp::create(nb, nloc, combine(nb, nloc, args[1], elt));
      });
  return generic.getResult(0);
}

Value linalg_builders::matmul2D(OpBuilder &b, Location loc, Value lhs, Value rhs, bool transB) {
  auto lt = tensorTypeOf(lhs), rt = tensorTypeOf(rhs);
  Type acc = lt.getElementType().getIntOrFloatBitWidth() >= 32 ? lt.getElementType()
                                                               : b.getF32Type();
  int64_t m = lt.getShape()[0];
  int64_t n = transB ? rt.getShape()[0] : rt.getShape()[1];
  auto outType = RankedTensorType::get({m, n}, acc);
  Value init = filled(b, loc, outType, 0.0);
  MLIRContext *ctx = b.getContext();
  AffineExpr dm = getAffineDimExpr(0, ctx), dn = getAffineDimExpr(1, ctx),
             dk = getAffineDimExpr(2, ctx);
  SmallVector<Attribute> maps = {
      AffineMapAttr::get(AffineMap::get(3, 0, {dm, dk}, ctx)),
      AffineMapAttr::get(AffineMap::get(3, 0, transB ? ArrayRef<AffineExpr>{dn, dk}
                                                     : ArrayRef<AffineExpr>{dk, dn},
                                        ctx)),
      AffineMapAttr::get(AffineMap::get(3, 0, {dm, dn}, ctx))};
  auto mm = linalg::MatmulOp::create(
      b, loc, TypeRange{outType}, ValueRange{lhs, rhs}, ValueRange{init},
      ArrayRef<NamedAttribute>{b.getNamedAttr("indexing_maps", b.getArrayAttr(maps))});
  return mm.getResult(0);
}

Value linalg_builders::collapseRows(OpBuilder &b, Location loc, Value x) {
  auto t = tensorTypeOf(x);
  if (t.getRank() == 2)
    return x;
  if (t.getRank() == 1) {
    auto outType = RankedTensorType::get({1, t.getShape()[0]}, t.getElementType());
    return tensor::ExpandShapeOp::create(b, loc, outType, x,
                                         SmallVector<ReassociationIndices>{{0, 1}});
  }
  SmallVector<ReassociationIndices> groups(2);
  for (int64_t d = 0; d + 1 < t.getRank(); ++d)
    groups[0].push_back(d);
  groups[1].push_back(t.getRank() - 1);
  return tensor::CollapseShapeOp::create(b, loc, x, groups);
}

Value linalg_builders::expandRows(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> shape) {
  auto t = tensorTypeOf(x);
  auto outType = RankedTensorType::get(shape, t.getElementType());
  if (shape.size() == 2)
    return x;
  if (shape.size() == 1)
    return tensor::CollapseShapeOp::create(b, loc, outType, x,
                                           SmallVector<ReassociationIndices>{{0, 1}});
  SmallVector<ReassociationIndices> groups(2);
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    groups[0].push_back(d);
  groups[1].push_back(shape.size() - 1);
  return tensor::ExpandShapeOp::create(b, loc, outType, x, groups);
}

Value linalg_builders::sliceDrop(OpBuilder &b, Location loc, Value src,
                                 ArrayRef<OpFoldResult> offsets, ArrayRef<int64_t> sizes,
                                 RankedTensorType resultType) {
  SmallVector<OpFoldResult> sz, st;
  for (int64_t s : sizes) {
    sz.push_back(b.getIndexAttr(s));
    st.push_back(b.getIndexAttr(1));
  }
  return tensor::ExtractSliceOp::create(b, loc, resultType, src, offsets, sz, st);
}
