//===- QuantOps.cpp - quantize / dequantize: shape and range rules --------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

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
