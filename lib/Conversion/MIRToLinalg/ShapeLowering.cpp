//===- ShapeLowering.cpp - Data movement MIR ops → tensor/linalg ----------===//
//
// reshape → tensor.collapse_shape/expand_shape over the op's dim groups (views
// after bufferization), slice → tensor.extract_slice, concat → insert_slices
// into one tensor, transpose → linalg.transpose, broadcast → a copying
// linalg.generic, gather → a linalg.generic reading the table by index.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;
using namespace mlir::rlx::linalg_builders;

namespace {

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

struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(TransposeOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Value init = empty(rw, op.getLoc(), op.getType());
    rw.replaceOpWithNewOp<linalg::TransposeOp>(op, a.getInput(), init, op.getPermutation());
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

struct BroadcastLowering : OpConversionPattern<BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(BroadcastOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, elementwise(rw, op.getLoc(), a.getInput(), op.getType(),
                                 [](OpBuilder &, Location, ValueRange args) -> SmallVector<Value> {
                                   return {args[0]};
                                 }));
    return success();
  }
};

/// out[i..., j...] = table[clamp(ids[i...]), j...]
struct GatherLowering : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(GatherOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    RankedTensorType out = op.getType(), table = tensorTypeOf(a.getTable()),
                     ids = tensorTypeOf(a.getIndices());
    MLIRContext *ctx = rw.getContext();
    int64_t rank = out.getRank(), idRank = ids.getRank();
    SmallVector<AffineExpr> idExprs;
    for (int64_t d = 0; d < idRank; ++d)
      idExprs.push_back(getAffineDimExpr(d, ctx));
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, idExprs, ctx),
                                   AffineMap::getMultiDimIdentityMap(rank, ctx)};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value table_ = a.getTable();
    int64_t rows = table.getShape()[0];
    auto generic = linalg::GenericOp::create(
        rw, op.getLoc(), TypeRange{out}, ValueRange{a.getIndices()},
        ValueRange{empty(rw, op.getLoc(), out)}, maps, iters,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value id = arith::IndexCastOp::create(b, loc, b.getIndexType(), args[0]);
          // Out-of-range ids are clamped (documented on the op).
          id = arith::MaxSIOp::create(b, loc, id, cIndex(b, loc, 0));
          id = arith::MinSIOp::create(b, loc, id, cIndex(b, loc, rows - 1));
          SmallVector<Value> indices{id};
          for (int64_t d = idRank; d < rank; ++d)
            indices.push_back(linalg::IndexOp::create(b, loc, d));
          Value v = tensor::ExtractOp::create(b, loc, table_, indices);
          linalg::YieldOp::create(b, loc, v);
        });
    rw.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void mlir::rlx::populateMIRDataMovementToTensorPatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering, SliceLowering, ConcatLowering>(patterns.getContext());
}

void linalg_builders::populateShapeLowerings(RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering, TransposeLowering, SliceLowering, ConcatLowering,
               BroadcastLowering, GatherLowering>(patterns.getContext());
}
