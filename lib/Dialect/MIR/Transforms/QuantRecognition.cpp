//===- QuantRecognition.cpp - dequantize → matmul as qmatmul --------------===//
//
// PT2E's quantized linear is spelled `matmul(dequantize(qx), dequantize(qw))`
// (QDQ: the matmul itself in float). Both dequantizations are affine, so
//   Σ_k (qx − zx)·sx · (qw − zw)·sw[n] = sx·sw[n] · Σ_k (qx − zx)(qw − zw)
// and the sum is exact in i32 (rlx_mir.qmatmul). The rewrite leaves the
// float result up to its rounding: one rounding of an exact integer times
// one scale, instead of K roundings of the float sum. Quantized storage stays
// i8 to the kernel (a quarter of the bytes an f32 weight takes).
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/Transforms/Fusion.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

/// The one zero point `d` uses (0 when absent), when it is a known constant
/// equal for every element; nothing otherwise.
std::optional<int64_t> uniformZeroPoint(DequantizeOp d) {
  if (!d.getZeroPoint())
    return 0;
  DenseIntElementsAttr values;
  if (!matchPattern(d.getZeroPoint(), m_Constant(&values)) || values.empty())
    return std::nullopt;
  auto read = [&](const APInt &v) {
    return d.getIsUnsigned() ? static_cast<int64_t>(v.getZExtValue()) : v.getSExtValue();
  };
  int64_t first = read(*values.value_begin<APInt>());
  for (APInt v : values.getValues<APInt>())
    if (read(v) != first)
      return std::nullopt;
  return first;
}

/// matmul(dequantize(qa) per tensor, dequantize(qb) per tensor or per output
/// channel) in f32 → qmatmul(qa, qb) · (sa · sb).
struct QuantizedMatmul : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rw) const override {
    auto da = op.getLhs().getDefiningOp<DequantizeOp>();
    auto db = op.getRhs().getDefiningOp<DequantizeOp>();
    if (!da || !db || op.getTransposeA() || !op.getType().getElementType().isF32())
      return failure();
    auto ta = MIRBuilder::typeOf(da.getInput()), tb = MIRBuilder::typeOf(db.getInput());
    if (tb.getRank() != 2 || ta.getRank() < 2 || da.getAxis() || db.getGroupSize() ||
        !MIRBuilder::elementType(da.getScale()).isF32() ||
        !MIRBuilder::elementType(db.getScale()).isF32())
      return failure();
    // Per channel only along N (the scale then factors out of the sum).
    if (std::optional<int64_t> axis = db.getAxis()) {
      int64_t n = op.getTransposeB() ? 0 : 1;
      if ((*axis + 2) % 2 != n)
        return failure();
    }
    auto za = uniformZeroPoint(da), zb = uniformZeroPoint(db);
    if (!za || !zb)
      return failure();
    auto zpAttr = [&](int64_t z) { return z ? rw.getI64IntegerAttr(z) : IntegerAttr(); };
    MIRBuilder mb(rw, op.getLoc());
    // qmatmul's own rules (K, zero-point ranges) decide the rest.
    Value acc = mb.create<QMatmulOp>(da.getInput(), db.getInput(), op.getTransposeB(), zpAttr(*za),
                                     zpAttr(*zb), da.getIsUnsigned(), db.getIsUnsigned());
    Value scale = mb.mul(da.getScale(), db.getScale());
    Value out = mb.mul(mb.cast(acc, rw.getF32Type()), scale);
    if (mb.failed() || out.getType() != op.getType()) {
      mb.discardUnused(&rw);
      return failure();
    }
    rw.replaceOp(op, out);
    return success();
  }
};

} // namespace

void mlir::rlx::mir::populateQuantRecognitionPatterns(RewritePatternSet &patterns) {
  patterns.add<QuantizedMatmul>(patterns.getContext());
}
