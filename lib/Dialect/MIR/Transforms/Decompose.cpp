//===- Decompose.cpp - rlx-mir-decompose, rlx-mir-unroll-control-flow ------===//
//
// Composite ops replaced by their DecomposableOpInterface chain ahead of
// fusion and kernel selection (see the pass descriptions).
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/FftRows.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRDECOMPOSE
#define GEN_PASS_DEF_MIRUNROLLCONTROLFLOW
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

/// Replaces each of `ops` (nested ones first) by its chain; an error naming
/// `pass` when a chain cannot be built or does not match the op's results.
LogicalResult decomposeAll(ArrayRef<Operation *> ops, StringRef pass) {
  for (Operation *op : ops) {
    OpBuilder b(op);
    MIRBuilder mb(b, op->getLoc(), /*diagnose=*/true);
    auto values = cast<DecomposableOpInterface>(op).decompose(mb);
    if (failed(values) || mb.failed())
      return failure();
    if (values->size() != op->getNumResults())
      return op->emitError(pass) << ": the decomposition has " << values->size()
                                 << " values for " << op->getNumResults() << " results";
    for (auto [v, r] : llvm::zip(*values, op->getResults()))
      if (v.getType() != r.getType())
        return op->emitError(pass) << ": the decomposition has type " << v.getType()
                                   << " where the op has " << r.getType();
    op->replaceAllUsesWith(*values);
    op->erase();
  }
  return success();
}

bool hasStaticShapes(Operation *op) {
  auto isStatic = [](Type t) {
    auto s = dyn_cast<ShapedType>(t);
    return !s || s.hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStatic) &&
         llvm::all_of(op->getResultTypes(), isStatic);
}

struct Decompose : mir::impl::MIRDecomposeBase<Decompose> {
  using MIRDecomposeBase::MIRDecomposeBase;
  void runOnOperation() override {
    SmallVector<std::string> names(ops.begin(), ops.end());
    if (names.empty())
      names = {"rlx_mir.fft",  "rlx_mir.rfft", "rlx_mir.irfft",
               "rlx_mir.stft", "rlx_mir.istft", "rlx_mir.conv"};
    // Rounds: a chain may hold more of the ops (stft's rfft).
    for (int round = 0; round < 8; ++round) {
      SmallVector<Operation *> found;
      getOperation()->walk([&](DecomposableOpInterface op) {
        if (llvm::is_contained(names, op->getName().getStringRef()) && hasStaticShapes(op) &&
            !(kernelFfts && fftRows(op)))
          found.push_back(op);
      });
      if (found.empty())
        return;
      if (failed(decomposeAll(found, "rlx-mir-decompose")))
        return signalPassFailure();
    }
  }
};

struct UnrollControlFlow : mir::impl::MIRUnrollControlFlowBase<UnrollControlFlow> {
  void runOnOperation() override {
    // Post-order: the ops inside a body are unrolled before the op around it
    // clones the body.
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<IfOp, WhileOp, ScanOp>(op))
        ops.push_back(op);
    });
    if (failed(decomposeAll(ops, "rlx-mir-unroll-control-flow")))
      signalPassFailure();
  }
};

} // namespace
