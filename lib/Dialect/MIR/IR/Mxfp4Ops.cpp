//===- Mxfp4Ops.cpp - mxfp4_dequantize: shape rule ------------------------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

LogicalResult Mxfp4DequantizeOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                                  Adaptor a, SmallVectorImpl<Type> &out) {
  auto blocks = getRankedTensor(loc, a.getBlocks(), "blocks");
  auto scales = getRankedTensor(loc, a.getScales(), "scales");
  if (failed(blocks) || failed(scales))
    return failure();
  ArrayRef<int64_t> b = blocks->getShape(), s = scales->getShape();
  if (b.empty() || b.back() != 16)
    return shapeError(loc, "mxfp4_dequantize blocks must be [..., G, 16] (32 codes a block), got " +
                               shapeToString(b));
  if (s.empty() || failed(verifyCompatibleShape(s, b.drop_back())))
    return shapeError(loc, "mxfp4_dequantize scales must be blocks' shape without its last dim (" +
                               shapeToString(b.drop_back()) + "), got " + shapeToString(s));
  SmallVector<int64_t> shape(b.drop_back());
  int64_t g = shape.back();
  shape.back() = ShapedType::isDynamic(g) ? ShapedType::kDynamic : g * 32;
  out.push_back(RankedTensorType::get(shape, Float32Type::get(ctx)));
  return success();
}
