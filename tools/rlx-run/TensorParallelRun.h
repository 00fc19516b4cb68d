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

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <map>

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
  /// Rank 0's `bytes` bytes at `data` to every rank.
  LogicalResult broadcast(void *data, size_t bytes, std::string &error) const;
  /// The GPU runtime's host all-reduce (rlx_gpu_host_allreduce_fn) over this
  /// job, `ctx` a MpiWorld: MPI_Allreduce with MPI_SUM of f32 (MPI has no
  /// 16-bit floats: f16/bf16 fail, naming the dtype).
  static int hostAllReduce(void *ctx, const void *send, void *recv, size_t count,
                           const char *dtype);
  /// The runtime's host all-gather: MPI_Allgather of `bytes` bytes per rank.
  static int hostAllGather(void *ctx, const void *send, void *recv, size_t bytes);
  void finalize() const;

private:
  void *gatherFn = nullptr, *finalizeFn = nullptr, *world = nullptr, *byteType = nullptr;
  void *bcastFn = nullptr, *allreduceFn = nullptr, *floatType = nullptr, *sumOp = nullptr;
  void *allgatherFn = nullptr;
};

/// The shapes of the model's named tensors (rlx.param, rlx.input,
/// rlx.output) before sharding, from every function of `module`; dynamic
/// dims as -1.
std::map<std::string, std::vector<int64_t>> wholeShapes(ModuleOp module);

/// The shape of the whole tensor `name` whose rank-local shape is `local`:
/// its unsharded shape from `whole` where static, else `local` with the
/// split dim times tp.
std::vector<int64_t> globalShape(StringRef name, const std::vector<int64_t> &local, int64_t tp,
                                 const std::map<std::string, std::vector<int64_t>> &whole = {});

/// Rank `rank`'s block of the whole tensor `t`, of the per-rank shape
/// `local` (mir::rankRegion: block `rank` of the split dim, of every part
/// side by side for a packed projection, or a stacked expert tensor's
/// expert and intermediate blocks under rlx-mir-shard{ep}); a copy of `t`
/// when `local` is its shape (replicated, or KV heads replicated when
/// tp > num_kv_heads); an error when `local` is no such block.
FailureOr<HostTensor> rankBlock(StringRef name, const HostTensor &t,
                                const std::vector<int64_t> &local, int64_t rank, int64_t tp,
                                std::string &error);

/// The whole tensor from the blocks of every rank (rank order), joined
/// along the split dim of `name`.
HostTensor joinBlocks(StringRef name, const std::vector<HostTensor> &blocks);

} // namespace mlir::rlx

#endif // RLX_TOOLS_RLX_RUN_TENSORPARALLELRUN_H
