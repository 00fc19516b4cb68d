//===- Nvfp4Math.cpp - NVFP4 scalar arithmetic ------------------------------===//

#include "RLX/Dialect/MIR/IR/Nvfp4Math.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <utility>

using namespace mlir;
using namespace mlir::rlx;

namespace {
Value i32c(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}
Value f32c(OpBuilder &b, Location loc, double v) {
  return arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(static_cast<float>(v)));
}
} // namespace

Value nvfp4::decodeE2M1(OpBuilder &b, Location loc, Value code) {
  // Magnitude bits e1 e0 m: value (1 + m/2)·2^(e-1) for e > 0 (f32 exponent
  // field 126 + e, mantissa bit 22 = m), m/2 for e = 0 (0 or 2^-1).
  Value e = arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, code, i32c(b, loc, 1)),
                                  i32c(b, loc, 3));
  Value m = arith::AndIOp::create(b, loc, code, i32c(b, loc, 1));
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, code, i32c(b, loc, 8)), i32c(b, loc, 28));
  Value normal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, e, i32c(b, loc, 0));
  Value exponent = arith::SelectOp::create(
      b, loc, normal, arith::AddIOp::create(b, loc, e, i32c(b, loc, 126)),
      arith::MulIOp::create(b, loc, m, i32c(b, loc, 126)));
  Value mantissa = arith::SelectOp::create(
      b, loc, normal, arith::ShLIOp::create(b, loc, m, i32c(b, loc, 22)), i32c(b, loc, 0));
  Value bits = arith::OrIOp::create(
      b, loc, sign,
      arith::OrIOp::create(b, loc, arith::ShLIOp::create(b, loc, exponent, i32c(b, loc, 23)),
                           mantissa));
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

Value nvfp4::encodeE2M1(OpBuilder &b, Location loc, Value q) {
  Value a = math::AbsFOp::create(b, loc, q);
  // (threshold, ties go up) between consecutive magnitudes 0 .5 1 1.5 2 3 4 6.
  const std::pair<double, bool> cuts[] = {{0.25, false}, {0.75, true}, {1.25, false},
                                          {1.75, true},  {2.5, false}, {3.5, true},
                                          {5.0, false}};
  Type i32 = b.getI32Type();
  Value code = i32c(b, loc, 0);
  for (auto [t, up] : cuts) {
    Value c = arith::CmpFOp::create(
        b, loc, up ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT, a, f32c(b, loc, t));
    code = arith::AddIOp::create(b, loc, code, arith::ExtUIOp::create(b, loc, i32, c));
  }
  Value neg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, q, f32c(b, loc, 0.0));
  Value sign = arith::MulIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i32, neg),
                                     i32c(b, loc, 8));
  return arith::OrIOp::create(b, loc, code, sign);
}

Value nvfp4::decodeScale(OpBuilder &b, Location loc, Value s8) {
  Value s = arith::ExtFOp::create(b, loc, b.getF32Type(), s8);
  Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, s, s);
  return arith::SelectOp::create(b, loc, nan, f32c(b, loc, 0.0), s);
}

Value nvfp4::decodeE8M0(OpBuilder &b, Location loc, Value s8) {
  Type i32 = b.getI32Type();
  Value s = arith::ExtUIOp::create(b, loc, i32, s8);
  auto c = [&](int64_t v) { return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v)); };
  // The exponent field of an f32 is s itself; s = 0 is the subnormal 2^-127.
  Value bits = arith::ShLIOp::create(b, loc, s, c(23));
  Value zero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s, c(0));
  bits = arith::SelectOp::create(b, loc, zero, c(0x00400000), bits);
  Value nan = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s, c(255));
  bits = arith::SelectOp::create(b, loc, nan, c(0x7FC00000), bits);
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

Value nvfp4::globalScale(OpBuilder &b, Location loc, Value amax) {
  Value g = arith::DivFOp::create(b, loc, amax, f32c(b, loc, 448.0 * 6.0));
  Value zero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, g, f32c(b, loc, 0.0));
  return arith::SelectOp::create(b, loc, zero, f32c(b, loc, 1.0), g);
}

Value nvfp4::blockScale(OpBuilder &b, Location loc, Value blockAmax, Value global) {
  Value s = arith::DivFOp::create(
      b, loc, arith::DivFOp::create(b, loc, blockAmax, f32c(b, loc, 6.0)), global);
  return arith::TruncFOp::create(b, loc, b.getType<Float8E4M3FNType>(), s);
}

Value nvfp4::inverseScale(OpBuilder &b, Location loc, Value s8, Value global) {
  Value s = arith::MulFOp::create(b, loc, decodeScale(b, loc, s8), global);
  Value zero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, s, f32c(b, loc, 0.0));
  return arith::SelectOp::create(
      b, loc, zero, f32c(b, loc, 0.0),
      arith::DivFOp::create(b, loc, f32c(b, loc, 1.0), s));
}

AffineMap nvfp4::blockedScaleMap(MLIRContext *ctx) {
  AffineExpr n = getAffineDimExpr(0, ctx), blk = getAffineDimExpr(1, ctx);
  return AffineMap::get(
      2, 0, {n.floorDiv(128), blk.floorDiv(4), n % 32, (n % 128).floorDiv(32) * 4 + blk % 4}, ctx);
}

AffineMap nvfp4::blockedScaleInverseMap(MLIRContext *ctx) {
  AffineExpr tn = getAffineDimExpr(0, ctx), tk = getAffineDimExpr(1, ctx),
             r = getAffineDimExpr(2, ctx), j = getAffineDimExpr(3, ctx);
  return AffineMap::get(4, 0, {tn * 128 + j.floorDiv(4) * 32 + r, tk * 4 + j % 4}, ctx);
}

static Value applyNonNegative(OpBuilder &b, Location loc, AffineExpr e, ValueRange dims) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return dims[d.getPosition()];
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return arith::ConstantIndexOp::create(b, loc, c.getValue());
  auto bin = cast<AffineBinaryOpExpr>(e);
  Value x = applyNonNegative(b, loc, bin.getLHS(), dims);
  Value y = applyNonNegative(b, loc, bin.getRHS(), dims);
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return arith::AddIOp::create(b, loc, x, y);
  case AffineExprKind::Mul:
    return arith::MulIOp::create(b, loc, x, y);
  case AffineExprKind::Mod:
    return arith::RemUIOp::create(b, loc, x, y);
  case AffineExprKind::FloorDiv:
    return arith::DivUIOp::create(b, loc, x, y);
  case AffineExprKind::CeilDiv:
    return arith::CeilDivUIOp::create(b, loc, x, y);
  default:
    llvm_unreachable("symbols are not supported");
  }
}

SmallVector<Value> nvfp4::applyNonNegative(OpBuilder &b, Location loc, AffineMap map,
                                           ValueRange dims) {
  assert(map.getNumSymbols() == 0 && map.getNumDims() == dims.size());
  SmallVector<Value> out;
  for (AffineExpr e : map.getResults())
    out.push_back(::applyNonNegative(b, loc, e, dims));
  return out;
}
