//===- MathApproximations.cpp - Vectorizable math for the CPU path --------===//

#include "RLX/Transforms/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_MATHAPPROXIMATIONS
#include "RLX/Transforms/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;

namespace {
struct MathApproximationsPass : rlx::impl::MathApproximationsBase<MathApproximationsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == "math.exp" || name == "math.log" || name == "math.tanh" ||
             name == "math.erf";
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
