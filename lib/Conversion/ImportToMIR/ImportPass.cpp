//===- ImportPass.cpp - rlx-import-to-mir -----------------------------------===//

#include "RLX/Conversion/ImportToMIR/ImportToMIR.h"
#include "RLX/Conversion/Passes.h"
#include "RLX/Dialect/MIR/IR/MIRDialect.h"
#include "RLX/Dialect/MIR/Transforms/Fusion.h"

#include "RLX/Dialect/MIR/IR/MIROps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_RLXIMPORTTOMIR
#include "RLX/Conversion/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;

namespace {
struct RLXImportToMIRPass : rlx::impl::RLXImportToMIRBase<RLXImportToMIRPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
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
