//===- UnrollControlFlow.cpp - rlx-mir-unroll-control-flow -----------------===//
//
// Control-flow ops as their unrolled form (see the pass description).
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRUNROLLCONTROLFLOW
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

struct UnrollControlFlow : mir::impl::MIRUnrollControlFlowBase<UnrollControlFlow> {
  void runOnOperation() override {
    // Post-order: the ops inside a body are unrolled before the op around it
    // clones the body.
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<IfOp, WhileOp, ScanOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      MIRBuilder mb(b, op->getLoc(), /*diagnose=*/true);
      auto values = cast<DecomposableOpInterface>(op).decompose(mb);
      if (failed(values) || mb.failed())
        return signalPassFailure();
      if (values->size() != op->getNumResults())
        return op->emitError("rlx-mir-unroll-control-flow: the unrolled form has ")
                   << values->size() << " values for " << op->getNumResults() << " results",
               signalPassFailure();
      for (auto [v, r] : llvm::zip(*values, op->getResults()))
        if (v.getType() != r.getType())
          return op->emitError("rlx-mir-unroll-control-flow: the unrolled form has type ")
                     << v.getType() << " where the op has " << r.getType(),
                 signalPassFailure();
      op->replaceAllUsesWith(*values);
      op->erase();
    }
  }
};

} // namespace
