//===- ImportPass.cpp - rlx-import-to-mir -----------------------------------===//

#include "ImportUtils.h"

#include "RLX/Conversion/ImportToMIR/ImportToMIR.h"
#include "RLX/Conversion/Passes.h"
#include "RLX/Dialect/MIR/IR/MIRDialect.h"
#include "RLX/Dialect/MIR/Transforms/Fusion.h"

#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_RLXIMPORTTOMIR
#include "RLX/Conversion/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;

namespace {
/// Upstream's tosa.cast folder reads an i1 true as the signed 1-bit integer
/// -1 (tosa.cast of dense<true> to f32 folds to -1.0, a silent wrong
/// answer). Casts from i1 become selects of 1 and 0 before any rewrite
/// driver, which folds as it goes, sees them.
void castsFromBoolAsSelects(Operation *root) {
  root->walk([](tosa::CastOp op) {
    auto in = dyn_cast<RankedTensorType>(op.getInput().getType());
    auto out = dyn_cast<RankedTensorType>(op.getType());
    if (!in || !out || !in.getElementType().isInteger(1) || out.getElementType().isInteger(1))
      return;
    Type et = out.getElementType();
    OpBuilder b(op);
    auto splat = RankedTensorType::get(SmallVector<int64_t>(out.getRank(), 1), et);
    auto constant = [&](double v) -> Value {
      Attribute a = isa<FloatType>(et) ? Attribute(b.getFloatAttr(et, v))
                                       : Attribute(b.getIntegerAttr(et, int64_t(v)));
      return tosa::ConstOp::create(b, op.getLoc(), splat, DenseElementsAttr::get(splat, a));
    };
    Value one = constant(1.0), zero = constant(0.0);
    op.replaceAllUsesWith(
        tosa::SelectOp::create(b, op.getLoc(), out, op.getInput(), one, zero).getResult());
    op.erase();
  });
}

struct RLXImportToMIRPass : rlx::impl::RLXImportToMIRBase<RLXImportToMIRPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    castsFromBoolAsSelects(getOperation());
    // Loops first: their regions' ops are raised with the rest.
    import_detail::raiseWhileLoops(getOperation());
    // Raise first (so recognition sees whole primitive chains), then
    // recognize blocks.
    RewritePatternSet raise(ctx);
    populateTosaToRLXMIRPatterns(raise);
    populateLinalgToRLXMIRPatterns(raise);
    if (failed(applyPatternsGreedily(getOperation(), std::move(raise))))
      return signalPassFailure();
    RewritePatternSet blocks(ctx);
    mir::populateBlockRecognitionPatterns(blocks);
    populateSoftmaxGuardPatterns(blocks);
    if (failed(applyPatternsGreedily(getOperation(), std::move(blocks))))
      return signalPassFailure();
    if (failed(markWeightArguments(getOperation(), weights)))
      return signalPassFailure();
    if (report)
      reportLeftovers();
  }

  /// The block a primitive usually belongs to, for the report.
  static StringRef blocksOf(Operation *op) {
    if (isa<mir::ExpOp>(op))
      return "softmax, silu";
    if (isa<mir::RsqrtOp>(op))
      return "rms_norm, layer_norm";
    if (auto r = dyn_cast<mir::ReduceOp>(op))
      return r.getKind() == ReduceKind::Max ? "softmax" : "rms_norm, layer_norm, softmax";
    if (isa<mir::TanhOp, mir::ErfOp>(op))
      return "gelu, gelu_tanh";
    if (isa<mir::SigmoidOp>(op))
      return "silu";
    if (isa<mir::PowOp, mir::ReciprocalOp>(op))
      return "rms_norm, softmax, gelu_tanh";
    return "";
  }

  void reportLeftovers() {
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op->getNumRegions() && !isa<func::FuncOp>(op) && !isa<ModuleOp>(op)) {
        if (!isa_and_nonnull<mir::MIRDialect>(op->getDialect()))
          op->emitRemark() << "rlx-import-to-mir: '" << op->getName()
                           << "' was not raised to rlx_mir; it runs as its own kernel";
        return WalkResult::skip();
      }
      if (isa<func::FuncOp, ModuleOp, func::ReturnOp>(op) ||
          op->hasTrait<OpTrait::ConstantLike>())
        return WalkResult::advance();
      if (!isa_and_nonnull<mir::MIRDialect>(op->getDialect())) {
        if (mir::isForeignKernelOp(op))
          op->emitRemark() << "rlx-import-to-mir: '" << op->getName()
                           << "' was not raised to rlx_mir; it runs as its own kernel";
        return WalkResult::advance();
      }
      if (StringRef blocks = blocksOf(op); !blocks.empty())
        op->emitRemark() << "rlx-import-to-mir: '" << op->getName()
                         << "' is not part of a recognized block (" << blocks
                         << "); it runs as primitive math";
      return WalkResult::advance();
    });
  }
};
} // namespace
