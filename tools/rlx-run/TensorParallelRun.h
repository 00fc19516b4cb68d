//===- TensorParallelRun.h - rlx-run --tp N under mpirun --------*- C++ -*-===//
//
// The runner's side of tensor parallelism: Open MPI opened with dlopen (the
// JIT-compiled collectives call the same library), each rank's block of a
// full tensor (weights, inputs) cut by tensorParallelSplit, and the blocks
// of split outputs (KV caches) gathered on rank 0, which writes the outputs.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TOOLS_RLX_RUN_TENSORPARALLELRUN_H
#define RLX_TOOLS_RLX_RUN_TENSORPARALLELRUN_H

#include "RLX/Target/CPU/HostTensor.h"

#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace mlir::rlx {

/// One process of an `mpirun -np N` job.
class MpiWorld {
public:
  /// Opens Open MPI ($RLX_MPI_LIBRARY, else libmpi.so.40 / libmpi.so) with
  /// RTLD_GLOBAL and initializes it; `tp` must equal the job's size.
  static FailureOr<MpiWorld> init(int64_t tp, std::string &error);
  int rank = 0, size = 1;
  /// Rank 0 receives every rank's `bytes` bytes, in rank order, in `recv`.
  LogicalResult gather(const void *send, size_t bytes, void *recv, std::string &error) const;
  void finalize() const;

private:
  void *gatherFn = nullptr, *finalizeFn = nullptr, *world = nullptr, *byteType = nullptr;
};

/// The shape of the whole tensor `name` whose rank-local shape is `local`.
std::vector<int64_t> globalShape(StringRef name, const std::vector<int64_t> &local, int64_t tp);

/// Rank `rank`'s block of the whole tensor `t` (a copy of `t` when `name`
/// is not split); an error when the split dim does not divide by tp.
FailureOr<HostTensor> rankBlock(StringRef name, const HostTensor &t, int64_t rank, int64_t tp,
                                std::string &error);

/// The whole tensor from the blocks of every rank (rank order), joined
/// along the split dim of `name`.
HostTensor joinBlocks(StringRef name, const std::vector<HostTensor> &blocks);

} // namespace mlir::rlx

#endif // RLX_TOOLS_RLX_RUN_TENSORPARALLELRUN_H
