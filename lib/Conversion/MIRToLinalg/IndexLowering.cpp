//===- IndexLowering.cpp - scatter_add, cumsum and topk to linalg ----------===//
//
// Each op as linalg.generic ops whose outputs are indexed by loop dims only
// (no data-dependent writes), so that the GPU generic path runs them as they
// are: scatter_add and cumsum as masked reductions (O(N·M) and O(N²) per
// line), topk as a rank per element (how many entries come before it) and a
// selection by rank (O(N²) per row). Fine for routing and the sizes tests
// use; a scan or selection kernel is the fast path to add.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;
using namespace mlir::rlx::linalg_builders;

namespace {

SmallVector<AffineExpr> dims(MLIRContext *ctx, unsigned from, unsigned to) {
  SmallVector<AffineExpr> e;
  for (unsigned d = from; d < to; ++d)
    e.push_back(getAffineDimExpr(d, ctx));
  return e;
}

Value addOf(OpBuilder &b, Location loc, Value x, Value y) {
  return isa<FloatType>(x.getType()) ? arith::AddFOp::create(b, loc, x, y).getResult()
                                     : arith::AddIOp::create(b, loc, x, y).getResult();
}

/// out[n, d...] = dest[n, d...] + Σ_i updates[i..., d...] · [clamp(ids[i...]) = n]
struct ScatterAddLowering : OpConversionPattern<ScatterAddOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ScatterAddOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    MLIRContext *ctx = rw.getContext();
    RankedTensorType out = op.getType();
    int64_t rank = out.getRank(), idRank = tensorTypeOf(a.getIndices()).getRank();
    int64_t rows = out.getDimSize(0);
    unsigned nd = rank + idRank; // (n, d..., i...)
    auto idMap = AffineMap::get(nd, 0, dims(ctx, rank, nd), ctx);
    SmallVector<AffineExpr> updExprs = dims(ctx, rank, nd);
    llvm::append_range(updExprs, dims(ctx, 1, rank));
    auto outMap = AffineMap::get(nd, 0, dims(ctx, 0, rank), ctx);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    iters.append(idRank, utils::IteratorType::reduction);
    Location loc = op.getLoc();
    auto generic = linalg::GenericOp::create(
        rw, loc, TypeRange{out}, ValueRange{a.getIndices(), a.getUpdates()},
        ValueRange{a.getDest()},
        SmallVector<AffineMap>{idMap, AffineMap::get(nd, 0, updExprs, ctx), outMap}, iters,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value id = arith::IndexCastOp::create(b, l, b.getIndexType(), args[0]);
          id = arith::MaxSIOp::create(b, l, id, cIndex(b, l, 0));
          id = arith::MinSIOp::create(b, l, id, cIndex(b, l, rows - 1));
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, id,
                                            linalg::IndexOp::create(b, l, 0));
          Value sum = addOf(b, l, args[2], args[1]);
          linalg::YieldOp::create(b, l, ValueRange{arith::SelectOp::create(b, l, hit, sum, args[2])});
        });
    rw.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// out[..., i, ...] = Σ_j x[..., j, ...] over the j the mode includes.
struct CumsumLowering : OpConversionPattern<CumsumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(CumsumOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    MLIRContext *ctx = rw.getContext();
    RankedTensorType out = op.getType();
    int64_t rank = out.getRank(), axis = op.getNormalizedAxis();
    Type et = out.getElementType();
    Type acc = isa<FloatType>(et) ? statsType(rw, et) : et;
    auto accType = RankedTensorType::get(out.getShape(), acc);
    SmallVector<AffineExpr> in = dims(ctx, 0, rank);
    in[axis] = getAffineDimExpr(rank, ctx); // j
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    iters.push_back(utils::IteratorType::reduction);
    bool exclusive = op.getExclusive(), reverse = op.getReverse();
    auto pred = reverse ? (exclusive ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::uge)
                        : (exclusive ? arith::CmpIPredicate::ult : arith::CmpIPredicate::ule);
    Location loc = op.getLoc();
    auto generic = linalg::GenericOp::create(
        rw, loc, TypeRange{accType}, ValueRange{a.getInput()},
        ValueRange{filled(rw, loc, accType, 0.0)},
        SmallVector<AffineMap>{AffineMap::get(rank + 1, 0, in, ctx),
                               AffineMap::get(rank + 1, 0, dims(ctx, 0, rank), ctx)},
        iters, [&](OpBuilder &b, Location l, ValueRange args) {
          Value j = linalg::IndexOp::create(b, l, rank), i = linalg::IndexOp::create(b, l, axis);
          Value take = arith::CmpIOp::create(b, l, pred, j, i);
          Value x = convertScalar(b, l, args[0], acc);
          Value sum = addOf(b, l, args[1], x);
          linalg::YieldOp::create(b, l, ValueRange{arith::SelectOp::create(b, l, take, sum, args[1])});
        });
    generic->setAttr(kCumsumAttr, rw.getDenseI64ArrayAttr({axis, exclusive, reverse}));
    rw.replaceOp(op, castTo(rw, loc, generic.getResult(0), et));
    return success();
  }
};

/// rank[..., i] = #{j : x_j before x_i} (greater, NaN greatest; ties by
/// index), then values/indices[..., p] = the entry whose rank is p.
struct TopKLowering : OpConversionPattern<TopKOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(TopKOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    MLIRContext *ctx = rw.getContext();
    auto x = tensorTypeOf(a.getInput());
    int64_t rank = x.getRank();
    Location loc = op.getLoc();
    Type i64 = rw.getI64Type();
    auto rankType = RankedTensorType::get(x.getShape(), i64);
    // Dims (lead..., i, j): x at i and at j.
    SmallVector<AffineExpr> atI = dims(ctx, 0, rank), atJ = dims(ctx, 0, rank);
    atJ.back() = getAffineDimExpr(rank, ctx);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    iters.push_back(utils::IteratorType::reduction);
    auto ranks = linalg::GenericOp::create(
        rw, loc, TypeRange{rankType}, ValueRange{a.getInput(), a.getInput()},
        ValueRange{filled(rw, loc, rankType, 0)},
        SmallVector<AffineMap>{AffineMap::get(rank + 1, 0, atI, ctx),
                               AffineMap::get(rank + 1, 0, atJ, ctx),
                               AffineMap::get(rank + 1, 0, atI, ctx)},
        iters, [&](OpBuilder &b, Location l, ValueRange args) {
          Value xi = args[0], xj = args[1];
          auto cmp = [&](arith::CmpFPredicate p, Value u, Value v) {
            return arith::CmpFOp::create(b, l, p, u, v).getResult();
          };
          Value nanI = cmp(arith::CmpFPredicate::UNO, xi, xi);
          Value nanJ = cmp(arith::CmpFPredicate::UNO, xj, xj);
          Value notNanI = arith::XOrIOp::create(b, l, nanI, arith::ConstantIntOp::create(b, l, 1, 1));
          // x_j > x_i, with NaN above every number.
          Value greater = arith::OrIOp::create(
              b, l, cmp(arith::CmpFPredicate::OGT, xj, xi),
              arith::AndIOp::create(b, l, nanJ, notNanI));
          Value equal = arith::OrIOp::create(b, l, cmp(arith::CmpFPredicate::OEQ, xj, xi),
                                             arith::AndIOp::create(b, l, nanJ, nanI));
          Value jFirst = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                               linalg::IndexOp::create(b, l, rank),
                                               linalg::IndexOp::create(b, l, rank - 1));
          Value before =
              arith::OrIOp::create(b, l, greater, arith::AndIOp::create(b, l, equal, jFirst));
          Value one = arith::ExtUIOp::create(b, l, i64, before);
          linalg::YieldOp::create(b, l, ValueRange{arith::AddIOp::create(b, l, args[2], one)});
        });
    // Dims (lead..., p, i): the entry i whose rank is p.
    RankedTensorType values = op.getValues().getType(), indices = op.getIndices().getType();
    SmallVector<AffineExpr> byI = dims(ctx, 0, rank - 1), byP = dims(ctx, 0, rank);
    byI.push_back(getAffineDimExpr(rank, ctx));
    auto pick = linalg::GenericOp::create(
        rw, loc, TypeRange{values, indices}, ValueRange{a.getInput(), ranks.getResult(0)},
        ValueRange{filled(rw, loc, values, 0.0), filled(rw, loc, indices, 0)},
        SmallVector<AffineMap>{AffineMap::get(rank + 1, 0, byI, ctx),
                               AffineMap::get(rank + 1, 0, byI, ctx),
                               AffineMap::get(rank + 1, 0, byP, ctx),
                               AffineMap::get(rank + 1, 0, byP, ctx)},
        iters, [&](OpBuilder &b, Location l, ValueRange args) {
          Value p = arith::IndexCastOp::create(b, l, i64, linalg::IndexOp::create(b, l, rank - 1));
          Value i = arith::IndexCastOp::create(b, l, i64, linalg::IndexOp::create(b, l, rank));
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, args[1], p);
          linalg::YieldOp::create(b, l,
                                  ValueRange{arith::SelectOp::create(b, l, hit, args[0], args[2]),
                                             arith::SelectOp::create(b, l, hit, i, args[3])});
        });
    // The CPU path sorts instead (rlx-cpu-topk-cumsum).
    ranks->setAttr(kTopKRanksAttr, rw.getUnitAttr());
    pick->setAttr(kTopKAttr, rw.getUnitAttr());
    rw.replaceOp(op, pick.getResults());
    return success();
  }
};

} // namespace

void linalg_builders::populateIndexLowerings(RewritePatternSet &patterns) {
  patterns.add<ScatterAddLowering, CumsumLowering, TopKLowering>(patterns.getContext());
}
