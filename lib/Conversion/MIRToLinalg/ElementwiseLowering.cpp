//===- ElementwiseLowering.cpp - Elementwise MIR ops → linalg.generic -----===//
//
// Every op with ElementwiseOpInterface becomes one linalg.generic whose body
// is the op's own buildScalar; an rlx_mir.elementwise region becomes one
// linalg.generic with the region's body. Constants become arith.constant.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;
using namespace mlir::rlx::linalg_builders;

namespace {

struct ElementwiseToGeneric : OpInterfaceConversionPattern<ElementwiseOpInterface> {
  using OpInterfaceConversionPattern::OpInterfaceConversionPattern;
  LogicalResult matchAndRewrite(ElementwiseOpInterface op, ArrayRef<Value> operands,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op->getLoc();
    SmallVector<Value> results = elementwise(
        rw, loc, operands, op->getResultTypes(),
        [&](OpBuilder &b, Location l, ValueRange args) -> SmallVector<Value> {
          return {op.buildScalar(b, l, args)};
        });
    rw.replaceOp(op, results);
    return success();
  }
};

struct FusedElementwiseToGeneric : OpConversionPattern<FusedElementwiseOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(FusedElementwiseOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Block &body = op.getBody().front();
    SmallVector<Value> results = elementwise(
        rw, op.getLoc(), a.getInputs(), op.getResultTypes(),
        [&](OpBuilder &b, Location, ValueRange args) -> SmallVector<Value> {
          IRMapping map;
          map.map(body.getArguments(), args);
          for (Operation &nested : body.without_terminator())
            b.clone(nested, map);
          SmallVector<Value> yielded;
          for (Value v : cast<YieldOp>(body.getTerminator()).getValues())
            yielded.push_back(map.lookupOrDefault(v));
          return yielded;
        });
    rw.replaceOp(op, results);
    return success();
  }
};

struct ConstantToArith : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ConstantOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<arith::ConstantOp>(op, op.getType(), cast<TypedAttr>(op.getValue()));
    return success();
  }
};

} // namespace

void linalg_builders::populateElementwiseLowerings(RewritePatternSet &patterns) {
  patterns.add<ElementwiseToGeneric>(patterns.getContext());
  patterns.add<FusedElementwiseToGeneric, ConstantToArith>(patterns.getContext());
}
