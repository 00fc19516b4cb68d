//===- QuantLowering.cpp - quantize / dequantize to linalg ----------------===//
//
// One linalg.generic each, over the input's shape, reading the scale and
// zero point through the granularity's map: () per tensor, (d_axis) per
// axis, the identity with d_axis floordiv group_size per group.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::linalg_builders;
using namespace mlir::rlx::mir;

namespace {

/// The map from the input's iteration dims to the scale's (and zero
/// point's) indices.
AffineMap paramMap(MLIRContext *ctx, unsigned rank, std::optional<int64_t> axis,
                   std::optional<int64_t> group) {
  if (!axis)
    return AffineMap::get(rank, 0, {}, ctx);
  unsigned a = *axis < 0 ? *axis + rank : *axis;
  if (!group)
    return AffineMap::get(rank, 0, {getAffineDimExpr(a, ctx)}, ctx);
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < rank; ++d)
    exprs.push_back(d == a ? getAffineDimExpr(d, ctx).floorDiv(*group) : getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

Value toFloat(OpBuilder &b, Location l, Value v, FloatType t) {
  auto from = cast<FloatType>(v.getType());
  if (from == t)
    return v;
  if (from.getWidth() < t.getWidth())
    return arith::ExtFOp::create(b, l, t, v);
  return arith::TruncFOp::create(b, l, t, v);
}

/// A stored byte (or zero point) as the integer it stands for, in i32.
Value byteValue(OpBuilder &b, Location l, Value byte, bool isUnsigned) {
  Type i32 = b.getI32Type();
  return isUnsigned ? arith::ExtUIOp::create(b, l, i32, byte).getResult()
                    : arith::ExtSIOp::create(b, l, i32, byte).getResult();
}

/// One generic over `out` reading the input (identity), the scale and the
/// zero point when given (both through paramMap); `body` gets input, scale
/// and zero point (i32, 0 when absent).
template <typename Op>
Value quantGeneric(ConversionPatternRewriter &rw, Op op, Value input, Value scale, Value zp,
                   RankedTensorType out,
                   function_ref<Value(OpBuilder &, Location, Value, Value, Value)> body) {
  MLIRContext *ctx = rw.getContext();
  unsigned rank = out.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap pm = paramMap(ctx, rank, op.getAxis(), op.getGroupSize());
  SmallVector<Value> ins{input, scale};
  SmallVector<AffineMap> maps{id, pm};
  if (zp) {
    ins.push_back(zp);
    maps.push_back(pm);
  }
  maps.push_back(id);
  bool isUnsigned = op.getIsUnsigned();
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             rw, op.getLoc(), TypeRange{out}, ins, ValueRange{empty(rw, op.getLoc(), out)}, maps,
             iters,
             [&](OpBuilder &nb, Location l, ValueRange x) {
               Value z = zp ? byteValue(nb, l, x[2], isUnsigned)
                            : arith::ConstantOp::create(nb, l, nb.getI32IntegerAttr(0))
                                  .getResult();
               linalg::YieldOp::create(nb, l, body(nb, l, x[0], x[1], z));
             })
      .getResult(0);
}

/// clamp(round_half_even(x / s) + z, qmin, qmax) in `ft` (NaN to z), the
/// integer value quantize stores.
Value quantizeScalar(OpBuilder &b, Location l, Value x, Value s, Value z, FloatType ft,
                     std::pair<int64_t, int64_t> range) {
  Value q = arith::DivFOp::create(b, l, toFloat(b, l, x, ft), toFloat(b, l, s, ft));
  Value isNan = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, q, q);
  Value zf = arith::SIToFPOp::create(b, l, ft, z);
  Value r = arith::AddFOp::create(b, l, math::RoundEvenOp::create(b, l, q), zf);
  r = arith::MaxNumFOp::create(b, l, r,
                               arith::ConstantOp::create(b, l, b.getFloatAttr(ft, range.first)));
  r = arith::MinNumFOp::create(b, l, r,
                               arith::ConstantOp::create(b, l, b.getFloatAttr(ft, range.second)));
  return arith::SelectOp::create(b, l, isNan, zf, r);
}

/// f64 for f64 inputs, else f32.
FloatType computeType(Value input) {
  auto t = cast<FloatType>(getElementTypeOrSelf(input.getType()));
  return t.getWidth() == 64 ? t : Float32Type::get(input.getContext());
}

/// The scalar body of each op on (input, scale, zero point as i32).
Value scalarBody(QuantizeOp op, OpBuilder &b, Location l, Value x, Value s, Value z) {
  Value r = quantizeScalar(b, l, x, s, z, computeType(op.getInput()), op.getRange());
  // In range now, so the conversion is exact (never poison).
  Value i = arith::FPToSIOp::create(b, l, b.getI32Type(), r);
  return arith::TruncIOp::create(b, l, b.getI8Type(), i);
}
Value scalarBody(FakeQuantizeOp op, OpBuilder &b, Location l, Value x, Value s, Value z) {
  FloatType ft = computeType(op.getInput());
  Value r = quantizeScalar(b, l, x, s, z, ft, op.getRange());
  Value d = arith::SubFOp::create(b, l, r, arith::SIToFPOp::create(b, l, ft, z));
  Value v = arith::MulFOp::create(b, l, d, toFloat(b, l, s, ft));
  return toFloat(b, l, v, cast<FloatType>(op.getType().getElementType()));
}
Value scalarBody(DequantizeOp op, OpBuilder &b, Location l, Value q, Value s, Value z) {
  // f64 when the scale is f64, then rounded to the f32 result.
  FloatType ft = computeType(op.getScale());
  Value d = arith::SubIOp::create(b, l, byteValue(b, l, q, op.getIsUnsigned()), z);
  Value v = arith::MulFOp::create(b, l, arith::SIToFPOp::create(b, l, ft, d), toFloat(b, l, s, ft));
  return toFloat(b, l, v, b.getF32Type());
}

template <typename Op> struct QuantLowering : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor a,
                                ConversionPatternRewriter &rw) const override {
    RankedTensorType out = op.getType();
    if (!out.hasStaticShape())
      return rw.notifyMatchFailure(op, "dynamic shapes");
    Value y = quantGeneric(rw, op, a.getInput(), a.getScale(), a.getZeroPoint(), out,
                           [&](OpBuilder &b, Location l, Value x, Value s, Value z) {
                             return scalarBody(op, b, l, x, s, z);
                           });
    rw.replaceOp(op, y);
    return success();
  }
};

/// qmatmul: one generic over (m, n, k), k a reduction, into a zero-filled
/// i32 accumulator; batch dims of the lhs are folded into m (and unfolded
/// from the result). The generic carries kQMatmulAttr for the CPU's integer
/// GEMM.
struct QMatmulLowering : OpConversionPattern<QMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(QMatmulOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    RankedTensorType out = op.getType();
    if (!out.hasStaticShape())
      return rw.notifyMatchFailure(op, "dynamic shapes");
    Location loc = op.getLoc();
    MLIRContext *ctx = rw.getContext();
    unsigned rank = out.getRank();
    // [..., M, K] → [M', K] and [..., M, N] ← [M', N].
    SmallVector<ReassociationIndices> fold(2);
    for (unsigned i = 0; i + 1 < rank; ++i)
      fold[0].push_back(i);
    fold[1].push_back(rank - 1);
    Value lhs = a.getLhs();
    auto flatOut = RankedTensorType::get({out.getNumElements() / out.getShape().back(),
                                          out.getShape().back()},
                                         out.getElementType());
    if (rank > 2)
      lhs = tensor::CollapseShapeOp::create(rw, loc, lhs, fold);
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    AffineExpr m = d(0), n = d(1), k = d(2);
    SmallVector<AffineMap> maps{
        AffineMap::get(3, 0, {m, k}, ctx),
        AffineMap::get(3, 0, op.getTransposeB() ? ArrayRef<AffineExpr>{n, k} : ArrayRef<AffineExpr>{k, n},
                       ctx),
        AffineMap::get(3, 0, {m, n}, ctx)};
    SmallVector<utils::IteratorType> iters{utils::IteratorType::parallel,
                                           utils::IteratorType::parallel,
                                           utils::IteratorType::reduction};
    Value zero = arith::ConstantOp::create(rw, loc, rw.getI32IntegerAttr(0));
    Value init = linalg::FillOp::create(rw, loc, zero, empty(rw, loc, flatOut)).getResult(0);
    int64_t za = op.getLhsZeroPoint().value_or(0), zb = op.getRhsZeroPoint().value_or(0);
    bool ua = op.getLhsUnsigned(), ub = op.getRhsUnsigned();
    auto generic = linalg::GenericOp::create(
        rw, loc, TypeRange{flatOut}, ValueRange{lhs, a.getRhs()}, ValueRange{init}, maps, iters,
        [&](OpBuilder &b, Location l, ValueRange args) {
          auto centered = [&](Value byte, bool isUnsigned, int64_t zp) {
            Value v = byteValue(b, l, byte, isUnsigned);
            if (!zp)
              return v;
            Value z = arith::ConstantOp::create(b, l, b.getI32IntegerAttr(zp));
            return arith::SubIOp::create(b, l, v, z).getResult();
          };
          Value prod = arith::MulIOp::create(b, l, centered(args[0], ua, za),
                                             centered(args[1], ub, zb));
          linalg::YieldOp::create(b, l, ValueRange{arith::AddIOp::create(b, l, args[2], prod)});
        });
    generic->setAttr(kQMatmulAttr, rw.getDenseI64ArrayAttr({za, zb, ua, ub}));
    Value result = generic.getResult(0);
    if (rank > 2)
      result = tensor::ExpandShapeOp::create(rw, loc, out, result, fold);
    rw.replaceOp(op, result);
    return success();
  }
};

} // namespace

void linalg_builders::populateQuantLowerings(RewritePatternSet &patterns) {
  patterns.add<QuantLowering<QuantizeOp>, QuantLowering<DequantizeOp>,
               QuantLowering<FakeQuantizeOp>, QMatmulLowering>(patterns.getContext());
}
