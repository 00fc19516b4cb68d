//===- DataMovement.cpp - reshape, slice, concat → tensor ops -------------===//
//
// The MIR data movement that is a view or a copy at the buffer level:
// reshape → tensor.collapse_shape/expand_shape over the op's dim groups,
// slice → tensor.extract_slice, concat → insert_slices into one tensor.
// convert-rlx-mir-to-lir and convert-rlx-mir-to-linalg both use them.
//
//===----------------------------------------------------------------------===//

#include "RLX/Conversion/MIRToTensor/MIRToTensor.h"

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

RankedTensorType tensorTypeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

Value empty(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
}

struct ReshapeLowering : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ReshapeOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    RankedTensorType in = tensorTypeOf(a.getInput()), out = op.getType();
    Location loc = op.getLoc();
    if (in.getRank() == 0 || out.getRank() == 0) {
      // Scalars: collapse everything or expand from nothing.
      if (out.getRank() == 0)
        rw.replaceOpWithNewOp<tensor::CollapseShapeOp>(op, out, a.getInput(),
                                                       SmallVector<ReassociationIndices>{});
      else
        rw.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, out, a.getInput(),
                                                     SmallVector<ReassociationIndices>{});
      return success();
    }
    if (out.hasStaticShape() && out.getNumElements() == 0) {
      // No elements to move (the shape rules made `out` static).
      rw.replaceOp(op, empty(rw, loc, out));
      return success();
    }
    auto groups = computeReshapeGroups(std::nullopt, in.getShape(), out.getShape());
    if (failed(groups))
      return rw.notifyMatchFailure(op, "no reshape grouping");
    SmallVector<ReassociationIndices> inGroups, outGroups;
    SmallVector<int64_t> mid;
    for (const ReshapeGroup &g : *groups) {
      ReassociationIndices ig, og;
      int64_t n = 1;
      for (unsigned d = g.inBegin; d < g.inEnd; ++d) {
        ig.push_back(d);
        n = ShapedType::isDynamic(n) || in.isDynamicDim(d) ? ShapedType::kDynamic
                                                           : n * in.getDimSize(d);
      }
      for (unsigned d = g.outBegin; d < g.outEnd; ++d)
        og.push_back(d);
      inGroups.push_back(ig);
      outGroups.push_back(og);
      mid.push_back(n);
    }
    Value v = a.getInput();
    if (mid.size() != static_cast<size_t>(in.getRank()))
      v = tensor::CollapseShapeOp::create(rw, loc,
                                          RankedTensorType::get(mid, in.getElementType()), v,
                                          inGroups);
    if (mid.size() != static_cast<size_t>(out.getRank()))
      v = tensor::ExpandShapeOp::create(rw, loc, out, v, outGroups);
    rw.replaceOp(op, v);
    return success();
  }
};

struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SliceOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    if (op.getType().hasStaticShape() && op.getType().getNumElements() == 0) {
      // x[o:o]: nothing to read (extract_slice rejects offsets at a dim's end).
      rw.replaceOp(op, empty(rw, op.getLoc(), op.getType()));
      return success();
    }
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (auto [o, s, st] : llvm::zip(op.getOffsets(), op.getType().getShape(), op.getStrides())) {
      offsets.push_back(rw.getIndexAttr(o));
      sizes.push_back(rw.getIndexAttr(s));
      strides.push_back(rw.getIndexAttr(st));
    }
    rw.replaceOpWithNewOp<tensor::ExtractSliceOp>(op, op.getType(), a.getInput(), offsets, sizes,
                                                  strides);
    return success();
  }
};

struct ConcatLowering : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ConcatOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    RankedTensorType out = op.getType();
    // I64Attr getters return uint64_t: read the axis as signed first.
    auto axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += out.getRank();
    Value acc = empty(rw, op.getLoc(), out);
    int64_t offset = 0;
    for (Value in : a.getInputs()) {
      auto t = tensorTypeOf(in);
      if (t.getShape()[axis] == 0)
        continue; // nothing to insert (an empty KV cache)
      SmallVector<OpFoldResult> offsets(out.getRank(), rw.getIndexAttr(0)), sizes, strides;
      for (int64_t d : t.getShape()) {
        sizes.push_back(rw.getIndexAttr(d));
        strides.push_back(rw.getIndexAttr(1));
      }
      offsets[axis] = rw.getIndexAttr(offset);
      acc = tensor::InsertSliceOp::create(rw, op.getLoc(), in, acc, offsets, sizes, strides);
      offset += t.getShape()[axis];
    }
    rw.replaceOp(op, acc);
    return success();
  }
};

} // namespace

void mlir::rlx::populateMIRDataMovementToTensorPatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering, SliceLowering, ConcatLowering>(patterns.getContext());
}
