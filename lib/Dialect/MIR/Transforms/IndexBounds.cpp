//===- IndexBounds.cpp - rlx-mir-index-bounds -----------------------------===//
//
// The rows an integer argument may index, recorded for the runners (see the
// pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRINDEXBOUNDS
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

/// The smallest static row count of the tables `v`'s values index (0: none).
int64_t indexBound(Value v) {
  int64_t bound = 0;
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    for (OpOperand &use : x.getUses()) {
      Operation *user = use.getOwner();
      if (auto gather = dyn_cast<GatherOp>(user)) {
        auto table = cast<RankedTensorType>(gather.getTable().getType());
        if (use.get() == gather.getIndices() && !table.isDynamicDim(0))
          bound = bound ? std::min(bound, table.getDimSize(0)) : table.getDimSize(0);
        continue;
      }
      // Ops that move index values without computing new ones.
      if (isa<ReshapeOp, CastOp, TransposeOp, BroadcastOp, SliceOp, ConcatOp>(user))
        for (Value r : user->getResults())
          if (isa<IntegerType>(getElementTypeOrSelf(r.getType())))
            work.push_back(r);
    }
  }
  return bound;
}

struct MIRIndexBoundsPass : mir::impl::MIRIndexBoundsBase<MIRIndexBoundsPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      for (BlockArgument arg : fn.getArguments()) {
        if (!isa<IntegerType>(getElementTypeOrSelf(arg.getType())))
          continue;
        if (int64_t bound = indexBound(arg))
          fn.setArgAttr(arg.getArgNumber(), "rlx.index_bound",
                        IntegerAttr::get(IntegerType::get(&getContext(), 64), bound));
      }
    }
  }
};

} // namespace
