//===- MoeLowering.cpp - grouped_matmul to linalg --------------------------===//
//
// out[t, n] = Σ_k x[t, k] · w[clamp(ids[t]), n, k] (zero_out_of_range: 0 for
// ids outside [0, E)): one linalg.generic over
// (t, n, k) that reads each row's expert weight with tensor.extract, so the
// work is the routed T·N·K multiply-adds. It takes precedence over the op's
// decomposition (every expert on every row, E times the work; the
// Decompose pattern leaves this op alone), which
// autodiff and vmap still use. An f32 one carries `rlx.grouped_matmul`, by
// which the CPU path's cpu-matmul-to-blas turns it, once bufferized, into
// a call of the runtime's grouped GEMM.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;
using namespace mlir::rlx::linalg_builders;

namespace {

struct GroupedMatmulLowering : OpConversionPattern<GroupedMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(GroupedMatmulOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    MLIRContext *ctx = rw.getContext();
    RankedTensorType out = op.getType();
    auto wt = tensorTypeOf(a.getWeight());
    int64_t experts = wt.getDimSize(0);
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    // Loops (t, n, k); the sum in the output's type, as matmul's lowering.
    SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {d(0), d(2)}, ctx),
                                   AffineMap::get(3, 0, {d(0)}, ctx),
                                   AffineMap::get(3, 0, {d(0), d(1)}, ctx)};
    SmallVector<utils::IteratorType> iters = {utils::IteratorType::parallel,
                                              utils::IteratorType::parallel,
                                              utils::IteratorType::reduction};
    Value weight = a.getWeight();
    Location loc = op.getLoc();
    // bf16/f16 accumulate in f32 and round once at the end.
    Type et = out.getElementType();
    Type acc = et.isF64() ? et : rw.getF32Type();
    auto accType = RankedTensorType::get(out.getShape(), acc);
    auto widen = [&](OpBuilder &b, Location l, Value v) -> Value {
      return v.getType() == acc ? v : arith::ExtFOp::create(b, l, acc, v).getResult();
    };
    auto generic = linalg::GenericOp::create(
        rw, loc, TypeRange{accType}, ValueRange{a.getInput(), a.getIds()},
        ValueRange{filled(rw, loc, accType, 0.0)}, maps, iters,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value raw = arith::IndexCastOp::create(b, l, b.getIndexType(), args[1]);
          Value first = arith::ConstantIndexOp::create(b, l, 0);
          Value last = arith::ConstantIndexOp::create(b, l, experts - 1);
          Value id = arith::MaxSIOp::create(b, l, raw, first);
          id = arith::MinSIOp::create(b, l, id, last);
          Value w = tensor::ExtractOp::create(
              b, l, weight,
              ValueRange{id, linalg::IndexOp::create(b, l, 1), linalg::IndexOp::create(b, l, 2)});
          Value prod = arith::MulFOp::create(b, l, widen(b, l, args[0]), widen(b, l, w));
          if (op.getZeroOutOfRange()) {
            // A select: another expert's inf or NaN does not reach the row.
            Value in = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, raw, id);
            prod = arith::SelectOp::create(
                b, l, in, prod, arith::ConstantOp::create(b, l, b.getFloatAttr(acc, 0.0)));
          }
          linalg::YieldOp::create(b, l, ValueRange{arith::AddFOp::create(b, l, args[2], prod)});
        });
    // The CPU path calls its grouped GEMM for this op (cpu-matmul-to-blas).
    // Its value: whether rows of ids outside [0, E) are zeros.
    if (et.isF32())
      generic->setAttr(kGroupedMatmulAttr, rw.getBoolAttr(op.getZeroOutOfRange()));
    Value result = generic.getResult(0);
    if (acc != et) {
      auto id = AffineMap::getMultiDimIdentityMap(2, ctx);
      result = linalg::GenericOp::create(
                   rw, loc, TypeRange{out}, ValueRange{result}, ValueRange{empty(rw, loc, out)},
                   SmallVector<AffineMap>{id, id},
                   SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
                   [&](OpBuilder &b, Location l, ValueRange args) {
                     linalg::YieldOp::create(
                         b, l, ValueRange{arith::TruncFOp::create(b, l, et, args[0])});
                   })
                   .getResult(0);
    }
    rw.replaceOp(op, result);
    return success();
  }
};

} // namespace

void linalg_builders::populateMoeLowerings(RewritePatternSet &patterns) {
  patterns.add<GroupedMatmulLowering>(patterns.getContext());
}
