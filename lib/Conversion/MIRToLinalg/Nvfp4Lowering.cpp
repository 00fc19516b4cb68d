//===- Nvfp4Lowering.cpp - NVFP4 ops to linalg (the CPU reference) --------===//
//
// nvfp4_dequantize: one linalg.generic over the dequantized [N, K] (or
// [K, N]) weight reading the packed byte at K/2 and the block scale at K/16
// through floordiv maps; E2M1 codes decode through a 16-entry table.
// nvfp4_quantize: amax → global scale, block amax → E4M3 scales, then one
// generic over the packed bytes that encodes both nibbles. nvfp4_matmul:
// dequantize, then the matmul (f32 accumulation).
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
using namespace mlir::rlx::mir;
using namespace mlir::rlx::linalg_builders;

namespace {

constexpr float kE2M1[16] = {0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0f, -0.5, -1, -1.5, -2, -3, -4, -6};

Value cInt(OpBuilder &b, Location loc, Type t, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, v));
}

/// An E4M3 scale as f32; NaN (0x7F/0xFF) decodes to 0.
Value decodeScale(OpBuilder &b, Location loc, Value s8) {
  Value s = arith::ExtFOp::create(b, loc, b.getF32Type(), s8);
  Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, s, s);
  return arith::SelectOp::create(b, loc, nan, cFloat(b, loc, b.getF32Type(), 0.0), s);
}

/// The dequantized weight, [N, K] for out_in (iteration (n, k)) or [K, N]
/// for in_out (iteration (k, n)).
Value dequantize(OpBuilder &b, Location loc, Value weight, Value scales, Value global, bool outIn,
                 RankedTensorType out) {
  MLIRContext *ctx = b.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx);
  AffineExpr k = outIn ? d1 : d0, n = outIn ? d0 : d1;
  auto map = [&](AffineExpr kk) {
    return AffineMap::get(2, 0, outIn ? ArrayRef<AffineExpr>{n, kk} : ArrayRef<AffineExpr>{kk, n},
                          ctx);
  };
  SmallVector<AffineMap> maps{map(k.floorDiv(2)), map(k.floorDiv(16)), AffineMap::get(2, 0, ctx),
                              AffineMap::getMultiDimIdentityMap(2, ctx)};
  auto lutType = RankedTensorType::get({16}, b.getF32Type());
  Value lut = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(lutType, ArrayRef<float>(kE2M1, 16)));
  SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{out}, ValueRange{weight, scales, global},
             ValueRange{empty(b, loc, out)}, maps, iters,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Type i32 = nb.getI32Type();
               Value kIdx = linalg::IndexOp::create(nb, l, outIn ? 1 : 0);
               Value odd = arith::IndexCastOp::create(
                   nb, l, i32, arith::RemUIOp::create(nb, l, kIdx, cIndex(nb, l, 2)));
               Value byte = arith::ExtUIOp::create(nb, l, i32, a[0]);
               Value shift = arith::MulIOp::create(nb, l, odd, cInt(nb, l, i32, 4));
               Value code = arith::AndIOp::create(
                   nb, l, arith::ShRUIOp::create(nb, l, byte, shift), cInt(nb, l, i32, 15));
               Value idx = arith::IndexCastOp::create(nb, l, nb.getIndexType(), code);
               Value v = tensor::ExtractOp::create(nb, l, lut, ValueRange{idx});
               Value s = arith::MulFOp::create(nb, l, decodeScale(nb, l, a[1]), a[2]);
               linalg::YieldOp::create(nb, l, ValueRange{arith::MulFOp::create(nb, l, v, s)});
             })
      .getResult(0);
}

struct DequantizeLowering : OpConversionPattern<Nvfp4DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(Nvfp4DequantizeOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, dequantize(rw, op.getLoc(), a.getWeight(), a.getScales(),
                                a.getGlobalScale(), op.getLayout() == WeightLayout::OutIn,
                                op.getType()));
    return success();
  }
};

struct MatmulLowering : OpConversionPattern<Nvfp4MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(Nvfp4MatmulOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    bool outIn = op.getLayout() == WeightLayout::OutIn;
    auto wt = tensorTypeOf(a.getWeight());
    int64_t k = tensorTypeOf(a.getInput()).getShape().back();
    int64_t n = outIn ? wt.getDimSize(0) : wt.getDimSize(1);
    auto wType = RankedTensorType::get(outIn ? ArrayRef<int64_t>{n, k} : ArrayRef<int64_t>{k, n},
                                       rw.getF32Type());
    Value w = dequantize(rw, loc, a.getWeight(), a.getScales(), a.getGlobalScale(), outIn, wType);
    Value x = castTo(rw, loc, a.getInput(), rw.getF32Type());
    if (tensorTypeOf(x).getRank() != 2)
      x = collapseRows(rw, loc, x);
    Value y = matmul2D(rw, loc, x, w, outIn);
    RankedTensorType out = op.getType();
    if (out.getRank() != 2)
      y = expandRows(rw, loc, y, out.getShape());
    rw.replaceOp(op, castTo(rw, loc, y, out.getElementType()));
    return success();
  }
};

/// |x| reduced with max over the innermost dims `from..` of `x`.
Value absMax(OpBuilder &b, Location loc, Value x, unsigned keepDims) {
  auto t = tensorTypeOf(x);
  MLIRContext *ctx = b.getContext();
  unsigned rank = t.getRank();
  SmallVector<AffineExpr> kept;
  SmallVector<utils::IteratorType> iters;
  for (unsigned d = 0; d < rank; ++d) {
    if (d < keepDims)
      kept.push_back(getAffineDimExpr(d, ctx));
    iters.push_back(d < keepDims ? utils::IteratorType::parallel : utils::IteratorType::reduction);
  }
  auto out = RankedTensorType::get(t.getShape().take_front(keepDims), b.getF32Type());
  return linalg::GenericOp::create(
             b, loc, TypeRange{out}, ValueRange{x}, ValueRange{filled(b, loc, out, 0.0)},
             ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 AffineMap::get(rank, 0, kept, ctx)},
             iters,
             [&](OpBuilder &nb, Location l, ValueRange v) {
               Value m = arith::MaximumFOp::create(nb, l, v[1], math::AbsFOp::create(nb, l, v[0]));
               linalg::YieldOp::create(nb, l, ValueRange{m});
             })
      .getResult(0);
}

/// The E2M1 code of q (nearest value, ties to the even code, saturating).
Value encodeE2M1(OpBuilder &b, Location loc, Value q) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  Value a = math::AbsFOp::create(b, loc, q);
  // (threshold, ties go up) between consecutive magnitudes 0 .5 1 1.5 2 3 4 6.
  const std::pair<double, bool> cuts[] = {{0.25, false}, {0.75, true}, {1.25, false},
                                          {1.75, true},  {2.5, false}, {3.5, true},
                                          {5.0, false}};
  Value code = cInt(b, loc, i32, 0);
  for (auto [t, up] : cuts) {
    Value c = arith::CmpFOp::create(b, loc, up ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT,
                                    a, cFloat(b, loc, f32, t));
    code = arith::AddIOp::create(b, loc, code, arith::ExtUIOp::create(b, loc, i32, c));
  }
  Value neg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, q, cFloat(b, loc, f32, 0.0));
  Value sign = arith::MulIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i32, neg),
                                     cInt(b, loc, i32, 8));
  return arith::OrIOp::create(b, loc, code, sign);
}

struct QuantizeLowering : OpConversionPattern<Nvfp4QuantizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(Nvfp4QuantizeOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rw.getContext();
    bool outIn = op.getLayout() == WeightLayout::OutIn;
    Value x = a.getInput();
    // Work in [N, K]; in_out is the transpose of out_in in every result.
    if (!outIn) {
      auto t = tensorTypeOf(x);
      auto tt = RankedTensorType::get({t.getDimSize(1), t.getDimSize(0)}, t.getElementType());
      x = linalg::TransposeOp::create(rw, loc, x, empty(rw, loc, tt), ArrayRef<int64_t>{1, 0})
              .getResult()[0];
    }
    auto xt = tensorTypeOf(x);
    int64_t n = xt.getDimSize(0), k = xt.getDimSize(1);
    Type f32 = rw.getF32Type();
    // global = amax / (448·6), 1 when everything is 0.
    Value amax = absMax(rw, loc, x, 0);
    Value global = elementwise(rw, loc, {amax}, {RankedTensorType::get({}, f32)},
                               [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
                                 Value g = arith::DivFOp::create(b, l, v[0], cFloat(b, l, f32, 448.0 * 6.0));
                                 Value zero = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, g,
                                                                    cFloat(b, l, f32, 0.0));
                                 return {arith::SelectOp::create(b, l, zero, cFloat(b, l, f32, 1.0), g)};
                               })
                       .front();
    // Block scales: block amax / 6 / global, rounded to E4M3.
    auto blocks = RankedTensorType::get({n, k / 16, 16}, xt.getElementType());
    Value xb = tensor::ExpandShapeOp::create(rw, loc, blocks, x,
                                             ArrayRef<ReassociationIndices>{{0}, {1, 2}});
    Value bamax = absMax(rw, loc, xb, 2);
    auto f8 = rw.getType<Float8E4M3FNType>();
    auto sType = RankedTensorType::get({n, k / 16}, f8);
    Value scales = linalg::GenericOp::create(
                       rw, loc, TypeRange{sType}, ValueRange{bamax, global},
                       ValueRange{empty(rw, loc, sType)},
                       ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(2, ctx),
                                           AffineMap::get(2, 0, ctx),
                                           AffineMap::getMultiDimIdentityMap(2, ctx)},
                       SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
                       [&](OpBuilder &b, Location l, ValueRange v) {
                         Value s = arith::DivFOp::create(
                             b, l, arith::DivFOp::create(b, l, v[0], cFloat(b, l, f32, 6.0)), v[1]);
                         linalg::YieldOp::create(b, l, ValueRange{arith::TruncFOp::create(b, l, f8, s)});
                       })
                       .getResult(0);
    // Packed codes: byte (n, j) holds k = 2j (low nibble) and 2j + 1.
    AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx);
    auto wType = RankedTensorType::get({n, k / 2}, rw.getI8Type());
    Value weight =
        linalg::GenericOp::create(
            rw, loc, TypeRange{wType}, ValueRange{x, x, scales, global},
            ValueRange{empty(rw, loc, wType)},
            ArrayRef<AffineMap>{AffineMap::get(2, 0, {d0, d1 * 2}, ctx),
                                AffineMap::get(2, 0, {d0, d1 * 2 + 1}, ctx),
                                AffineMap::get(2, 0, {d0, d1.floorDiv(8)}, ctx),
                                AffineMap::get(2, 0, ctx), AffineMap::getMultiDimIdentityMap(2, ctx)},
            SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
            [&](OpBuilder &b, Location l, ValueRange v) {
              Value s = arith::MulFOp::create(b, l, decodeScale(b, l, v[2]), v[3]);
              Value zero = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, s,
                                                 cFloat(b, l, f32, 0.0));
              Value inv = arith::SelectOp::create(
                  b, l, zero, cFloat(b, l, f32, 0.0),
                  arith::DivFOp::create(b, l, cFloat(b, l, f32, 1.0), s));
              auto code = [&](Value e) {
                return encodeE2M1(b, l, arith::MulFOp::create(b, l, castScalar(b, l, e, f32), inv));
              };
              Type i32 = b.getI32Type();
              Value byte = arith::OrIOp::create(
                  b, l, code(v[0]), arith::ShLIOp::create(b, l, code(v[1]), cInt(b, l, i32, 4)));
              linalg::YieldOp::create(b, l, ValueRange{arith::TruncIOp::create(b, l, b.getI8Type(), byte)});
            })
            .getResult(0);
    if (!outIn) {
      auto transpose = [&](Value v) {
        auto t = tensorTypeOf(v);
        auto tt = RankedTensorType::get({t.getDimSize(1), t.getDimSize(0)}, t.getElementType());
        return linalg::TransposeOp::create(rw, loc, v, empty(rw, loc, tt), ArrayRef<int64_t>{1, 0})
            .getResult()[0];
      };
      weight = transpose(weight);
      scales = transpose(scales);
    }
    rw.replaceOp(op, {weight, scales, global});
    return success();
  }

  static Value castScalar(OpBuilder &b, Location l, Value v, Type t) {
    return v.getType() == t ? v : arith::ExtFOp::create(b, l, t, v).getResult();
  }
};

} // namespace

void linalg_builders::populateNvfp4Lowerings(RewritePatternSet &patterns) {
  patterns.add<DequantizeLowering, MatmulLowering, QuantizeLowering>(patterns.getContext());
}
