//===- BlockNvfp4Scales.cpp - rlx-mir-block-nvfp4-scales --------------------===//
//
// NVFP4 scales in NVIDIA's [N, K/16] layout → rlx_mir.nvfp4_block_scales
// (the 128x4 tile layout block-scaled MMA reads), operand by operand; see
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRBLOCKNVFP4SCALES
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

struct MIRBlockNvfp4ScalesPass : mir::impl::MIRBlockNvfp4ScalesBase<MIRBlockNvfp4ScalesPass> {
  void runOnOperation() override {
    OpBuilder b(&getContext());
    auto block = [&](Operation *op, OpOperand &scales) {
      auto t = dyn_cast<RankedTensorType>(scales.get().getType());
      if (!t || t.getRank() != 2 || !t.hasStaticShape())
        return;
      b.setInsertionPoint(op);
      scales.set(Nvfp4BlockScalesOp::create(b, op->getLoc(), scales.get()));
    };
    getOperation().walk([&](Operation *op) {
      if (auto q = dyn_cast<Nvfp4MatmulOp>(op); q && q.getLayout() == WeightLayout::OutIn)
        block(op, q.getScalesMutable());
      else if (auto f = dyn_cast<FusedMatmulOp>(op); f && f.isNvfp4() && f.getTransposeB())
        block(op, f.getRhsScalesMutable()[0]);
    });
  }
};

} // namespace
