//===- GpuCollectives.cpp - rlx-mir-bind-rank, rlx-mir-gpu-collectives -----===//
//
// The per-rank program for one rank (see the pass descriptions in
// Passes.td): its rank as a constant and its all_slices as static slices,
// and its all-gathers as the GPU runtime runs them (contiguous per-rank
// blocks: NCCL's ncclAllGather, MPI_Allgather).
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/MIRBuilder.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"
#include "RLX/Dialect/MIR/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::rlx::mir {
#define GEN_PASS_DEF_MIRBINDRANK
#define GEN_PASS_DEF_MIRGPUCOLLECTIVES
#include "RLX/Dialect/MIR/Transforms/Passes.h.inc"
} // namespace mlir::rlx::mir

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

/// The size of the static 1-D grid `op` runs over; an error otherwise.
FailureOr<int64_t> gridSize(Operation *op, FlatSymbolRefAttr name, StringRef pass) {
  auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, name);
  if (!grid || grid.getRank() != 1 || ShapedType::isDynamic(grid.getShape()[0]))
    return op->emitError() << pass << ": a per-rank program runs over a static 1-D grid (the "
                                      "tensor-parallel ranks)";
  return grid.getShape()[0];
}

struct MIRBindRankPass : public mir::impl::MIRBindRankBase<MIRBindRankPass> {
  using MIRBindRankBase::MIRBindRankBase;

  /// The grid size, once the rank is known to be one of its ranks.
  FailureOr<int64_t> checkedRank(Operation *op, FlatSymbolRefAttr grid, StringRef what) {
    if (rank < 0)
      return op->emitError() << "rlx-mir-bind-rank: this per-rank program uses its rank (" << what
                             << "); compile it for one rank (rank=R, `rlx-compile --tp N "
                                "--rank R`)";
    FailureOr<int64_t> size = gridSize(op, grid, "rlx-mir-bind-rank");
    if (failed(size))
      return failure();
    if (rank >= *size)
      return op->emitError("rlx-mir-bind-rank: rank ")
             << int64_t(rank) << " is not a rank of the " << *size << "-rank grid";
    return size;
  }

  LogicalResult bindIndex(shard::ProcessLinearIndexOp op) {
    if (failed(checkedRank(op, op.getGridAttr(), "a vocab-parallel lookup")))
      return failure();
    OpBuilder b(op);
    Value r = arith::ConstantIndexOp::create(b, op.getLoc(), rank);
    // The rank as a tensor (index_cast → from_elements, as the vocab-parallel
    // lookup builds it) becomes an rlx_mir constant, which kernels take.
    for (Operation *user : llvm::make_early_inc_range(op->getUsers())) {
      auto cast = dyn_cast<arith::IndexCastOp>(user);
      if (!cast || !cast.getType().isSignlessInteger())
        continue;
      for (Operation *castUser : llvm::make_early_inc_range(cast->getUsers())) {
        auto elements = dyn_cast<tensor::FromElementsOp>(castUser);
        if (!elements || elements.getType().getNumElements() != 1)
          continue;
        OpBuilder eb(elements);
        auto type = cast.getType();
        auto value = DenseElementsAttr::get(
            elements.getType(), IntegerAttr::get(type, APInt(type.getIntOrFloatBitWidth(), rank)));
        elements.replaceAllUsesWith(ConstantOp::create(eb, elements.getLoc(), value).getResult());
        elements.erase();
      }
      if (cast->use_empty())
        cast.erase();
    }
    op.replaceAllUsesWith(r);
    op.erase();
    return success();
  }

  /// The rank's block along the slice axis: a static slice.
  LogicalResult bindSlice(shard::AllSliceOp op) {
    FailureOr<int64_t> size = checkedRank(op, op.getGridAttr(), "a replicated tensor sliced by rank");
    if (failed(size))
      return failure();
    auto in = cast<RankedTensorType>(op.getInput().getType());
    int64_t axis = op.getSliceAxis().getSExtValue();
    if (op.getGridAxes().size() != 1 || ShapedType::isDynamic(in.getDimSize(axis)) ||
        in.getDimSize(axis) % *size)
      return op.emitError("rlx-mir-bind-rank: an all_slice over one grid axis of a static dim "
                          "the ranks divide");
    int64_t block = in.getDimSize(axis) / *size;
    SmallVector<int64_t> offsets(in.getRank(), 0), sizes(in.getRank(), -1), strides(in.getRank(), 1);
    offsets[axis] = rank * block;
    sizes[axis] = block;
    OpBuilder b(op);
    MIRBuilder mb(b, op.getLoc(), /*diagnose=*/true);
    Value local = mb.slice(op.getInput(), offsets, sizes, strides);
    if (!local)
      return failure();
    op.getResult().replaceAllUsesWith(local);
    op.erase();
    return success();
  }

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<shard::ProcessLinearIndexOp, shard::AllSliceOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      LogicalResult r = isa<shard::AllSliceOp>(op) ? bindSlice(cast<shard::AllSliceOp>(op))
                                                   : bindIndex(cast<shard::ProcessLinearIndexOp>(op));
      if (failed(r))
        return signalPassFailure();
    }
    // The artifact records the rank it was compiled for.
    if (!ops.empty())
      getOperation()->setAttr("rlx.tp_rank",
                              IntegerAttr::get(IntegerType::get(&getContext(), 64), rank));
  }
};

struct MIRGpuCollectivesPass : public mir::impl::MIRGpuCollectivesBase<MIRGpuCollectivesPass> {
  using MIRGpuCollectivesBase::MIRGpuCollectivesBase;

  /// all_gather along axis a with a dim other than 1 before a: an
  /// all-gather of the blocks along a new leading axis, the ranks' axis
  /// moved to a, and the two merged.
  LogicalResult contiguousGather(shard::AllGatherOp op) {
    FailureOr<int64_t> size = gridSize(op, op.getGridAttr(), "rlx-mir-gpu-collectives");
    if (failed(size))
      return failure();
    auto in = cast<RankedTensorType>(op.getInput().getType());
    auto out = cast<RankedTensorType>(op.getResult().getType());
    if (!in.hasStaticShape() || !out.hasStaticShape())
      return op.emitError("rlx-mir-gpu-collectives: an all-gather on the GPU path needs static "
                          "shapes");
    int64_t axis = op.getGatherAxis().getSExtValue();
    if (llvm::all_of(in.getShape().take_front(axis), [](int64_t d) { return d == 1; }))
      return success();
    OpBuilder b(op);
    MIRBuilder mb(b, op.getLoc(), /*diagnose=*/true);
    SmallVector<int64_t> lead{1};
    llvm::append_range(lead, in.getShape());
    Value blocks = mb.reshape(op.getInput(), lead);
    if (!blocks)
      return failure();
    SmallVector<int64_t> gatheredShape(lead);
    gatheredShape[0] = *size;
    auto gathered = shard::AllGatherOp::create(
        b, op.getLoc(), RankedTensorType::get(gatheredShape, in.getElementType()),
        op.getGridAttr(), op.getGridAxesAttr(), blocks, b.getIndexAttr(0));
    // [tp, d0, .., d(a-1), da, ..] → [d0, .., d(a-1), tp, da, ..].
    SmallVector<int64_t> perm;
    for (int64_t d = 1; d <= axis; ++d)
      perm.push_back(d);
    perm.push_back(0);
    for (int64_t d = axis + 1; d < static_cast<int64_t>(lead.size()); ++d)
      perm.push_back(d);
    Value moved = mb.transpose(gathered.getResult(), perm);
    Value result = mb.reshape(moved, out.getShape());
    if (!result)
      return failure();
    op.getResult().replaceAllUsesWith(result);
    op.erase();
    return success();
  }

  void runOnOperation() override {
    SmallVector<shard::AllGatherOp> gathers;
    getOperation().walk([&](shard::AllGatherOp g) { gathers.push_back(g); });
    for (shard::AllGatherOp g : gathers)
      if (failed(contiguousGather(g)))
        return signalPassFailure();
  }
};

} // namespace
