//===- QuantOps.cpp - quantize / dequantize: shape and range rules --------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "RuleUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

/// The checks quantize and dequantize share: granularity from axis and
/// group_size, the scale and zero point shapes, the integer range.
template <typename Adaptor>
LogicalResult checkQuantParams(OptLoc loc, StringRef op, RankedTensorType input, Adaptor a) {
  auto scale = getRankedTensor(loc, a.getScale(), "scale");
  if (failed(scale))
    return failure();
  ArrayRef<int64_t> x = input.getShape(), s = scale->getShape();
  std::optional<int64_t> axisAttr = a.getAxis(), group = a.getGroupSize();
  Shape want;
  if (!axisAttr) {
    if (group)
      return shapeError(loc, op + " group_size needs an axis");
  } else {
    FailureOr<int64_t> axis = normalizeAxis(loc, *axisAttr, input.getRank());
    if (failed(axis))
      return failure();
    if (!group) {
      want.push_back(x[*axis]);
    } else {
      if (*group < 1)
        return shapeError(loc, op + " group_size must be at least 1, got " + Twine(*group));
      want.assign(x.begin(), x.end());
      int64_t d = x[*axis];
      want[*axis] = isDynamicDim(d) ? ShapedType::kDynamic : llvm::divideCeil(d, *group);
    }
  }
  const char *granularity = !axisAttr ? "per tensor" : group ? "per group" : "per axis";
  if (failed(verifyCompatibleShape(s, want)))
    return shapeError(loc, op + " scale must be " + shapeToString(want) + " " + granularity +
                               " for an input of " + shapeToString(x) + ", got " +
                               shapeToString(s));
  if (Value zp = a.getZeroPoint()) {
    auto zt = cast<RankedTensorType>(zp.getType());
    if (failed(verifyCompatibleShape(zt.getShape(), s)))
      return shapeError(loc, op + " zero_point must have scale's shape " + shapeToString(s) +
                                 ", got " + shapeToString(zt.getShape()));
  }
  bool isUnsigned = a.getIsUnsigned();
  int64_t lo = isUnsigned ? 0 : -128, hi = isUnsigned ? 255 : 127;
  int64_t qmin = a.getQuantMin().value_or(lo), qmax = a.getQuantMax().value_or(hi);
  if (qmin < lo || qmax > hi || qmin > qmax)
    return shapeError(loc, op + " range [" + Twine(qmin) + ", " + Twine(qmax) +
                               "] must be ordered and within the " +
                               (isUnsigned ? "unsigned" : "signed") + " byte's [" + Twine(lo) +
                               ", " + Twine(hi) + "]");
  return success();
}

} // namespace

LogicalResult QuantizeOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                           Adaptor a, SmallVectorImpl<Type> &out) {
  auto input = getRankedTensor(loc, a.getInput(), "input");
  if (failed(input) || failed(checkQuantParams(loc, "quantize", *input, a)))
    return failure();
  out.push_back(RankedTensorType::get(input->getShape(), IntegerType::get(ctx, 8)));
  return success();
}

LogicalResult DequantizeOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                             Adaptor a, SmallVectorImpl<Type> &out) {
  auto input = getRankedTensor(loc, a.getInput(), "input");
  if (failed(input) || failed(checkQuantParams(loc, "dequantize", *input, a)))
    return failure();
  out.push_back(RankedTensorType::get(input->getShape(), Float32Type::get(ctx)));
  return success();
}

template <typename Op> std::pair<int64_t, int64_t> rangeOf(Op op) {
  bool u = op.getIsUnsigned();
  return {op.getQuantMin().value_or(u ? 0 : -128), op.getQuantMax().value_or(u ? 255 : 127)};
}
std::pair<int64_t, int64_t> QuantizeOp::getRange() { return rangeOf(*this); }
std::pair<int64_t, int64_t> DequantizeOp::getRange() { return rangeOf(*this); }
std::pair<int64_t, int64_t> FakeQuantizeOp::getRange() { return rangeOf(*this); }

LogicalResult FakeQuantizeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                               Adaptor a, SmallVectorImpl<Type> &out) {
  auto input = getRankedTensor(loc, a.getInput(), "input");
  if (failed(input) || failed(checkQuantParams(loc, "fake_quantize", *input, a)))
    return failure();
  if (std::optional<StringRef> ste = a.getSte();
      ste && !llvm::is_contained({"clipped", "identity", "hard_tanh", "tanh"}, *ste))
    return shapeError(loc, "fake_quantize ste must be \"clipped\", \"identity\", \"hard_tanh\" "
                           "or \"tanh\", got \"" + *ste + "\"");
  out.push_back(*input);
  return success();
}

//===----------------------------------------------------------------------===//
// Derivative and vmap rules
//===----------------------------------------------------------------------===//

namespace {
using namespace mlir::rlx::mir::rules;

/// `op` again on new operands, with `axis` (the others as they are).
template <typename Op>
Value rebuild(MIRBuilder &mb, Op op, Value input, Value scale, Value zp,
              std::optional<int64_t> axis) {
  Builder &b = mb.builder();
  IntegerAttr axisAttr = axis ? b.getI64IntegerAttr(*axis) : IntegerAttr();
  if (!input || !scale)
    return mb.fail();
  auto build = [&](auto... extra) {
    return mb.createWithOptional<Op>(input, scale, zp, axisAttr, op.getGroupSizeAttr(),
                                     op.getQuantMinAttr(), op.getQuantMaxAttr(),
                                     op.getIsUnsignedAttr(), extra...);
  };
  if constexpr (std::is_same_v<Op, FakeQuantizeOp>)
    return build(op.getSteAttr(), op.getScaleGradAttr());
  else
    return build();
}

/// `p` (a scale or zero point, of the scale's shape) expanded so that it
/// numpy-broadcasts against the input: per axis a reshape, per group each
/// entry repeated group_size times along the axis.
template <typename Op> Value expandParam(MIRBuilder &mb, Op op, Value p) {
  // Rank 0 (per tensor, or fake_quantize's absent zero point) broadcasts.
  if (!op.getAxis() || !p || MIRBuilder::typeOf(p).getRank() == 0)
    return p;
  ArrayRef<int64_t> x = op.getInput().getType().getShape();
  int64_t rank = x.size(), a = axisFromZero(*op.getAxis(), rank);
  if (!op.getGroupSize()) {
    SmallVector<int64_t> shape(rank, 1);
    shape[a] = -1;
    return mb.reshape(p, shape);
  }
  int64_t g = *op.getGroupSize();
  SmallVector<int64_t> pattern(MIRBuilder::pattern(MIRBuilder::shapeOf(p)));
  int64_t groups = MIRBuilder::shapeOf(p)[a];
  if (ShapedType::isDynamic(groups) || ShapedType::isDynamic(x[a]))
    return mb.fail();
  SmallVector<int64_t> split(pattern), wide(pattern), flat(pattern);
  split.insert(split.begin() + a + 1, 1);
  wide.insert(wide.begin() + a + 1, g);
  flat[a] = groups * g;
  Value v = mb.reshape(mb.broadcast(mb.reshape(p, split), wide), flat);
  if (groups * g == x[a])
    return v;
  SmallVector<int64_t> offsets(rank, 0), sizes(flat), strides(rank, 1);
  sizes[a] = x[a];
  return mb.slice(v, offsets, sizes, strides);
}

/// Whether the last group along the axis is partial (or unknown).
template <typename Op> bool partialGroup(Op op) {
  if (!op.getAxis() || !op.getGroupSize())
    return false;
  ArrayRef<int64_t> x = op.getInput().getType().getShape();
  int64_t d = x[axisFromZero(*op.getAxis(), x.size())];
  return ShapedType::isDynamic(d) || d % *op.getGroupSize() != 0;
}

/// `g` (the input's shape) summed over the elements of each scale: the
/// scale's shape. Only for groups that divide the axis: the callers refuse a
/// partial last group first (partialGroup).
template <typename Op> Value sumToScale(MIRBuilder &mb, Op op, Value g) {
  ArrayRef<int64_t> x = op.getInput().getType().getShape();
  int64_t rank = x.size();
  SmallVector<int64_t> axes;
  Value r;
  if (!op.getAxis()) {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
    r = mb.reduce(ReduceKind::Sum, g, axes, /*keepDims=*/false);
  } else if (int64_t a = axisFromZero(*op.getAxis(), rank); !op.getGroupSize()) {
    for (int64_t d = 0; d < rank; ++d)
      if (d != a)
        axes.push_back(d);
    r = axes.empty() ? g : mb.reduce(ReduceKind::Sum, g, axes, /*keepDims=*/false);
  } else {
    int64_t group = *op.getGroupSize();
    if (ShapedType::isDynamic(x[a]) || x[a] % group != 0)
      return mb.fail(); // partialGroup(op): the callers say so first
    SmallVector<int64_t> split(MIRBuilder::pattern(x));
    split[a] = x[a] / group;
    split.insert(split.begin() + a + 1, group);
    r = mb.reduce(ReduceKind::Sum, mb.reshape(g, split), {a + 1}, /*keepDims=*/false);
  }
  Type st = op.getScale().getType().getElementType();
  return r && mb.elementType(r) != st ? mb.cast(r, st) : r;
}

/// The vmap rule both ops share: a batched input with shared scales (the
/// axis moves by one), or per-tensor scales batched (per axis 0 then).
template <typename Op>
LogicalResult batchQuant(Op op, MIRBuilder &mb, ValueRange operands, ArrayRef<bool> batched,
                         SmallVectorImpl<Value> &results) {
  int64_t n = batchSize(operands, batched);
  Value input = operands[0], scale = operands[1], zp = op.getZeroPoint() ? operands[2] : Value();
  auto withLead = [&](Value v) {
    SmallVector<int64_t> pattern{ShapedType::isDynamic(n) ? -1 : n};
    llvm::append_range(pattern, MIRBuilder::pattern(MIRBuilder::shapeOf(v)));
    return mb.broadcast(v, pattern);
  };
  bool paramsBatched = llvm::any_of(batched.drop_front(), [](bool b) { return b; });
  std::optional<int64_t> axis = op.getAxis();
  if (!paramsBatched) {
    if (axis)
      axis = axisFromZero(*axis, op.getInput().getType().getRank()) + 1;
    if (op.getGroupSize()) { // per group: the scales have the input's rank
      scale = withLead(scale);
      zp = zp ? withLead(zp) : zp;
    }
    return single(op, mb, rebuild(mb, op, input, scale, zp, axis), Mode::Batching, results);
  }
  if (axis)
    return noRule(op, Mode::Batching, "scales per axis or per group batched");
  if (!batched[0])
    input = withLead(input);
  if (!batched[1])
    scale = withLead(scale);
  if (zp && !batched[2])
    zp = withLead(zp);
  return single(op, mb, rebuild(mb, op, input, scale, zp, 0), Mode::Batching, results);
}

} // namespace

// The result is an integer: autodiff's activity analysis stops at it (as at
// every integer-valued op), so these only ever see zero (co)tangents.
LogicalResult QuantizeOp::vjp(MIRBuilder &, ValueRange, ArrayRef<bool>,
                              SmallVectorImpl<Value> &dx) {
  return noDerivative(*this, Mode::Reverse, dx);
}
LogicalResult QuantizeOp::jvp(MIRBuilder &, ValueRange, SmallVectorImpl<Value> &dy) {
  return noDerivative(*this, Mode::Forward, dy);
}
LogicalResult QuantizeOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool> batched,
                                SmallVectorImpl<Value> &results) {
  return batchQuant(*this, mb, operands, batched, results);
}

LogicalResult DequantizeOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool> need,
                                SmallVectorImpl<Value> &dx) {
  dx.assign(getNumOperands(), Value());
  Value g = firstOf(cotangents);
  if (!g || !wants(need, 1))
    return success();
  if (partialGroup(*this))
    return noRule(*this, Mode::Reverse, "the last group along the axis is partial");
  // d x / d scale = q - zero_point: a dequantize with unit scales.
  RankedTensorType sType = getScale().getType();
  Value ones = mb.broadcast(mb.scalar(mb.builder().getF32Type(), 1.0),
                            MIRBuilder::pattern(sType.getShape()));
  Value prod = mb.mul(g, rebuild(mb, *this, getInput(), ones, getZeroPoint(), getAxis()));
  Value ds = sumToScale(mb, *this, prod);
  if (mb.failed() || !ds)
    return noRule(*this, Mode::Reverse, "the rule's ops reject these operand types");
  dx[1] = ds;
  return success();
}
LogicalResult DequantizeOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  Value ds = tangents.size() > 1 ? tangents[1] : Value();
  if (!ds) {
    dy.assign(1, Value());
    return success();
  }
  return single(*this, mb, rebuild(mb, *this, getInput(), ds, getZeroPoint(), getAxis()),
                Mode::Forward, dy);
}
LogicalResult DequantizeOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool> batched,
                                  SmallVectorImpl<Value> &results) {
  return batchQuant(*this, mb, operands, batched, results);
}

//===----------------------------------------------------------------------===//
// fake_quantize: straight-through and LSQ derivatives
//===----------------------------------------------------------------------===//

namespace {

/// Per element, in f32 (f64 for f64 inputs): the input's derivative factor
/// (the estimator `ste` as the op's description defines it) and LSQ's scale
/// factor, from x and the expanded scale and zero point.
struct SteFactors {
  Value dInput, dScale;
};
Value toFloat(OpBuilder &b, Location l, Value v, FloatType ft) {
  auto t = cast<FloatType>(v.getType());
  if (t == ft)
    return v;
  return t.getWidth() < ft.getWidth() ? arith::ExtFOp::create(b, l, ft, v).getResult()
                                      : arith::TruncFOp::create(b, l, ft, v).getResult();
}
SteFactors steFactors(OpBuilder &b, Location l, FakeQuantizeOp op, FloatType ft, Value x,
                      Value s, Value z) {
  auto toFt = [&](Value v) { return toFloat(b, l, v, ft); };
  auto c = [&](double v) { return arith::ConstantOp::create(b, l, b.getFloatAttr(ft, v)); };
  auto [qmin, qmax] = op.getRange();
  Value zf = toFt(z);
  Value u = arith::DivFOp::create(b, l, toFt(x), toFt(s));
  Value r = math::RoundEvenOp::create(b, l, u);
  Value v = arith::AddFOp::create(b, l, r, zf);
  Value below = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, v, c(double(qmin)));
  Value above = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, v, c(double(qmax)));
  Value one = c(1.0), zero = c(0.0);
  Value dInput = one;
  StringRef ste = op.getSte().value_or("clipped");
  auto outside = [&](Value lo, Value hi) {
    return arith::SelectOp::create(b, l, arith::OrIOp::create(b, l, lo, hi), zero, one);
  };
  if (ste == "clipped") {
    dInput = outside(below, above);
  } else if (ste == "hard_tanh") {
    Value code = arith::AddFOp::create(b, l, u, zf); // unrounded
    dInput = outside(arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, code, c(double(qmin))),
                     arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, code, c(double(qmax))));
  } else if (ste == "tanh" && qmin == qmax) {
    dInput = zero; // a one-code range: the surrogate is constant
  } else if (ste == "tanh") {
    // 1 − tanh²((u + zp − center) / half_width) over the range's center and half width.
    double center = 0.5 * double(qmin + qmax), half = 0.5 * double(qmax - qmin);
    Value t = arith::DivFOp::create(
        b, l, arith::SubFOp::create(b, l, arith::AddFOp::create(b, l, u, zf), c(center)),
        c(half));
    Value th = math::TanhOp::create(b, l, t);
    dInput = arith::SubFOp::create(b, l, one, arith::MulFOp::create(b, l, th, th));
  }
  Value lo = arith::SubFOp::create(b, l, c(double(qmin)), zf);
  Value hi = arith::SubFOp::create(b, l, c(double(qmax)), zf);
  Value dScale = arith::SelectOp::create(
      b, l, below, lo, arith::SelectOp::create(b, l, above, hi, arith::SubFOp::create(b, l, r, u)));
  if (std::optional<APFloat> g = op.getScaleGrad())
    dScale = arith::MulFOp::create(b, l, dScale, c(g->convertToDouble()));
  return {dInput, dScale};
}

FloatType computeType(FakeQuantizeOp op) {
  Type et = op.getInput().getType().getElementType();
  return et.isF64() ? cast<FloatType>(et) : Float32Type::get(op.getContext());
}

/// The input, the expanded scale and the expanded zero point (as floats; a
/// 0 scalar when absent) of `op`.
SmallVector<Value> steOperands(MIRBuilder &mb, FakeQuantizeOp op) {
  Value z;
  if (Value zp = op.getZeroPoint())
    z = mb.createWithOptional<DequantizeOp>(
        zp, mb.scalar(mb.builder().getF32Type(), 1.0), Value(), IntegerAttr(), IntegerAttr(),
        IntegerAttr(), IntegerAttr(), op.getIsUnsignedAttr());
  else
    z = mb.scalar(mb.builder().getF32Type(), 0.0);
  return {op.getInput(), expandParam(mb, op, op.getScale()), expandParam(mb, op, z)};
}

} // namespace

LogicalResult FakeQuantizeOp::vjp(MIRBuilder &mb, ValueRange cotangents, ArrayRef<bool> need,
                                  SmallVectorImpl<Value> &dx) {
  dx.assign(getNumOperands(), Value());
  Value g = firstOf(cotangents);
  if (!g || !(wants(need, 0) || wants(need, 1)))
    return success();
  if (wants(need, 1) && partialGroup(*this))
    return noRule(*this, Mode::Reverse, "the last group along the axis is partial");
  FloatType ft = computeType(*this);
  RankedTensorType in = getInput().getType();
  SmallVector<Value> ins = steOperands(mb, *this);
  ins.push_back(g);
  SmallVector<Value> r = mb.elementwise(
      {in, in.clone(ft)}, ins, [&](OpBuilder &b, Location l, ValueRange a) -> SmallVector<Value> {
        SteFactors f = steFactors(b, l, *this, ft, a[0], a[1], a[2]);
        Value gf = toFloat(b, l, a[3], ft);
        Value dxv = arith::MulFOp::create(b, l, gf, f.dInput);
        return {toFloat(b, l, dxv, cast<FloatType>(in.getElementType())),
                arith::MulFOp::create(b, l, gf, f.dScale)};
      });
  if (wants(need, 0))
    dx[0] = r[0];
  if (wants(need, 1))
    dx[1] = sumToScale(mb, *this, r[1]);
  return done(*this, mb, Mode::Reverse);
}

LogicalResult FakeQuantizeOp::jvp(MIRBuilder &mb, ValueRange tangents, SmallVectorImpl<Value> &dy) {
  Value tx = tangents.size() > 0 ? tangents[0] : Value();
  Value ts = tangents.size() > 1 ? tangents[1] : Value();
  if (!tx && !ts) {
    dy.assign(1, Value());
    return success();
  }
  FloatType ft = computeType(*this);
  RankedTensorType in = getInput().getType();
  SmallVector<Value> ins = steOperands(mb, *this);
  ins.push_back(tx ? tx : mb.scalar(in.getElementType(), 0.0));
  ins.push_back(ts ? expandParam(mb, *this, ts) : mb.scalar(getScale().getType().getElementType(), 0.0));
  SmallVector<Value> r = mb.elementwise(
      {in}, ins, [&](OpBuilder &b, Location l, ValueRange a) -> SmallVector<Value> {
        SteFactors f = steFactors(b, l, *this, ft, a[0], a[1], a[2]);
        Value y = arith::AddFOp::create(
            b, l, arith::MulFOp::create(b, l, toFloat(b, l, a[3], ft), f.dInput),
            arith::MulFOp::create(b, l, toFloat(b, l, a[4], ft), f.dScale));
        return {toFloat(b, l, y, cast<FloatType>(in.getElementType()))};
      });
  return single(*this, mb, r[0], Mode::Forward, dy);
}

LogicalResult FakeQuantizeOp::batch(MIRBuilder &mb, ValueRange operands, ArrayRef<bool> batched,
                                    SmallVectorImpl<Value> &results) {
  return batchQuant(*this, mb, operands, batched, results);
}

//===----------------------------------------------------------------------===//
// qmatmul
//===----------------------------------------------------------------------===//

LogicalResult QMatmulOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                          Adaptor a, SmallVectorImpl<Type> &out) {
  auto lhs = getRankedTensor(loc, a.getLhs(), "lhs");
  auto rhs = getRankedTensor(loc, a.getRhs(), "rhs");
  if (failed(lhs) || failed(rhs))
    return failure();
  if (lhs->getRank() < 2 || rhs->getRank() != 2)
    return shapeError(loc, "qmatmul needs lhs [..., M, K] and rhs [K, N] (or [N, K] with "
                           "transpose_b), got " + shapeToString(lhs->getShape()) + " and " +
                               shapeToString(rhs->getShape()));
  bool tb = static_cast<bool>(a.getTransposeB());
  int64_t k = lhs->getShape().back(), kr = rhs->getDimSize(tb ? 1 : 0);
  if (!dimsMatch(k, kr))
    return shapeError(loc, "qmatmul K is " + Twine(k) + " in lhs but " + Twine(kr) + " in rhs");
  int64_t kk = ShapedType::isDynamic(k) ? kr : k;
  if (!ShapedType::isDynamic(kk) && kk >= 33025)
    return shapeError(loc, "qmatmul K = " + Twine(kk) +
                               " could overflow its i32 accumulator (K · 255² must fit)");
  for (auto [zp, isUnsigned, name] :
       {std::tuple{a.getLhsZeroPoint(), static_cast<bool>(a.getLhsUnsigned()), "lhs"},
        std::tuple{a.getRhsZeroPoint(), static_cast<bool>(a.getRhsUnsigned()), "rhs"}}) {
    if (!zp)
      continue;
    int64_t v = *zp, lo = isUnsigned ? 0 : -128, hi = isUnsigned ? 255 : 127;
    if (v < lo || v > hi)
      return shapeError(loc, Twine("qmatmul ") + name + "_zero_point " + Twine(v) +
                                 " is outside its storage's range [" + Twine(lo) + ", " +
                                 Twine(hi) + "]");
  }
  SmallVector<int64_t> shape(lhs->getShape());
  shape.back() = rhs->getDimSize(tb ? 0 : 1);
  out.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 32)));
  return success();
}
