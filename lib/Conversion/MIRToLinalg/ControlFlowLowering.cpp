//===- ControlFlowLowering.cpp - rlx_mir.if/while/scan to scf --------------===//
//
// The CPU path's control flow: scf.if, scf.while (the trip count carried,
// the cap in the condition) and scf.for over a scan's steps (each step's
// xs an extract_slice, its outputs insert_slices into the stacked results).
// The regions' ops move into the scf regions and are lowered there like any
// other MIR op. These take precedence over the ops' unrolled form (the
// Decompose pattern leaves them alone), which the GPU path and vmap use.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

/// Moves `src`'s ops to the end of `dest` with its arguments bound to
/// `args`; its rlx_mir.yield is replaced by what `terminate` builds from the
/// yielded values (at the yield's place).
void inlineRegion(ConversionPatternRewriter &rw, Region &src, Block *dest, ValueRange args,
                  function_ref<void(ValueRange)> terminate) {
  rw.inlineBlockBefore(&src.front(), dest, dest->end(), args);
  auto yield = cast<YieldOp>(dest->back());
  rw.setInsertionPoint(yield);
  terminate(yield.getValues());
  rw.eraseOp(yield);
}

Value scalarOf(OpBuilder &b, Location loc, Value t) {
  return tensor::ExtractOp::create(b, loc, t, ValueRange());
}

struct IfLowering : OpConversionPattern<IfOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(IfOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto lowered = scf::IfOp::create(rw, loc, op.getResultTypes(),
                                     scalarOf(rw, loc, a.getCond()), /*addThenBlock=*/true,
                                     /*addElseBlock=*/true);
    auto yield = [&](ValueRange values) { scf::YieldOp::create(rw, loc, values); };
    inlineRegion(rw, op.getThenRegion(), lowered.thenBlock(), a.getInputs(), yield);
    inlineRegion(rw, op.getElseRegion(), lowered.elseBlock(), a.getInputs(), yield);
    rw.replaceOp(op, lowered.getResults());
    return success();
  }
};

struct WhileLowering : OpConversionPattern<WhileOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(WhileOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    unsigned nc = op.getNumCarries();
    Type i64 = rw.getI64Type();
    SmallVector<Value> init(a.getInputs());
    init.push_back(arith::ConstantIntOp::create(rw, loc, i64, 0));
    SmallVector<Type> types(ValueRange(init).getTypes());
    SmallVector<Location> locs(types.size(), loc);
    auto loop = scf::WhileOp::create(rw, loc, types, init);
    Block *before = rw.createBlock(&loop.getBefore(), {}, types, locs);
    std::optional<int64_t> cap = op.getMaxIterations();
    inlineRegion(rw, op.getCondRegion(), before, before->getArguments().take_front(nc),
                 [&](ValueRange yielded) {
                   Value go = scalarOf(rw, loc, yielded[0]);
                   if (cap) {
                     Value limit = arith::ConstantIntOp::create(rw, loc, i64, *cap);
                     Value under = arith::CmpIOp::create(rw, loc, arith::CmpIPredicate::slt,
                                                         before->getArgument(nc), limit);
                     go = arith::AndIOp::create(rw, loc, under, go);
                   }
                   scf::ConditionOp::create(rw, loc, go, before->getArguments());
                 });
    Block *after = rw.createBlock(&loop.getAfter(), {}, types, locs);
    inlineRegion(rw, op.getBody(), after, after->getArguments().take_front(nc),
                 [&](ValueRange yielded) {
                   SmallVector<Value> next(yielded);
                   Value one = arith::ConstantIntOp::create(rw, loc, i64, 1);
                   next.push_back(arith::AddIOp::create(rw, loc, after->getArgument(nc), one));
                   scf::YieldOp::create(rw, loc, next);
                 });
    rw.setInsertionPointAfter(loop);
    SmallVector<Value> results(loop.getResults().take_front(nc));
    results.push_back(tensor::FromElementsOp::create(
        rw, loc, RankedTensorType::get({}, i64), ValueRange{loop.getResult(nc)}));
    rw.replaceOp(op, results);
    return success();
  }
};

struct ScanLowering : OpConversionPattern<ScanOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ScanOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    int64_t steps = op.getNumSteps();
    if (ShapedType::isDynamic(steps))
      return rw.notifyMatchFailure(op, "a dynamic number of steps");
    Location loc = op.getLoc();
    unsigned nc = a.getInit().size(), ny = op.getNumYs();
    auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(rw, loc, v); };
    SmallVector<Value> init(a.getInit());
    for (Type t : TypeRange(op.getResultTypes()).drop_front(nc)) {
      auto rt = cast<RankedTensorType>(t);
      init.push_back(tensor::EmptyOp::create(rw, loc, rt.getShape(), rt.getElementType()));
    }
    auto loop = scf::ForOp::create(rw, loc, index(0), index(steps), index(1), init);
    Block *body = loop.getBody();
    rw.setInsertionPointToStart(body);
    Value t = loop.getInductionVar();
    if (op.getReverse())
      t = arith::SubIOp::create(rw, loc, index(steps - 1), t);
    // Step t of a stacked value: [t, 0, ...] of sizes [1, dims...].
    auto window = [&](RankedTensorType stacked, SmallVectorImpl<OpFoldResult> &offsets,
                      SmallVectorImpl<OpFoldResult> &sizes, SmallVectorImpl<OpFoldResult> &ones) {
      offsets.assign(stacked.getRank(), rw.getIndexAttr(0));
      offsets[0] = t;
      sizes.clear();
      sizes.push_back(rw.getIndexAttr(1));
      for (int64_t d : stacked.getShape().drop_front())
        sizes.push_back(rw.getIndexAttr(d));
      ones.assign(stacked.getRank(), rw.getIndexAttr(1));
    };
    SmallVector<Value> args(loop.getRegionIterArgs().take_front(nc));
    for (Value x : a.getXs()) {
      auto xt = cast<RankedTensorType>(x.getType());
      SmallVector<OpFoldResult> offsets, sizes, ones;
      window(xt, offsets, sizes, ones);
      auto stepType = RankedTensorType::get(xt.getShape().drop_front(), xt.getElementType());
      args.push_back(tensor::ExtractSliceOp::create(rw, loc, stepType, x, offsets, sizes, ones));
    }
    llvm::append_range(args, a.getConsts());
    ValueRange stacked = loop.getRegionIterArgs().drop_front(nc);
    inlineRegion(rw, op.getBody(), body, args, [&](ValueRange yielded) {
      SmallVector<Value> next(yielded.take_front(nc));
      auto insert = [&](Value v, Value into) {
        SmallVector<OpFoldResult> offsets, sizes, ones;
        window(cast<RankedTensorType>(into.getType()), offsets, sizes, ones);
        next.push_back(tensor::InsertSliceOp::create(rw, loc, v, into, offsets, sizes, ones));
      };
      for (unsigned j = 0; j < ny; ++j)
        insert(yielded[nc + j], stacked[j]);
      if (op.getTrajectory())
        for (unsigned i = 0; i < nc; ++i)
          insert(yielded[i], stacked[ny + i]);
      scf::YieldOp::create(rw, loc, next);
    });
    rw.replaceOp(op, loop.getResults());
    return success();
  }
};

} // namespace

void mlir::rlx::linalg_builders::populateControlFlowLowerings(RewritePatternSet &patterns) {
  patterns.add<IfLowering, WhileLowering, ScanLowering>(patterns.getContext());
}
