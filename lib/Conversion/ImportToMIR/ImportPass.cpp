//===- ImportPass.cpp - rlx-import-to-mir -----------------------------------===//

#include "RLX/Conversion/ImportToMIR/ImportToMIR.h"
#include "RLX/Conversion/Passes.h"
#include "RLX/Dialect/MIR/IR/MIRDialect.h"
#include "RLX/Dialect/MIR/Transforms/Fusion.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_RLXIMPORTTOMIR
#include "RLX/Conversion/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;

namespace {
struct RLXImportToMIRPass : rlx::impl::RLXImportToMIRBase<RLXImportToMIRPass> {
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
    if (failed(applyPatternsGreedily(getOperation(), std::move(blocks))))
      return signalPassFailure();
  }
};
} // namespace
