//===- FlattenGrid.cpp - rlx-mir-stepwise-reshard, rlx-mir-flatten-grid ----===//
//
// Multi-axis shard.grids for runtimes whose collectives run over every rank
// (see the pass descriptions in Passes.td). shard-partition reshards a dim
// one grid axis at a time, so rlx-mir-stepwise-reshard spells a change of
// several axes as single-axis steps before it; afterwards
// rlx-mir-flatten-grid joins the steps' collectives back into collectives
// over every axis and makes the grid 1-D. shard's linear index is row-major
// over the grid's axes, so a collective over axes [0, .., n) groups every
// rank in the order a 1-D grid's does.
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/Transforms/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/InterleavedRange.h"

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRFLATTENGRID
#define GEN_PASS_DEF_MIRSTEPWISERESHARD
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;

namespace {

using Axes = SmallVector<shard::GridAxis>;

/// The split axes of `sharding`'s dims (dims past its list: not split).
SmallVector<Axes> splitOf(shard::ShardingOp sharding, int64_t rank) {
  SmallVector<Axes> dims(rank);
  for (auto [d, axes] : llvm::enumerate(sharding.getSplitAxes().getAxes()))
    if (static_cast<int64_t>(d) < rank)
      dims[d].assign(axes.asArrayRef().begin(), axes.asArrayRef().end());
  return dims;
}

struct MIRStepwiseReshardPass
    : public mir::impl::MIRStepwiseReshardBase<MIRStepwiseReshardPass> {
  using MIRStepwiseReshardBase::MIRStepwiseReshardBase;

  void runOnOperation() override {
    SmallVector<shard::ShardOp> users;
    getOperation().walk([&](shard::ShardOp op) {
      if (op.getAnnotateForUsers() && op.getSrc().getDefiningOp<shard::ShardOp>())
        users.push_back(op);
    });
    for (shard::ShardOp user : users) {
      auto producer = user.getSrc().getDefiningOp<shard::ShardOp>();
      auto from = producer.getSharding().getDefiningOp<shard::ShardingOp>();
      auto to = user.getSharding().getDefiningOp<shard::ShardingOp>();
      if (!from || !to || from.getGridAttr() != to.getGridAttr() ||
          !from.getStaticHaloSizes().empty() || !to.getStaticHaloSizes().empty() ||
          !from.getStaticShardedDimsOffsets().empty() ||
          !to.getStaticShardedDimsOffsets().empty())
        continue;
      // A 1-D grid moves one axis per reshard: upstream's partition as it is.
      auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(user, from.getGridAttr());
      if (!grid || grid.getRank() <= 1)
        continue;
      int64_t rank = cast<RankedTensorType>(user.getType()).getRank();
      SmallVector<Axes> now = splitOf(from, rank), target = splitOf(to, rank);
      // The steps: first every axis leaves its dim (last axis first), then
      // the target's axes join (in order), one at a time.
      SmallVector<SmallVector<Axes>> steps;
      auto common = [&](int64_t d) {
        size_t k = 0;
        while (k < now[d].size() && k < target[d].size() && now[d][k] == target[d][k])
          ++k;
        return k;
      };
      for (int64_t d = 0; d < rank; ++d)
        for (size_t k = common(d); now[d].size() > k;) {
          now[d].pop_back();
          steps.push_back(now);
        }
      for (int64_t d = 0; d < rank; ++d)
        while (now[d].size() < target[d].size()) {
          now[d].push_back(target[d][now[d].size()]);
          steps.push_back(now);
        }
      if (steps.size() <= 1)
        continue;
      steps.pop_back(); // the last step is `to` itself
      OpBuilder b(user);
      Value x = user.getSrc();
      for (const SmallVector<Axes> &step : steps) {
        int64_t last = -1;
        for (int64_t d = 0; d < rank; ++d)
          if (!step[d].empty())
            last = d;
        SmallVector<shard::GridAxesAttr> split;
        for (int64_t d = 0; d <= last; ++d)
          split.push_back(shard::GridAxesAttr::get(&getContext(), step[d]));
        if (split.empty())
          split.push_back(shard::GridAxesAttr::get(&getContext(), ArrayRef<shard::GridAxis>{}));
        Value sharding =
            shard::ShardingOp::create(b, user.getLoc(), from.getGridAttr(), split).getResult();
        x = shard::ShardOp::create(b, user.getLoc(), x, sharding, true);
        x = shard::ShardOp::create(b, user.getLoc(), x, sharding, false);
      }
      user.getSrcMutable().assign(x);
    }
  }
};

/// Joins `inner`'s steps with its one user `outer` into a collective over
/// axes `outerAxes ++ innerAxes` (all_gather: the later axes gathered
/// first) or `innerAxes ++ outerAxes` (all_slice: the earlier axes sliced
/// first): both are the same blocks in the linear order over those axes.
/// Joins one such pair; false when there is none.
template <typename OpT>
bool joinSteps(ModuleOp module, StringRef grid, bool gather) {
  SmallVector<OpT> ops;
  module.walk([&](OpT op) { ops.push_back(op); });
  for (OpT inner : ops) {
    if (!inner || inner.getGrid() != grid || !inner.getResult().hasOneUse())
      continue;
    // (shard-partition may put a no-op tensor.cast between the steps.)
    Operation *next = *inner.getResult().getUsers().begin();
    auto cast = dyn_cast<tensor::CastOp>(next);
    if (cast && cast.getSource().getType() == cast.getType() && cast->hasOneUse())
      next = *cast->getUsers().begin();
    else
      cast = nullptr;
    auto outer = dyn_cast<OpT>(next);
    if (!outer || outer.getGrid() != grid)
      continue;
    int64_t innerAxis, outerAxis;
    if constexpr (std::is_same_v<OpT, shard::AllGatherOp>) {
      innerAxis = inner.getGatherAxis().getSExtValue();
      outerAxis = outer.getGatherAxis().getSExtValue();
    } else {
      innerAxis = inner.getSliceAxis().getSExtValue();
      outerAxis = outer.getSliceAxis().getSExtValue();
    }
    if (innerAxis != outerAxis)
      continue;
    Axes axes;
    ArrayRef<shard::GridAxis> first = gather ? outer.getGridAxes() : inner.getGridAxes();
    ArrayRef<shard::GridAxis> second = gather ? inner.getGridAxes() : outer.getGridAxes();
    axes.append(first.begin(), first.end());
    axes.append(second.begin(), second.end());
    outer.setGridAxes(axes);
    outer->setOperand(0, inner->getOperand(0));
    if (cast)
      cast->erase();
    inner->erase();
    return true;
  }
  return false;
}

struct MIRFlattenGridPass : public mir::impl::MIRFlattenGridBase<MIRFlattenGridPass> {
  using MIRFlattenGridBase::MIRFlattenGridBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (shard::GridOp grid : llvm::to_vector(module.getOps<shard::GridOp>())) {
      if (grid.getRank() <= 1)
        continue;
      if (llvm::any_of(grid.getShape(), ShapedType::isDynamic)) {
        grid.emitError("rlx-mir-flatten-grid: the grid's shape is dynamic");
        return signalPassFailure();
      }
      int64_t size = 1;
      for (int64_t d : grid.getShape())
        size *= d;
      SmallVector<shard::GridAxis> all;
      for (int64_t a = 0; a < grid.getRank(); ++a)
        all.push_back(static_cast<shard::GridAxis>(a));
      StringRef name = grid.getSymName();
      // Join the single-axis steps of rlx-mir-stepwise-reshard.
      while (joinSteps<shard::AllGatherOp>(module, name, /*gather=*/true) ||
             joinSteps<shard::AllSliceOp>(module, name, /*gather=*/false)) {
      }
      SmallVector<Operation *> users;
      WalkResult walk = module.walk([&](Operation *op) {
        auto ref = op->getAttrOfType<FlatSymbolRefAttr>("grid");
        if (!ref || ref.getValue() != name)
          return WalkResult::advance();
        if (isa<shard::ProcessLinearIndexOp>(op))
          return WalkResult::advance();
        auto axes = op->getAttrOfType<DenseI16ArrayAttr>("grid_axes");
        if (!axes) {
          op->emitError() << "rlx-mir-flatten-grid: '" << op->getName()
                          << "' over the multi-axis grid @" << name
                          << " has no 1-D form (the backends know a rank by its linear index)";
          return WalkResult::interrupt();
        }
        // Axes of size 1 group nobody: leaving them out is every rank too.
        SmallVector<shard::GridAxis> wide;
        for (shard::GridAxis a : all)
          if (grid.getShape()[a] != 1)
            wide.push_back(a);
        SmallVector<shard::GridAxis> given;
        for (shard::GridAxis a : axes.asArrayRef())
          if (a >= 0 && a < grid.getRank() && grid.getShape()[a] != 1)
            given.push_back(a);
        if (!llvm::equal(given, wide)) {
          op->emitError() << "rlx-mir-flatten-grid: this collective runs over grid axes ["
                          << llvm::interleaved(axes.asArrayRef()) << "] of @" << name << " ("
                          << grid.getRank()
                          << " axes): a group of some of the ranks, which the runtimes' "
                             "collectives (every rank of the job) do not run";
          return WalkResult::interrupt();
        }
        users.push_back(op);
        return WalkResult::advance();
      });
      if (walk.wasInterrupted())
        return signalPassFailure();
      OpBuilder b(&getContext());
      for (Operation *op : users)
        op->setAttr("grid_axes", b.getDenseI16ArrayAttr({0}));
      grid.setShape(ArrayRef<int64_t>{size});
    }
  }
};

} // namespace
