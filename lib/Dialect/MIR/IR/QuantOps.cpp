//===- QuantOps.cpp - quantize / dequantize: shape and range rules --------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "RuleUtils.h"

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
      want[*axis] = isDynamicDim(d) ? ShapedType::kDynamic : (d + *group - 1) / *group;
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
  return mb.createWithOptional<Op>(input, scale, zp, axisAttr, op.getGroupSizeAttr(),
                                   op.getQuantMinAttr(), op.getQuantMaxAttr(),
                                   op.getIsUnsignedAttr());
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
  dx.assign(getNumOperands(), Value());
  return success();
}
LogicalResult QuantizeOp::jvp(MIRBuilder &, ValueRange, SmallVectorImpl<Value> &dy) {
  dy.assign(1, Value());
  return success();
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
  // d x / d scale = q - zero_point: a dequantize with unit scales.
  RankedTensorType sType = getScale().getType();
  Value ones = mb.broadcast(mb.scalar(mb.builder().getF32Type(), 1.0),
                            MIRBuilder::pattern(sType.getShape()));
  Value prod = mb.mul(g, rebuild(mb, *this, getInput(), ones, getZeroPoint(), getAxis()));
  ArrayRef<int64_t> x = getInput().getType().getShape();
  int64_t rank = x.size();
  SmallVector<int64_t> axes;
  Value ds;
  if (!getAxis()) {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
    ds = mb.reduce(ReduceKind::Sum, prod, axes, /*keepDims=*/false);
  } else {
    int64_t a = axisFromZero(*getAxis(), rank);
    if (!getGroupSize()) {
      for (int64_t d = 0; d < rank; ++d)
        if (d != a)
          axes.push_back(d);
      ds = axes.empty() ? prod : mb.reduce(ReduceKind::Sum, prod, axes, /*keepDims=*/false);
    } else {
      int64_t group = *getGroupSize();
      if (ShapedType::isDynamic(x[a]) || x[a] % group != 0)
        return noRule(*this, Mode::Reverse, "the last group along the axis is partial");
      SmallVector<int64_t> split(MIRBuilder::pattern(x));
      split[a] = x[a] / group;
      split.insert(split.begin() + a + 1, group);
      ds = mb.reduce(ReduceKind::Sum, mb.reshape(prod, split), {a + 1}, /*keepDims=*/false);
    }
  }
  if (ds && sType.getElementType() != mb.elementType(ds))
    ds = mb.cast(ds, sType.getElementType());
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
