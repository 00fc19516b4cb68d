//===- Nvfp4Lowering.cpp - NVFP4 ops to linalg (the CPU reference) --------===//
//
// mxfp4_dequantize: the same decode with E8M0 scales of 32-element blocks.
// nvfp4_dequantize: one linalg.generic over the dequantized [N, K] (or
// [K, N]) weight reading the packed byte at K/2 and the block scale at K/16
// through floordiv maps; E2M1 codes decode through a 16-entry table.
// nvfp4_quantize: amax → global scale, block amax → E4M3 scales, then one
// generic over the packed bytes that encodes both nibbles. nvfp4_matmul:
// dequantize, then the matmul (f32 accumulation).
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "RLX/Dialect/MIR/IR/Nvfp4Math.h"

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

Value cInt(OpBuilder &b, Location loc, Type t, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, v));
}

/// The E2M1 code (i32) of element `kIdx` (index) in its packed `byte` (i8):
/// the low nibble for an even index, the high one for an odd index.
Value nibbleCode(OpBuilder &b, Location l, Value byte, Value kIdx) {
  Type i32 = b.getI32Type();
  Value odd = arith::IndexCastOp::create(b, l, i32,
                                         arith::RemUIOp::create(b, l, kIdx, cIndex(b, l, 2)));
  Value wide = arith::ExtUIOp::create(b, l, i32, byte);
  Value shift = arith::MulIOp::create(b, l, odd, cInt(b, l, i32, 4));
  return arith::AndIOp::create(b, l, arith::ShRUIOp::create(b, l, wide, shift),
                               cInt(b, l, i32, 15));
}

} // namespace

/// The dequantized weight, [N, K] for out_in (iteration (n, k)) or [K, N]
/// for in_out (iteration (k, n)).
Value linalg_builders::dequantizeNvfp4(OpBuilder &b, Location loc, Value weight, Value scales,
                                       Value global, bool outIn, RankedTensorType out) {
  MLIRContext *ctx = b.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx);
  AffineExpr k = outIn ? d1 : d0, n = outIn ? d0 : d1;
  auto map = [&](AffineExpr kk) {
    return AffineMap::get(2, 0, outIn ? ArrayRef<AffineExpr>{n, kk} : ArrayRef<AffineExpr>{kk, n},
                          ctx);
  };
  // Scale (n, k / 16): linear [N, K/16] (or [K/16, N]), or blocked
  // (nvfp4_block_scales, nvfp4::blockedScaleMap).
  AffineMap scaleMap =
      tensorTypeOf(scales).getRank() == 4
          ? nvfp4::blockedScaleMap(ctx).compose(AffineMap::get(2, 0, {n, k.floorDiv(16)}, ctx))
          : map(k.floorDiv(16));
  SmallVector<AffineMap> maps{map(k.floorDiv(2)), scaleMap, AffineMap::get(2, 0, ctx),
                              AffineMap::getMultiDimIdentityMap(2, ctx)};
  SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{out}, ValueRange{weight, scales, global},
             ValueRange{empty(b, loc, out)}, maps, iters,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value kIdx = linalg::IndexOp::create(nb, l, outIn ? 1 : 0);
               Value v = nvfp4::decodeE2M1(nb, l, nibbleCode(nb, l, a[0], kIdx));
               Value s = arith::MulFOp::create(nb, l, nvfp4::decodeScale(nb, l, a[1]), a[2]);
               linalg::YieldOp::create(nb, l, ValueRange{arith::MulFOp::create(nb, l, v, s)});
             })
      .getResult(0);
}

namespace {

struct DequantizeLowering : OpConversionPattern<Nvfp4DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(Nvfp4DequantizeOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, dequantizeNvfp4(rw, op.getLoc(), a.getWeight(), a.getScales(),
                                a.getGlobalScale(), op.getLayout() == WeightLayout::OutIn,
                                op.getType()));
    return success();
  }
};

/// mxfp4_dequantize: one generic over the result [..., 32·G] reading the
/// byte (..., g, j / 2) and the scale (..., g) of element 32·g + j.
struct Mxfp4DequantizeLowering : OpConversionPattern<Mxfp4DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(Mxfp4DequantizeOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rw.getContext();
    RankedTensorType out = op.getType();
    if (!out.hasStaticShape())
      return rw.notifyMatchFailure(op, "dynamic shapes");
    unsigned rank = out.getRank();
    SmallVector<AffineExpr> lead;
    for (unsigned d = 0; d + 1 < rank; ++d)
      lead.push_back(getAffineDimExpr(d, ctx));
    AffineExpr k = getAffineDimExpr(rank - 1, ctx);
    SmallVector<AffineExpr> byte(lead), scale(lead);
    byte.append({k.floorDiv(32), (k % 32).floorDiv(2)});
    scale.push_back(k.floorDiv(32));
    SmallVector<AffineMap> maps{AffineMap::get(rank, 0, byte, ctx),
                                AffineMap::get(rank, 0, scale, ctx),
                                AffineMap::getMultiDimIdentityMap(rank, ctx)};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value y = linalg::GenericOp::create(
                  rw, loc, TypeRange{out}, ValueRange{a.getBlocks(), a.getScales()},
                  ValueRange{empty(rw, loc, out)}, maps, iters,
                  [&](OpBuilder &nb, Location l, ValueRange x) {
                    Value kIdx = linalg::IndexOp::create(nb, l, rank - 1);
                    Value v = arith::MulFOp::create(
                        nb, l, nvfp4::decodeE2M1(nb, l, nibbleCode(nb, l, x[0], kIdx)),
                        nvfp4::decodeE8M0(nb, l, x[1]));
                    linalg::YieldOp::create(nb, l, v);
                  })
                  .getResult(0);
    rw.replaceOp(op, y);
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
    Value w = dequantizeNvfp4(rw, loc, a.getWeight(), a.getScales(), a.getGlobalScale(), outIn, wType);
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
                                 return {nvfp4::globalScale(b, l, v[0])};
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
                         linalg::YieldOp::create(b, l, ValueRange{nvfp4::blockScale(b, l, v[0], v[1])});
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
              Value inv = nvfp4::inverseScale(b, l, v[2], v[3]);
              auto code = [&](Value e) {
                return nvfp4::encodeE2M1(b, l,
                                         arith::MulFOp::create(b, l, castScalar(b, l, e, f32), inv));
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

/// [TM, TK, 32, 16] ← [N, KB]: element (tm, tk, r, j) is the scale at
/// nvfp4::blockedScaleInverseMap(tm, tk, r, j), or 0 past the scales.
struct BlockScalesLowering : OpConversionPattern<Nvfp4BlockScalesOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(Nvfp4BlockScalesOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    RankedTensorType out = op.getType();
    Value scales = a.getScales();
    auto st = tensorTypeOf(scales);
    int64_t n = st.getDimSize(0), kb = st.getDimSize(1);
    MLIRContext *ctx = rw.getContext();
    auto gen = linalg::GenericOp::create(
        rw, loc, TypeRange{out}, ValueRange{}, ValueRange{empty(rw, loc, out)},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(4, ctx)},
        SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> i;
          for (int d = 0; d < 4; ++d)
            i.push_back(linalg::IndexOp::create(b, l, d));
          auto c = [&](int64_t v) { return cIndex(b, l, v); };
          SmallVector<Value> mk =
              nvfp4::applyNonNegative(b, l, nvfp4::blockedScaleInverseMap(ctx), i);
          Value m = mk[0], k = mk[1];
          Value valid = arith::AndIOp::create(
              b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, m, c(n)),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, k, c(kb)));
          Value mc = arith::MinUIOp::create(b, l, m, c(n - 1));
          Value kc = arith::MinUIOp::create(b, l, k, c(kb - 1));
          Value v = tensor::ExtractOp::create(b, l, scales, ValueRange{mc, kc});
          Value zero = arith::ConstantOp::create(b, l, b.getZeroAttr(out.getElementType()));
          linalg::YieldOp::create(b, l, ValueRange{arith::SelectOp::create(b, l, valid, v, zero)});
        });
    rw.replaceOp(op, gen.getResult(0));
    return success();
  }
};

} // namespace

void linalg_builders::populateNvfp4Lowerings(RewritePatternSet &patterns) {
  patterns.add<DequantizeLowering, Mxfp4DequantizeLowering, MatmulLowering, QuantizeLowering,
               BlockScalesLowering>(
      patterns.getContext());
}
