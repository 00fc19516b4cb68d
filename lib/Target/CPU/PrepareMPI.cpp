//===- PrepareMPI.cpp - rlx-cpu-prepare-mpi -------------------------------===//
//
// shard.all_gather as a zero-padded all-reduce (LLVM 22 has no mpi all-gather),
// Open MPI's reduction-op symbol names after LLVM 22's MPI lowering, the MPI
// ABI for a tensor-parallel module's MPI calls (a DLTI entry read by
// upstream's MPI → LLVM lowering) and the removal of the shard.grid symbols
// that convert-shard-to-mpi leaves behind.
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_CPUPREPAREMPI
#define GEN_PASS_DEF_CPUEXPANDALLGATHER
#define GEN_PASS_DEF_CPUOPENMPISYMBOLS
#include "RLX/Target/CPU/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;

namespace {

struct CpuPrepareMPIPass : rlx::impl::CpuPrepareMPIBase<CpuPrepareMPIPass> {
  using CpuPrepareMPIBase::CpuPrepareMPIBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool usesMPI = false;
    module.walk([&](Operation *op) {
      if (isa_and_nonnull<mpi::MPIDialect>(op->getDialect()))
        usesMPI = true;
      return usesMPI ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (usesMPI && failed(prepareMPI(module)))
      return signalPassFailure();
    // The device grids go (a program of one rank, --tp 1, has no collective
    // but still its grid).
    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>())) {
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(grid.getSymNameAttr(), module);
      if (uses && !uses->empty()) {
        uses->begin()->getUser()->emitError()
            << "rlx-cpu-prepare-mpi: '" << uses->begin()->getUser()->getName()
            << "' still uses the device grid @" << grid.getSymName()
            << " after convert-shard-to-mpi (a collective it does not lower)";
        return signalPassFailure();
      }
      grid.erase();
    }
  }

  LogicalResult prepareMPI(ModuleOp module) {
    if (implementation != "OpenMPI" && implementation != "MPICH") {
      return module.emitError() << "rlx-cpu-prepare-mpi: implementation must be OpenMPI or MPICH, got '"
                                << implementation << "'";
    }
    MLIRContext *ctx = &getContext();
    if (!module->hasAttr("dlti.map")) {
      auto entry = DataLayoutEntryAttr::get(StringAttr::get(ctx, "MPI:Implementation"),
                                            StringAttr::get(ctx, implementation));
      module->setAttr("dlti.map", MapAttr::get(ctx, {entry}));
    }
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// rlx-cpu-expand-all-gather
//===----------------------------------------------------------------------===//

namespace {

struct CpuExpandAllGatherPass : rlx::impl::CpuExpandAllGatherBase<CpuExpandAllGatherPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    SmallVector<shard::AllGatherOp> gathers;
    module.walk([&](shard::AllGatherOp op) { gathers.push_back(op); });
    for (shard::AllGatherOp op : gathers) {
      auto in = dyn_cast<RankedTensorType>(op.getInput().getType());
      auto out = dyn_cast<RankedTensorType>(op.getResult().getType());
      shard::GridOp grid = shard::getGridOrNull(op, op.getGridAttr(), symbols);
      if (!in || !out || !in.hasStaticShape() || !out.hasStaticShape() || !grid ||
          grid.getShape().size() != 1) {
        op.emitError("rlx-cpu-expand-all-gather: needs static tensors on a 1-D grid");
        return signalPassFailure();
      }
      OpBuilder b(op);
      Location loc = op.getLoc();
      int64_t axis = op.getGatherAxis().getSExtValue();
      Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(out.getElementType()));
      Value empty = tensor::EmptyOp::create(b, loc, out.getShape(), out.getElementType());
      Value zeros = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
      Value rank = shard::ProcessLinearIndexOp::create(b, loc, grid);
      Value block = arith::ConstantIndexOp::create(b, loc, in.getDimSize(axis));
      Value offset = arith::MulIOp::create(b, loc, rank, block);
      SmallVector<OpFoldResult> offsets(in.getRank(), b.getIndexAttr(0));
      offsets[axis] = offset;
      SmallVector<OpFoldResult> sizes, strides(in.getRank(), b.getIndexAttr(1));
      for (int64_t d : in.getShape())
        sizes.push_back(b.getIndexAttr(d));
      Value placed =
          tensor::InsertSliceOp::create(b, loc, op.getInput(), zeros, offsets, sizes, strides);
      Value reduced = shard::AllReduceOp::create(b, loc, out, op.getGridAttr(),
                                                 op.getGridAxesAttr(), placed,
                                                 shard::ReductionKindAttr::get(
                                                     &getContext(), shard::ReductionKind::Sum));
      op.replaceAllUsesWith(reduced);
      op.erase();
    }
    // All-reduces over the whole (1-D) grid: MPI_Allreduce on
    // MPI_COMM_WORLD. LLVM 22's convert-shard-to-mpi splits a communicator
    // on every call (a collective itself, never freed) and, with Open MPI,
    // reads the new communicator back as a 32-bit int.
    SmallVector<shard::AllReduceOp> reduces;
    module.walk([&](shard::AllReduceOp op) { reduces.push_back(op); });
    for (shard::AllReduceOp op : reduces) {
      auto in = dyn_cast<RankedTensorType>(op.getInput().getType());
      auto out = dyn_cast<RankedTensorType>(op.getResult().getType());
      shard::GridOp grid = shard::getGridOrNull(op, op.getGridAttr(), symbols);
      std::optional<mpi::MPI_ReductionOpEnum> kind;
      switch (op.getReduction()) {
      case shard::ReductionKind::Sum: kind = mpi::MPI_ReductionOpEnum::MPI_SUM; break;
      case shard::ReductionKind::Max: kind = mpi::MPI_ReductionOpEnum::MPI_MAX; break;
      case shard::ReductionKind::Min: kind = mpi::MPI_ReductionOpEnum::MPI_MIN; break;
      case shard::ReductionKind::Product: kind = mpi::MPI_ReductionOpEnum::MPI_PROD; break;
      default: break;
      }
      if (!in || !out || in != out || !in.hasStaticShape() || !grid || !kind ||
          grid.getShape().size() != 1 || op.getGridAxes().size() != 1)
        continue; // left to convert-shard-to-mpi
      if (in.getRank() == 0)
        continue;
      OpBuilder b(op);
      Location loc = op.getLoc();
      // 1-D buffers: LLVM 22's MPI → LLVM lowering takes a buffer's first
      // dim as its element count.
      SmallVector<ReassociationIndices> all(1);
      for (int64_t d = 0; d < in.getRank(); ++d)
        all[0].push_back(d);
      auto memrefType = MemRefType::get(in.getShape(), in.getElementType());
      auto flatType = MemRefType::get({in.getNumElements()}, in.getElementType());
      Value send = bufferization::ToBufferOp::create(b, loc, memrefType, op.getInput(),
                                                     /*readOnly=*/true);
      Value sendFlat = memref::CollapseShapeOp::create(b, loc, flatType, send, all);
      Value recv = memref::AllocOp::create(b, loc, flatType);
      Value world = mpi::CommWorldOp::create(b, loc, mpi::CommType::get(&getContext()));
      mpi::AllReduceOp::create(b, loc, TypeRange{}, sendFlat, recv,
                               mpi::MPI_ReductionOpEnumAttr::get(&getContext(), *kind), world);
      Value flat = bufferization::ToTensorOp::create(
          b, loc, RankedTensorType::get({in.getNumElements()}, in.getElementType()), recv,
          /*restrict=*/true, /*writable=*/true);
      Value result = tensor::ExpandShapeOp::create(b, loc, out, flat, all);
      op.replaceAllUsesWith(result);
      op.erase();
    }
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// rlx-cpu-open-mpi-symbols
//===----------------------------------------------------------------------===//

namespace {

struct CpuOpenMPISymbolsPass : rlx::impl::CpuOpenMPISymbolsBase<CpuOpenMPISymbolsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    static constexpr StringLiteral kOps[] = {"sum",  "max",  "min",  "prod",   "land",
                                             "band", "lor",  "bor",  "lxor",   "bxor",
                                             "maxloc", "minloc", "replace", "no_op"};
    for (auto global : llvm::to_vector(module.getOps<LLVM::GlobalOp>())) {
      StringRef name = global.getSymName();
      if (!name.consume_front("ompi_mpi_") || !llvm::is_contained(kOps, name))
        continue;
      auto fixed = StringAttr::get(&getContext(), "ompi_mpi_op_" + name.str());
      if (SymbolTable::lookupSymbolIn(module, fixed)) {
        global.emitError("rlx-cpu-open-mpi-symbols: both @") << global.getSymName()
                                                            << " and @" << fixed.getValue()
                                                            << " are defined";
        return signalPassFailure();
      }
      if (failed(SymbolTable::replaceAllSymbolUses(global.getSymNameAttr(), fixed, module)))
        return signalPassFailure();
      global.setSymName(fixed.getValue());
    }
  }
};

} // namespace
