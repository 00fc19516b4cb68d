//===- LowPrecisionFloats.cpp - f8E4M3FN / f4E2M1FN / bf16 conversions ----===//
//
// Upstream MLIR 22 does not lower arith.extf/truncf to or from f8E4M3FN and
// f4E2M1FN. These patterns do, with integer arithmetic on the bit patterns
// (and, for CPU code, f32/f64 → bf16: see the pass description):
//
//  E4M3FN: sign | 4-bit exponent (bias 7) | 3-bit mantissa; exponent 0 is
//          subnormal (m·2^-9); S.1111.111 is NaN; no infinities; max 448.
//  E2M1FN: sign | 2-bit exponent (bias 1) | 1-bit mantissa; values
//          0, 0.5, 1, 1.5, 2, 3, 4, 6; no NaN or infinity.
//
// Encoding rounds to nearest, ties to even.
//
//===----------------------------------------------------------------------===//

#include "RLX/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_EXPANDLOWPRECISIONFLOATS
#include "RLX/Transforms/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;

namespace {

/// Builds ops on scalars or vectors of one shape (`like` gives the shape).
struct Bits {
  PatternRewriter &b;
  Location loc;
  Type like;

  Type withElement(Type elt) const {
    if (auto v = dyn_cast<VectorType>(like))
      return v.clone(elt);
    return elt;
  }
  Value c(Type elt, int64_t v) const {
    Type t = withElement(elt);
    TypedAttr a = b.getIntegerAttr(elt, v);
    if (auto vt = dyn_cast<VectorType>(t))
      a = DenseElementsAttr::get(vt, a);
    return arith::ConstantOp::create(b, loc, t, a);
  }
  Value cf(Type elt, double v) const {
    Type t = withElement(elt);
    TypedAttr a = b.getFloatAttr(elt, v);
    if (auto vt = dyn_cast<VectorType>(t))
      a = DenseElementsAttr::get(vt, a);
    return arith::ConstantOp::create(b, loc, t, a);
  }
  Value i32(int64_t v) const { return c(b.getI32Type(), v); }
  Value shr(Value x, int64_t n) const { return arith::ShRUIOp::create(b, loc, x, i32(n)); }
  Value shl(Value x, int64_t n) const { return arith::ShLIOp::create(b, loc, x, i32(n)); }
  Value band(Value x, int64_t m) const { return arith::AndIOp::create(b, loc, x, i32(m)); }
  Value bor(Value x, Value y) const { return arith::OrIOp::create(b, loc, x, y); }
  Value add(Value x, Value y) const { return arith::AddIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, int64_t v) const {
    return arith::CmpIOp::create(b, loc, p, x, i32(v));
  }
  Value sel(Value c, Value x, Value y) const { return arith::SelectOp::create(b, loc, c, x, y); }
};

/// The code of `x` (any float type) as i32 bits of its storage integer.
static Value storageBits(const Bits &k, Value x, unsigned width) {
  Value i = arith::BitcastOp::create(k.b, k.loc, k.withElement(k.b.getIntegerType(width)), x);
  return arith::ExtUIOp::create(k.b, k.loc, k.withElement(k.b.getI32Type()), i);
}

/// f32 value of an E4M3FN code held in i32.
static Value decodeE4M3(const Bits &k, Value code) {
  Type f32 = k.b.getF32Type();
  Value s = k.band(k.shr(code, 7), 1), e = k.band(k.shr(code, 3), 0xF), m = k.band(code, 7);
  Value sign = k.shl(s, 31);
  Value normal = k.bor(sign, k.bor(k.shl(k.add(e, k.i32(120)), 23), k.shl(m, 20)));
  Value normalF = arith::BitcastOp::create(k.b, k.loc, k.withElement(f32), normal);
  // Subnormals: m · 2^-9 with the sign.
  Value mf = arith::UIToFPOp::create(k.b, k.loc, k.withElement(f32), m);
  Value sub = arith::MulFOp::create(k.b, k.loc, mf, k.cf(f32, 1.0 / 512.0));
  Value subS = k.sel(k.cmp(arith::CmpIPredicate::ne, s, 0),
                     arith::NegFOp::create(k.b, k.loc, sub), sub);
  Value nan = arith::BitcastOp::create(k.b, k.loc, k.withElement(f32),
                                       k.bor(sign, k.i32(0x7FC00000)));
  Value isNan = k.cmp(arith::CmpIPredicate::eq, k.band(code, 0x7F), 0x7F);
  Value isSub = k.cmp(arith::CmpIPredicate::eq, e, 0);
  return k.sel(isNan, nan, k.sel(isSub, subS, normalF));
}

/// f32 value of an E2M1FN code held in i32.
static Value decodeE2M1(const Bits &k, Value code) {
  Type f32 = k.b.getF32Type();
  Value s = k.band(k.shr(code, 3), 1), e = k.band(k.shr(code, 1), 3), m = k.band(code, 1);
  Value sign = k.shl(s, 31);
  Value normal = k.bor(sign, k.bor(k.shl(k.add(e, k.i32(126)), 23), k.shl(m, 22)));
  Value normalF = arith::BitcastOp::create(k.b, k.loc, k.withElement(f32), normal);
  // e == 0: ±m·0.5
  Value half = arith::BitcastOp::create(
      k.b, k.loc, k.withElement(f32), k.bor(sign, k.sel(k.cmp(arith::CmpIPredicate::ne, m, 0),
                                                        k.i32(0x3F000000), k.i32(0))));
  return k.sel(k.cmp(arith::CmpIPredicate::eq, e, 0), half, normalF);
}

/// E4M3FN code (in i32) of f32 `x`: RNE, overflow and NaN → NaN (0x7F).
static Value encodeE4M3(const Bits &k, Value x) {
  Type f32 = k.b.getF32Type();
  Value bits = arith::BitcastOp::create(k.b, k.loc, k.withElement(k.b.getI32Type()), x);
  Value s = k.shr(bits, 31), a = k.band(bits, 0x7FFFFFFF);
  Value isNan = k.cmp(arith::CmpIPredicate::ugt, a, 0x7F800000);
  // Normal range: round the 23-bit mantissa to 3 bits at bit 20, ties to even.
  Value rounded = k.add(a, k.add(k.i32(0x7FFFF), k.band(k.shr(a, 20), 1)));
  Value normal = arith::SubIOp::create(k.b, k.loc, k.shr(rounded, 20), k.i32(120 << 3));
  Value overflow = k.cmp(arith::CmpIPredicate::sgt, normal, 0x7E);
  // Subnormal range (|x| < 2^-6): round |x|·2^9 to an integer, ties to even.
  Value absF = arith::BitcastOp::create(k.b, k.loc, k.withElement(f32), a);
  Value scaled = arith::MulFOp::create(k.b, k.loc, absF, k.cf(f32, 512.0));
  Value sub = arith::FPToUIOp::create(k.b, k.loc, k.withElement(k.b.getI32Type()),
                                      math::RoundEvenOp::create(k.b, k.loc, scaled));
  Value isNormal = k.cmp(arith::CmpIPredicate::uge, a, 121 << 23);
  Value code = k.sel(isNormal, k.sel(overflow, k.i32(0x7F), normal), sub);
  code = k.sel(isNan, k.i32(0x7F), code);
  return k.bor(k.shl(s, 7), code);
}

/// bf16 code (in i32) of f32 `x`: round to nearest even on the bits (bf16
/// has f32's exponent range, so subnormals round like the rest and a carry
/// into the exponent gives the next binade or ±inf); NaN stays a quiet NaN
/// with its sign and the payload's top bits (vcvtneps2bf16's and the
/// runtime's __truncsfbf2's rule).
static Value encodeBf16(const Bits &k, Value x) {
  Value bits = arith::BitcastOp::create(k.b, k.loc, k.withElement(k.b.getI32Type()), x);
  Value isNan = k.cmp(arith::CmpIPredicate::ugt, k.band(bits, 0x7FFFFFFF), 0x7F800000);
  Value rounded = k.shr(k.add(bits, k.add(k.i32(0x7FFF), k.band(k.shr(bits, 16), 1))), 16);
  return k.sel(isNan, k.bor(k.shr(bits, 16), k.i32(0x40)), rounded);
}

/// E2M1FN code (in i32) of f32 `x`: RNE, saturating at ±6; NaN → +0.
static Value encodeE2M1(const Bits &k, Value x) {
  Type f32 = k.b.getF32Type();
  Value bits = arith::BitcastOp::create(k.b, k.loc, k.withElement(k.b.getI32Type()), x);
  Value s = k.shr(bits, 31);
  Value v = math::AbsFOp::create(k.b, k.loc, x);
  // Code k+1 starts above the midpoint between values k and k+1; a tie goes
  // to the even code.
  const double mid[7] = {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0};
  Value code = k.i32(0);
  for (int i = 0; i < 7; ++i) {
    auto pred = i % 2 == 0 ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OGE;
    Value up = arith::CmpFOp::create(k.b, k.loc, pred, v, k.cf(f32, mid[i]));
    code = k.add(code, arith::ExtUIOp::create(k.b, k.loc, k.withElement(k.b.getI32Type()), up));
  }
  Value isNan = arith::CmpFOp::create(k.b, k.loc, arith::CmpFPredicate::UNO, x, x);
  Value signed_ = k.bor(k.shl(s, 3), code);
  return k.sel(isNan, k.i32(0), signed_);
}

/// f32 of a wider float `x` rounded to odd: truncated toward zero, and when
/// that was inexact the last mantissa bit set. Rounding this to E4M3/E2M1
/// (far fewer than 24 - 2 bits) to nearest even equals rounding `x` once; a
/// plain f32 rounding first could make a value just past a tie into a tie.
static Value roundToOddF32(const Bits &k, Value x) {
  Type f32 = k.b.getF32Type(), i32 = k.b.getI32Type();
  Value r = arith::TruncFOp::create(k.b, k.loc, k.withElement(f32), x);
  Value back = arith::ExtFOp::create(k.b, k.loc, x.getType(), r);
  Value exact = arith::CmpFOp::create(k.b, k.loc, arith::CmpFPredicate::OEQ, back, x);
  Value away = arith::CmpFOp::create(k.b, k.loc, arith::CmpFPredicate::OGT,
                                     math::AbsFOp::create(k.b, k.loc, back),
                                     math::AbsFOp::create(k.b, k.loc, x));
  Value bits = arith::BitcastOp::create(k.b, k.loc, k.withElement(i32), r);
  // Rounded away from zero: one step back toward it (the sign is above).
  Value toward = k.sel(away, arith::SubIOp::create(k.b, k.loc, bits, k.i32(1)), bits);
  Value odd = k.sel(exact, bits, k.bor(toward, k.i32(1)));
  return arith::BitcastOp::create(k.b, k.loc, k.withElement(f32), odd);
}

static bool isLowPrecision(Type t) { return isa<Float8E4M3FNType, Float4E2M1FNType>(t); }

/// f32 ↔ any other float type, by the existing extf/truncf.
static Value fromF32(const Bits &k, Value v, Type to) {
  Type t = k.withElement(to);
  if (to.isF32())
    return v;
  if (to.getIntOrFloatBitWidth() > 32)
    return arith::ExtFOp::create(k.b, k.loc, t, v);
  return arith::TruncFOp::create(k.b, k.loc, t, v);
}

struct ExpandExtF : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op, PatternRewriter &rw) const override {
    Type src = getElementTypeOrSelf(op.getIn().getType());
    if (!isLowPrecision(src))
      return failure();
    Bits k{rw, op.getLoc(), op.getIn().getType()};
    bool e4m3 = isa<Float8E4M3FNType>(src);
    Value code = storageBits(k, op.getIn(), e4m3 ? 8 : 4);
    Value f = e4m3 ? decodeE4M3(k, code) : decodeE2M1(k, code);
    rw.replaceOp(op, fromF32(k, f, getElementTypeOrSelf(op.getType())));
    return success();
  }
};

struct ExpandTruncF : OpRewritePattern<arith::TruncFOp> {
  ExpandTruncF(MLIRContext *ctx, bool includeBf16)
      : OpRewritePattern(ctx), includeBf16(includeBf16) {}

  LogicalResult matchAndRewrite(arith::TruncFOp op, PatternRewriter &rw) const override {
    Type dst = getElementTypeOrSelf(op.getType());
    Value x = op.getIn();
    Type src = getElementTypeOrSelf(x.getType());
    // bf16 and f64 → f16 only with the default rounding (to nearest even).
    auto mode = op.getRoundingmodeAttr();
    bool nearest = !mode || mode.getValue() == arith::RoundingMode::to_nearest_even;
    bool bf16 = includeBf16 && nearest && dst.isBF16();
    bool wideToF16 = includeBf16 && nearest && dst.isF16() && src.getIntOrFloatBitWidth() > 32;
    if (!isLowPrecision(dst) && !bf16 && !wideToF16)
      return failure();
    if (isLowPrecision(src))
      return failure(); // f8 → f4 goes through f32: extf first.
    Bits k{rw, op.getLoc(), x.getType()};
    Type f32 = rw.getF32Type();
    if (!src.isF32())
      x = src.getIntOrFloatBitWidth() > 32
              ? roundToOddF32(k, x)
              : Value(arith::ExtFOp::create(rw, op.getLoc(), k.withElement(f32), x));
    if (wideToF16) {
      // f32 → f16 is F16C's vcvtps2ph (or compiler-rt without it).
      auto narrow = arith::TruncFOp::create(rw, op.getLoc(), op.getType(), x);
      narrow->setAttrs(op->getAttrs()); // fastmath flags, rounding mode
      rw.replaceOp(op, narrow);
      return success();
    }
    Value code;
    unsigned width;
    if (bf16) {
      code = encodeBf16(k, x);
      width = 16;
    } else if (isa<Float8E4M3FNType>(dst)) {
      code = encodeE4M3(k, x);
      width = 8;
    } else {
      code = encodeE2M1(k, x);
      width = 4;
    }
    Value narrow = arith::TruncIOp::create(rw, op.getLoc(),
                                           k.withElement(rw.getIntegerType(width)), code);
    rw.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), narrow);
    return success();
  }

private:
  bool includeBf16;
};

/// A scalar select between 8-, 6- or 4-bit floats: on their bits.
struct ExpandSelect : OpRewritePattern<arith::SelectOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::SelectOp op, PatternRewriter &rw) const override {
    Type t = op.getType();
    if (!isa<FloatType>(t) || !isLowPrecision(t))
      return failure();
    Type bits = rw.getIntegerType(t.getIntOrFloatBitWidth());
    Location loc = op.getLoc();
    Value a = arith::BitcastOp::create(rw, loc, bits, op.getTrueValue());
    Value b = arith::BitcastOp::create(rw, loc, bits, op.getFalseValue());
    Value r = arith::SelectOp::create(rw, loc, op.getCondition(), a, b);
    rw.replaceOpWithNewOp<arith::BitcastOp>(op, t, r);
    return success();
  }
};

struct ExpandLowPrecisionFloatsPass
    : rlx::impl::ExpandLowPrecisionFloatsBase<ExpandLowPrecisionFloatsPass> {
  using ExpandLowPrecisionFloatsBase::ExpandLowPrecisionFloatsBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    rlx::populateExpandLowPrecisionFloatPatterns(patterns, includeBf16);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::rlx::populateExpandLowPrecisionFloatPatterns(RewritePatternSet &patterns,
                                                        bool includeBf16) {
  patterns.add<ExpandExtF>(patterns.getContext());
  patterns.add<ExpandTruncF>(patterns.getContext(), includeBf16);
  // (An f8 constant feeding a select becomes an integer constant: the
  // bitcast of a constant folds.)
  patterns.add<ExpandSelect>(patterns.getContext());
}
