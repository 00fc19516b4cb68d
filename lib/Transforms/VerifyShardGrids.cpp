//===- VerifyShardGrids.cpp - rlx-verify-shard-grids ----------------------===//
//
// Upstream accepts `shard.grid @g(shape = 0)` and its sharding passes divide
// by the axis size; this check turns that into a located error first.
//
//===----------------------------------------------------------------------===//

#include "RLX/Transforms/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_VERIFYSHARDGRIDS
#include "RLX/Transforms/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;

namespace {
struct VerifyShardGridsPass
    : public rlx::impl::VerifyShardGridsBase<VerifyShardGridsPass> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([](shard::GridOp grid) {
      for (auto [axis, size] : llvm::enumerate(grid.getShape())) {
        if (ShapedType::isDynamic(size) || size >= 1)
          continue;
        grid.emitOpError() << "axis " << axis << " of grid @" << grid.getSymName()
                           << " has size " << size
                           << "; every axis needs at least one device";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
