//===- TensorParallelRun.cpp - rlx-run --tp N under mpirun ----------------===//

#include "TensorParallelRun.h"

#include "RLX/Dialect/MIR/Transforms/Sharding.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

using namespace mlir;
using namespace mlir::rlx;

namespace {
// Open MPI's C ABI: handles are pointers to its predefined objects.
using InitializedFn = int (*)(int *);
using InitFn = int (*)(int *, char ***);
using CommQueryFn = int (*)(void *, int *);
using GatherFn = int (*)(const void *, int, void *, void *, int, void *, int, void *);
using FinalizeFn = int (*)();

/// Rows (product of dims before `dim`), the split dim, and the bytes of one
/// slice below it.
struct Layout {
  int64_t outer = 1, dim = 1, inner = 1;
};
Layout layoutOf(const std::vector<int64_t> &shape, int64_t dim, size_t elementBytes) {
  Layout l;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < dim)
      l.outer *= shape[d];
    else if (d == dim)
      l.dim = shape[d];
    else
      l.inner *= shape[d];
  }
  l.inner *= static_cast<int64_t>(elementBytes);
  return l;
}
} // namespace

FailureOr<MpiWorld> MpiWorld::init(int64_t tp, std::string &error) {
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("RLX_MPI_LIBRARY"))
    candidates.push_back(env);
  candidates.push_back("libmpi.so.40");
  candidates.push_back("libmpi.so");
  void *lib = nullptr;
  std::string tried;
  for (const std::string &c : candidates) {
    lib = dlopen(c.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (lib)
      break;
    tried += (tried.empty() ? "" : ", ") + c;
  }
  if (!lib) {
    error = "--tp needs Open MPI (tried " + tried +
            "; install openmpi-bin, or set RLX_MPI_LIBRARY to libmpi.so)";
    return failure();
  }
  MpiWorld w;
  w.world = dlsym(lib, "ompi_mpi_comm_world");
  w.byteType = dlsym(lib, "ompi_mpi_byte");
  auto initialized = reinterpret_cast<InitializedFn>(dlsym(lib, "MPI_Initialized"));
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "MPI_Init"));
  auto commRank = reinterpret_cast<CommQueryFn>(dlsym(lib, "MPI_Comm_rank"));
  auto commSize = reinterpret_cast<CommQueryFn>(dlsym(lib, "MPI_Comm_size"));
  w.gatherFn = dlsym(lib, "MPI_Gather");
  w.finalizeFn = dlsym(lib, "MPI_Finalize");
  if (!w.world || !w.byteType || !initialized || !init || !commRank || !commSize ||
      !w.gatherFn || !w.finalizeFn) {
    error = "the MPI library is not Open MPI (RLX's CPU collectives use Open MPI's ABI)";
    return failure();
  }
  int done = 0;
  initialized(&done);
  if (!done && init(nullptr, nullptr) != 0) {
    error = "MPI_Init failed";
    return failure();
  }
  commRank(w.world, &w.rank);
  commSize(w.world, &w.size);
  if (w.size != tp) {
    error = "--tp " + std::to_string(tp) + " needs " + std::to_string(tp) +
            " MPI processes (mpirun -np " + std::to_string(tp) + " rlx-run ...), this job has " +
            std::to_string(w.size);
    w.finalize();
    return failure();
  }
  return w;
}

LogicalResult MpiWorld::gather(const void *send, size_t bytes, void *recv,
                               std::string &error) const {
  if (bytes > static_cast<size_t>(INT32_MAX)) {
    error = "a gathered block over 2 GiB";
    return failure();
  }
  int n = static_cast<int>(bytes);
  if (reinterpret_cast<GatherFn>(gatherFn)(send, n, byteType, recv, n, byteType, 0, world) != 0) {
    error = "MPI_Gather failed";
    return failure();
  }
  return success();
}

void MpiWorld::finalize() const { reinterpret_cast<FinalizeFn>(finalizeFn)(); }

std::vector<int64_t> mlir::rlx::globalShape(StringRef name, const std::vector<int64_t> &local,
                                            int64_t tp) {
  std::vector<int64_t> shape = local;
  mir::TensorParallelSplit split = mir::tensorParallelSplit(name, local.size());
  if (split.dim >= 0)
    shape[split.dim] *= tp;
  return shape;
}

FailureOr<HostTensor> mlir::rlx::rankBlock(StringRef name, const HostTensor &t, int64_t rank,
                                           int64_t tp, std::string &error) {
  mir::TensorParallelSplit split = mir::tensorParallelSplit(name, t.shape.size());
  if (split.dim < 0)
    return t;
  auto block = mir::shardBlock(t.shape[split.dim], rank, tp);
  if (!block) {
    error = "tp = " + std::to_string(tp) + " does not divide dim " + std::to_string(split.dim) +
            " (size " + std::to_string(t.shape[split.dim]) + ") of '" + name.str() + "'";
    return failure();
  }
  std::vector<int64_t> shape = t.shape;
  shape[split.dim] = block->second - block->first;
  HostTensor out = HostTensor::zeros(t.dtype, shape);
  Layout in = layoutOf(t.shape, split.dim, HostTensor::elementBytes(t.dtype));
  int64_t rowBytes = shape[split.dim] * in.inner;
  for (int64_t o = 0; o < in.outer; ++o)
    std::memcpy(out.data.data() + o * rowBytes,
                t.data.data() + (o * in.dim + block->first) * in.inner, rowBytes);
  return out;
}

HostTensor mlir::rlx::joinBlocks(StringRef name, const std::vector<HostTensor> &blocks) {
  const HostTensor &first = blocks.front();
  mir::TensorParallelSplit split = mir::tensorParallelSplit(name, first.shape.size());
  if (split.dim < 0 || blocks.size() == 1)
    return first;
  std::vector<int64_t> shape = first.shape;
  shape[split.dim] *= static_cast<int64_t>(blocks.size());
  HostTensor out = HostTensor::zeros(first.dtype, shape);
  Layout b = layoutOf(first.shape, split.dim, HostTensor::elementBytes(first.dtype));
  int64_t blockBytes = b.dim * b.inner;
  for (size_t r = 0; r < blocks.size(); ++r)
    for (int64_t o = 0; o < b.outer; ++o)
      std::memcpy(out.data.data() + (o * blocks.size() + r) * blockBytes,
                  blocks[r].data.data() + o * blockBytes, blockBytes);
  return out;
}
