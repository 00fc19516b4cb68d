//===- MpiEffects.cpp - Memory effects of upstream MPI collectives --------===//
//
// Upstream's `mpi.allreduce` (what convert-shard-to-mpi makes of a
// `shard.all_reduce`) declares no memory effects, which the ownership-based
// buffer deallocation pipeline refuses ("ops with unknown memory side
// effects are not supported"). The collective reads its send buffer and
// writes its receive buffer; this external model says so, and nothing more.
//
//===----------------------------------------------------------------------===//

#include "RLX/Target/CPU/CpuPipeline.h"

#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

struct AllReduceEffects
    : public MemoryEffectOpInterface::ExternalModel<AllReduceEffects, mpi::AllReduceOp> {
  void getEffects(Operation *op,
                  SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects)
      const {
    auto allReduce = cast<mpi::AllReduceOp>(op);
    effects.emplace_back(MemoryEffects::Read::get(), &allReduce.getSendbufMutable(),
                         SideEffects::DefaultResource::get());
    effects.emplace_back(MemoryEffects::Read::get(), &allReduce.getRecvbufMutable(),
                         SideEffects::DefaultResource::get());
    effects.emplace_back(MemoryEffects::Write::get(), &allReduce.getRecvbufMutable(),
                         SideEffects::DefaultResource::get());
  }
};

} // namespace

void mlir::rlx::registerMPIMemoryEffectModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, mpi::MPIDialect *) {
    mpi::AllReduceOp::attachInterface<AllReduceEffects>(*ctx);
  });
}
