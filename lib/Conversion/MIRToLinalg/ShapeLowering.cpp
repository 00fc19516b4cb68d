//===- ShapeLowering.cpp - Data movement MIR ops → tensor/linalg ----------===//
//
// reshape, slice and concat as tensor ops (lib/Conversion/MIRToTensor, shared
// with convert-rlx-mir-to-lir), transpose → linalg.transpose, broadcast → a copying
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

struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(TransposeOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Value init = empty(rw, op.getLoc(), op.getType());
    rw.replaceOpWithNewOp<linalg::TransposeOp>(op, a.getInput(), init, op.getPermutation());
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

void linalg_builders::populateShapeLowerings(RewritePatternSet &patterns) {
  populateMIRDataMovementToTensorPatterns(patterns);
  patterns.add<TransposeLowering, BroadcastLowering, GatherLowering>(patterns.getContext());
}
