//===- NormLowering.cpp - Reductions, norms, softmax, RoPE, masks ---------===//
//
// Statistics accumulate in f32 (mean, variance, max, sum) with reassociation
// allowed so LLVM vectorizes the reductions; results are rounded once to the
// op's element type.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "RLX/Dialect/MIR/IR/AttentionLogits.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;
using namespace mlir::rlx::linalg_builders;

static constexpr double kNegInf = -std::numeric_limits<double>::infinity();

static Value addF(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddFOp::create(b, loc, x, y, reductionFlags(b.getContext()));
}

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

Value linalg_builders::normalizeLast(OpBuilder &b, Location loc, Value x, Value weight,
                                     Value bias, double eps, NormKind kind, Type outType) {
  auto xt = tensorTypeOf(x);
  Type f32 = statsType(b, xt.getElementType());
  int64_t h = xt.getShape().back();
  auto sum = [&](OpBuilder &nb, Location l, Value acc, Value e) { return addF(nb, l, acc, e); };
  Value mean;
  if (kind == NormKind::LayerNorm)
    mean = elementwise(b, loc, reduceLast(b, loc, x, f32, 0.0, sum),
                       RankedTensorType::get(xt.getShape().drop_back(), f32),
                       [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
                         return {arith::DivFOp::create(nb, l, a[0], cFloat(nb, l, f32, h))};
                       })
               .front();
  // Sum of squares (of x - mean for LayerNorm), in f32.
  SmallVector<Value> sqIn{x};
  if (mean)
    sqIn.push_back(mean);
  auto sqType = RankedTensorType::get(xt.getShape(), f32);
  MLIRContext *ctx = b.getContext();
  int64_t rank = xt.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap row = id.dropResult(rank - 1);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.back() = utils::IteratorType::reduction;
  auto rowsType = RankedTensorType::get(xt.getShape().drop_back(), f32);
  SmallVector<AffineMap> maps{id};
  if (mean)
    maps.push_back(row);
  maps.push_back(row);
  Value ss = linalg::GenericOp::create(
                 b, loc, TypeRange{rowsType}, sqIn, ValueRange{filled(b, loc, rowsType, 0.0)},
                 maps, iters,
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   Value v = convertScalar(nb, l, a[0], f32);
                   if (mean)
                     v = arith::SubFOp::create(nb, l, v, a[1]);
                   Value sq = arith::MulFOp::create(nb, l, v, v);
                   linalg::YieldOp::create(nb, l, addF(nb, l, a.back(), sq));
                 })
                 .getResult(0);
  (void)sqType;
  // r = rsqrt(ss / H + eps)
  Value r = elementwise(b, loc, ss, rowsType,
                        [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
                          Value m = arith::DivFOp::create(nb, l, a[0], cFloat(nb, l, f32, h));
                          Value e = arith::AddFOp::create(nb, l, m, cFloat(nb, l, f32, eps));
                          return {math::RsqrtOp::create(nb, l, e)};
                        })
                .front();
  // y = (x [- mean]) * r [* w] [+ bias]: rows broadcast along the last dim.
  SmallVector<Value> ins{x, r};
  SmallVector<AffineMap> nmaps{id, row};
  if (mean) {
    ins.push_back(mean);
    nmaps.push_back(row);
  }
  AffineMap lastOnly = AffineMap::get(rank, 0, {getAffineDimExpr(rank - 1, ctx)}, ctx);
  if (weight) {
    ins.push_back(weight);
    nmaps.push_back(lastOnly);
  }
  if (bias) {
    ins.push_back(bias);
    nmaps.push_back(lastOnly);
  }
  auto outT = RankedTensorType::get(xt.getShape(), outType);
  nmaps.push_back(id);
  SmallVector<utils::IteratorType> par(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{outT}, ins, ValueRange{empty(b, loc, outT)}, nmaps, par,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               unsigned i = 2;
               Value v = convertScalar(nb, l, a[0], f32);
               if (mean)
                 v = arith::SubFOp::create(nb, l, v, a[i++]);
               v = arith::MulFOp::create(nb, l, v, a[1]);
               if (weight)
                 v = arith::MulFOp::create(nb, l, v, convertScalar(nb, l, a[i++], f32));
               if (bias)
                 v = arith::AddFOp::create(nb, l, v, convertScalar(nb, l, a[i++], f32));
               linalg::YieldOp::create(nb, l, convertScalar(nb, l, v, outType));
             })
      .getResult(0);
}

Value linalg_builders::splitHeads(OpBuilder &b, Location loc, Value x, int64_t headDim) {
  auto t = tensorTypeOf(x);
  SmallVector<int64_t> shape(t.getShape().drop_back());
  shape.push_back(t.getShape().back() / headDim);
  shape.push_back(headDim);
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d + 1 < t.getRank(); ++d)
    groups.push_back({d});
  groups.push_back({t.getRank() - 1, t.getRank()});
  return tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(shape, t.getElementType()),
                                       x, groups);
}

Value linalg_builders::mergeHeads(OpBuilder &b, Location loc, Value x) {
  auto t = tensorTypeOf(x);
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d + 2 < t.getRank(); ++d)
    groups.push_back({d});
  groups.push_back({t.getRank() - 2, t.getRank() - 1});
  return tensor::CollapseShapeOp::create(b, loc, x, groups);
}

Value linalg_builders::applyRope(OpBuilder &b, Location loc, Value x, Value cos, Value sin,
                                 AffineMap tableRow, int64_t rotary, RopeStyle style) {
  auto xt = tensorTypeOf(x);
  MLIRContext *ctx = b.getContext();
  int64_t rank = xt.getRank(), half = rotary / 2;
  AffineExpr d = getAffineDimExpr(rank - 1, ctx);
  // The partner of dim d and the table column of its pair, both kept in range
  // for the pass-through dims (whose value is then unused).
  AffineExpr pair, col;
  if (style == RopeStyle::NeoX) {
    pair = (d + half) % rotary;
    col = d % half;
  } else {
    pair = d + 1 - (d % 2) * 2;
    col = d.floorDiv(2) % half;
  }
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<AffineExpr> pairExprs(id.getResults().drop_back());
  pairExprs.push_back(pair);
  SmallVector<AffineExpr> tableExprs(tableRow.getResults());
  tableExprs.push_back(col);
  AffineMap pairMap = AffineMap::get(rank, 0, pairExprs, ctx);
  AffineMap tableMap = AffineMap::get(rank, 0, tableExprs, ctx);
  SmallVector<utils::IteratorType> par(rank, utils::IteratorType::parallel);
  Type f32 = statsType(b, xt.getElementType());
  return linalg::GenericOp::create(
             b, loc, TypeRange{xt}, ValueRange{x, x, cos, sin}, ValueRange{empty(b, loc, xt)},
             ArrayRef<AffineMap>{id, pairMap, tableMap, tableMap, id}, par,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value idx = linalg::IndexOp::create(nb, l, rank - 1);
               Value self = convertScalar(nb, l, a[0], f32);
               Value other = convertScalar(nb, l, a[1], f32);
               Value c = convertScalar(nb, l, a[2], f32), s = convertScalar(nb, l, a[3], f32);
               // First of a pair: self·cos − other·sin; second: self·cos + other·sin.
               Value first;
               if (style == RopeStyle::NeoX)
                 first = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, idx,
                                               cIndex(nb, l, half));
               else
                 first = arith::CmpIOp::create(
                     nb, l, arith::CmpIPredicate::eq,
                     arith::RemUIOp::create(nb, l, idx, cIndex(nb, l, 2)), cIndex(nb, l, 0));
               Value sc = arith::MulFOp::create(nb, l, self, c);
               Value os = arith::MulFOp::create(nb, l, other, s);
               Value rotated = arith::SelectOp::create(nb, l, first,
                                                       arith::SubFOp::create(nb, l, sc, os),
                                                       arith::AddFOp::create(nb, l, sc, os));
               Value inRotary = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, idx,
                                                      cIndex(nb, l, rotary));
               Value v = arith::SelectOp::create(nb, l, inRotary, rotated, self);
               linalg::YieldOp::create(nb, l, convertScalar(nb, l, v, xt.getElementType()));
             })
      .getResult(0);
}

namespace {

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

struct RmsNormLowering : OpConversionPattern<RmsNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(RmsNormOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, normalizeLast(rw, op.getLoc(), a.getInput(), a.getWeight(), Value(),
                                   op.getEps().convertToDouble(), NormKind::RmsNorm,
                                   op.getType().getElementType()));
    return success();
  }
};

struct LayerNormLowering : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(LayerNormOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, normalizeLast(rw, op.getLoc(), a.getInput(), a.getWeight(), a.getBias(),
                                   op.getEps().convertToDouble(), NormKind::LayerNorm,
                                   op.getType().getElementType()));
    return success();
  }
};

struct ResidualRmsNormLowering : OpConversionPattern<ResidualRmsNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ResidualRmsNormOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    RankedTensorType t = op.getOutput().getType();
    // The sum is rounded to the input type first (HF adds the residual in the
    // model dtype), then normalized.
    Value sum = elementwise(rw, loc, {a.getInput(), a.getResidual()}, t,
                            [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
                              Type f32 = statsType(b, t.getElementType());
                              Value s = arith::AddFOp::create(b, l, convertScalar(b, l, v[0], f32),
                                                              convertScalar(b, l, v[1], f32));
                              return {convertScalar(b, l, s, t.getElementType())};
                            })
                    .front();
    Value norm = normalizeLast(rw, loc, sum, a.getWeight(), Value(), op.getEps().convertToDouble(),
                               NormKind::RmsNorm, t.getElementType());
    rw.replaceOp(op, {norm, sum});
    return success();
  }
};

/// reduce over any axes: a generic with reduction iterators, f32 accumulation.
struct ReduceLowering : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ReduceOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto in = tensorTypeOf(a.getInput());
    int64_t rank = in.getRank();
    MLIRContext *ctx = rw.getContext();
    SmallVector<bool> reduced(rank, false);
    int64_t count = 1;
    for (int64_t ax : op.getAxes()) {
      int64_t d = ax < 0 ? ax + rank : ax;
      reduced[d] = true;
      count *= in.getShape()[d];
    }
    Type et = in.getElementType();
    bool isFloat = isa<FloatType>(et);
    Type acc = isFloat ? statsType(rw, et) : et;
    SmallVector<int64_t> kept;
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iters;
    for (int64_t d = 0; d < rank; ++d) {
      iters.push_back(reduced[d] ? utils::IteratorType::reduction : utils::IteratorType::parallel);
      if (!reduced[d]) {
        kept.push_back(in.getShape()[d]);
        outExprs.push_back(getAffineDimExpr(d, ctx));
      }
    }
    ReduceKind kind = op.getKind();
    double init = kind == ReduceKind::Max ? kNegInf
                  : kind == ReduceKind::Min ? -kNegInf
                  : kind == ReduceKind::Prod ? 1.0
                                             : 0.0;
    auto accType = RankedTensorType::get(kept, acc);
    Value accInit;
    if (isFloat || kind == ReduceKind::Sum || kind == ReduceKind::Mean ||
        kind == ReduceKind::Prod) {
      accInit = filled(rw, loc, accType, init);
    } else {
      unsigned w = acc.getIntOrFloatBitWidth();
      APInt extreme = kind == ReduceKind::Max ? APInt::getSignedMinValue(w)
                                              : APInt::getSignedMaxValue(w);
      Value c = arith::ConstantOp::create(rw, loc, acc, rw.getIntegerAttr(acc, extreme));
      accInit = linalg::FillOp::create(rw, loc, c, empty(rw, loc, accType)).getResult(0);
    }
    Value r = linalg::GenericOp::create(
                  rw, loc, TypeRange{accType}, ValueRange{a.getInput()}, ValueRange{accInit},
                  ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                                      AffineMap::get(rank, 0, outExprs, ctx)},
                  iters,
                  [&](OpBuilder &b, Location l, ValueRange v) {
                    Value e = convertScalar(b, l, v[0], acc), s = v[1], res;
                    switch (kind) {
                    case ReduceKind::Sum:
                    case ReduceKind::Mean:
                      res = isFloat ? addF(b, l, s, e) : Value(arith::AddIOp::create(b, l, s, e));
                      break;
                    case ReduceKind::Prod:
                      res = isFloat ? Value(arith::MulFOp::create(b, l, s, e))
                                    : Value(arith::MulIOp::create(b, l, s, e));
                      break;
                    case ReduceKind::Max:
                      res = isFloat ? Value(arith::MaximumFOp::create(b, l, s, e))
                                    : Value(arith::MaxSIOp::create(b, l, s, e));
                      break;
                    case ReduceKind::Min:
                      res = isFloat ? Value(arith::MinimumFOp::create(b, l, s, e))
                                    : Value(arith::MinSIOp::create(b, l, s, e));
                      break;
                    }
                    linalg::YieldOp::create(b, l, res);
                  })
                  .getResult(0);
    auto outKept = RankedTensorType::get(kept, et);
    r = elementwise(rw, loc, r, outKept,
                    [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
                      Value x = v[0];
                      if (kind == ReduceKind::Mean)
                        x = isFloat ? Value(arith::DivFOp::create(b, l, x, cFloat(b, l, acc, count)))
                                    : Value(arith::DivSIOp::create(b, l, x, cFloat(b, l, acc, count)));
                      return {convertScalar(b, l, x, et)};
                    })
            .front();
    if (op.getKeepDims()) {
      SmallVector<ReassociationIndices> groups;
      ReassociationIndices current;
      // Each kept dim takes the reduced (size-1) dims that precede it; trailing
      // reduced dims join the last group.
      for (int64_t d = 0; d < rank; ++d) {
        current.push_back(d);
        if (!reduced[d]) {
          groups.push_back(current);
          current.clear();
        }
      }
      if (!current.empty()) {
        if (groups.empty())
          groups.push_back(current);
        else
          groups.back().append(current.begin(), current.end());
      }
      if (kept.empty())
        groups.clear();
      r = tensor::ExpandShapeOp::create(rw, loc, op.getType(), r, groups);
    }
    rw.replaceOp(op, r);
    return success();
  }
};

/// softmax along one axis, safe for rows that are entirely -inf (→ 0).
struct SoftmaxLowering : OpConversionPattern<SoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SoftmaxOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto t = tensorTypeOf(a.getInput());
    int64_t rank = t.getRank();
    // I64Attr getters return uint64_t: read the axis as signed first.
    auto axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    MLIRContext *ctx = rw.getContext();
    Type f32 = statsType(rw, t.getElementType());
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap row = id.dropResult(axis);
    SmallVector<int64_t> rowShape(t.getShape());
    rowShape.erase(rowShape.begin() + axis);
    auto rowType = RankedTensorType::get(rowShape, f32);
    SmallVector<utils::IteratorType> red(rank, utils::IteratorType::parallel);
    red[axis] = utils::IteratorType::reduction;
    SmallVector<utils::IteratorType> par(rank, utils::IteratorType::parallel);
    auto reduce = [&](Value in, double init, bool isMax) {
      return linalg::GenericOp::create(
                 rw, loc, TypeRange{rowType}, ValueRange{in},
                 ValueRange{filled(rw, loc, rowType, init)}, ArrayRef<AffineMap>{id, row}, red,
                 [&](OpBuilder &b, Location l, ValueRange v) {
                   Value e = convertScalar(b, l, v[0], f32);
                   Value r = isMax ? Value(arith::MaximumFOp::create(b, l, v[1], e))
                                   : addF(b, l, v[1], e);
                   linalg::YieldOp::create(b, l, r);
                 })
          .getResult(0);
    };
    Value m = reduce(a.getInput(), kNegInf, true);
    auto expType = RankedTensorType::get(t.getShape(), f32);
    Value e = linalg::GenericOp::create(
                  rw, loc, TypeRange{expType}, ValueRange{a.getInput(), m},
                  ValueRange{empty(rw, loc, expType)}, ArrayRef<AffineMap>{id, row, id}, par,
                  [&](OpBuilder &b, Location l, ValueRange v) {
                    Value x = convertScalar(b, l, v[0], f32);
                    Value ex = math::ExpOp::create(b, l, arith::SubFOp::create(b, l, x, v[1]));
                    Value dead = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, v[1],
                                                       cFloat(b, l, f32, kNegInf));
                    linalg::YieldOp::create(
                        b, l, ValueRange{arith::SelectOp::create(b, l, dead, cFloat(b, l, f32, 0.0), ex)});
                  })
                  .getResult(0);
    Value s = reduce(e, 0.0, false);
    Type et = t.getElementType();
    Value out = linalg::GenericOp::create(
                    rw, loc, TypeRange{t}, ValueRange{e, s}, ValueRange{empty(rw, loc, t)},
                    ArrayRef<AffineMap>{id, row, id}, par,
                    [&](OpBuilder &b, Location l, ValueRange v) {
                      Value zero = cFloat(b, l, f32, 0.0);
                      Value isZero =
                          arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, v[1], zero);
                      Value q = arith::DivFOp::create(b, l, v[0], v[1]);
                      Value r = arith::SelectOp::create(b, l, isZero, zero, q);
                      linalg::YieldOp::create(b, l, convertScalar(b, l, r, et));
                    })
                    .getResult(0);
    rw.replaceOp(op, out);
    return success();
  }
};

struct RopeLowering : OpConversionPattern<RopeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(RopeOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rw.getContext();
    Value x4 = splitHeads(rw, loc, a.getInput(), op.getHeadDim()); // [B, S, H, D]
    int64_t tableRank = tensorTypeOf(a.getCos()).getRank();
    // Tables are [S, r/2] or [B, S, r/2]: rows come from (s) or (b, s).
    AffineMap rowMap =
        tableRank == 2
            ? AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx)
            : AffineMap::get(4, 0, {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx)}, ctx);
    Value r = applyRope(rw, loc, x4, a.getCos(), a.getSin(), rowMap, op.getRotaryDimOrDefault(),
                        op.getStyle());
    rw.replaceOp(op, mergeHeads(rw, loc, r));
    return success();
  }
};

/// Bottom-right aligned causal (and sliding-window) masking of [..., Sq, Sk].
struct CausalMaskLowering : OpConversionPattern<CausalMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(CausalMaskOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    auto t = op.getType();
    int64_t rank = t.getRank();
    int64_t sq = t.getShape()[rank - 2], sk = t.getShape()[rank - 1];
    std::optional<int64_t> window = op.getWindow();
    bool chunked = op.getChunked();
    rw.replaceOp(op, elementwise(
                         rw, op.getLoc(), a.getInput(), t,
                         [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
                           Value i = linalg::IndexOp::create(b, l, rank - 2);
                           Value j = linalg::IndexOp::create(b, l, rank - 1);
                           Value vis = attention_logits::causalVisible(b, l, window, i, j, sk - sq,
                                                                       chunked);
                           Value ninf = cFloat(b, l, t.getElementType(), kNegInf);
                           return {arith::SelectOp::create(b, l, vis, v[0], ninf)};
                         }));
    return success();
  }
};

} // namespace

void linalg_builders::populateNormLowerings(RewritePatternSet &patterns) {
  patterns.add<RmsNormLowering, LayerNormLowering, ResidualRmsNormLowering, ReduceLowering,
               SoftmaxLowering, RopeLowering, CausalMaskLowering>(patterns.getContext());
}
