//===- TensorParallelRun.cpp - rlx-run --tp N under mpirun ----------------===//

#include "TensorParallelRun.h"

#include "RLX/Dialect/MIR/Transforms/Sharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <functional>

using namespace mlir;
using namespace mlir::rlx;

namespace {
// Open MPI's C ABI: handles are pointers to its predefined objects.
using InitializedFn = int (*)(int *);
using InitFn = int (*)(int *, char ***);
using CommQueryFn = int (*)(void *, int *);
using GatherFn = int (*)(const void *, int, void *, void *, int, void *, int, void *);
using FinalizeFn = int (*)();
using BcastFn = int (*)(void *, int, void *, int, void *);
using AllreduceFn = int (*)(const void *, void *, int, void *, void *, void *);
using AllgatherFn = int (*)(const void *, int, void *, void *, int, void *, void *);
/// Open MPI's MPI_IN_PLACE.
void *const kInPlace = reinterpret_cast<void *>(1);

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
  w.bcastFn = dlsym(lib, "MPI_Bcast");
  w.allreduceFn = dlsym(lib, "MPI_Allreduce");
  w.floatType = dlsym(lib, "ompi_mpi_float");
  w.sumOp = dlsym(lib, "ompi_mpi_op_sum");
  w.allgatherFn = dlsym(lib, "MPI_Allgather");
  if (!w.world || !w.byteType || !initialized || !init || !commRank || !commSize ||
      !w.gatherFn || !w.finalizeFn || !w.bcastFn || !w.allreduceFn || !w.floatType || !w.sumOp || !w.allgatherFn) {
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

LogicalResult MpiWorld::broadcast(void *data, size_t bytes, std::string &error) const {
  if (bytes > static_cast<size_t>(INT32_MAX) ||
      reinterpret_cast<BcastFn>(bcastFn)(data, static_cast<int>(bytes), byteType, 0, world) != 0) {
    error = "MPI_Bcast failed";
    return failure();
  }
  return success();
}

int MpiWorld::hostAllReduce(void *ctx, const void *send, void *recv, size_t count,
                            const char *dtype) {
  const auto *w = static_cast<const MpiWorld *>(ctx);
  if (std::strcmp(dtype, "f32") != 0 || count > static_cast<size_t>(INT32_MAX))
    return 1;
  const void *in = send == recv ? kInPlace : send;
  return reinterpret_cast<AllreduceFn>(w->allreduceFn)(in, recv, static_cast<int>(count),
                                                       w->floatType, w->sumOp, w->world);
}

int MpiWorld::hostAllGather(void *ctx, const void *send, void *recv, size_t bytes) {
  const auto *w = static_cast<const MpiWorld *>(ctx);
  if (bytes > static_cast<size_t>(INT32_MAX))
    return 1;
  int n = static_cast<int>(bytes);
  return reinterpret_cast<AllgatherFn>(w->allgatherFn)(send, n, w->byteType, recv, n, w->byteType,
                                                       w->world);
}

void MpiWorld::finalize() const { reinterpret_cast<FinalizeFn>(finalizeFn)(); }

std::map<std::string, std::vector<int64_t>> mlir::rlx::wholeShapes(ModuleOp module) {
  std::map<std::string, std::vector<int64_t>> shapes;
  auto record = [&](DictionaryAttr attrs, Type type) {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!attrs || !t)
      return;
    for (StringRef key : {"rlx.param", "rlx.input", "rlx.output"})
      if (auto s = attrs.getAs<StringAttr>(key)) {
        std::vector<int64_t> shape;
        for (int64_t d : t.getShape())
          shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
        shapes.emplace(s.getValue().str(), shape);
      }
  };
  module.walk([&](func::FuncOp f) {
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      record(f.getArgAttrDict(i), f.getArgument(i).getType());
    for (unsigned i = 0; i < f.getNumResults(); ++i)
      record(f.getResultAttrDict(i), f.getResultTypes()[i]);
  });
  return shapes;
}

std::vector<int64_t> mlir::rlx::globalShape(StringRef name, const std::vector<int64_t> &local,
                                            int64_t tp,
                                            const std::map<std::string, std::vector<int64_t>> &whole) {
  if (auto it = whole.find(name.str()); it != whole.end() && it->second.size() == local.size() &&
                                        llvm::none_of(it->second, [](int64_t d) { return d < 0; }))
    return it->second;
  std::vector<int64_t> shape = local;
  mir::TensorParallelSplit split = mir::tensorParallelSplit(name, local.size());
  if (split.dim >= 0)
    shape[split.dim] *= tp;
  return shape;
}

FailureOr<HostTensor> mlir::rlx::rankBlock(StringRef name, const HostTensor &t,
                                           const std::vector<int64_t> &local, int64_t rank,
                                           int64_t tp, std::string &error) {
  mir::TensorParallelSplit split = mir::tensorParallelSplit(name, t.shape.size());
  if (split.kind == mir::TensorParallelKind::Unsupported && tp > 1) {
    error = "'" + name.str() + "' is a packed layout RLX does not split under tensor parallelism";
    return failure();
  }
  if (t.shape.empty())
    return t;
  // A dynamic per-rank dim is whole, or the block of tp of the split dim.
  std::vector<int64_t> resolved = local;
  for (size_t d = 0; d < resolved.size() && d < t.shape.size(); ++d)
    if (resolved[d] < 0)
      resolved[d] = static_cast<int64_t>(d) == split.dim && t.shape[d] % tp == 0
                        ? t.shape[d] / tp
                        : t.shape[d];
  auto region = mir::rankRegion(name, t.shape, resolved, rank, tp);
  if (region.empty()) {
    auto shape = [](const std::vector<int64_t> &s) {
      std::string out;
      for (int64_t d : s)
        out += (out.empty() ? "" : ", ") + std::to_string(d);
      return "[" + out + "]";
    };
    error = "the per-rank shape " + shape(local) + " of '" + name.str() +
            "' is not a block of tp = " + std::to_string(tp) + " of its whole shape " +
            shape(t.shape) +
            (split.dim >= 0 ? " (" + std::string(mir::stringifyTensorParallelKind(split.kind)) +
                                  "-parallel along dim " + std::to_string(split.dim) +
                                  (split.parts > 1 ? ", " + std::to_string(split.parts) +
                                                         " packed parts"
                                                   : "") +
                                  ")"
                            : "");
    return failure();
  }
  HostTensor out = HostTensor::zeros(t.dtype, resolved);
  // Copy the region dim by dim: the innermost whole dims are one memcpy.
  size_t element = HostTensor::elementBytes(t.dtype);
  int64_t rankDims = static_cast<int64_t>(t.shape.size());
  int64_t contiguous = rankDims; // dims [contiguous, rank) are whole
  while (contiguous > 0 && region[contiguous - 1].size() == 1 &&
         region[contiguous - 1][0].first == 0 &&
         region[contiguous - 1][0].second == t.shape[contiguous - 1])
    --contiguous;
  int64_t chunk = static_cast<int64_t>(element);
  for (int64_t d = contiguous; d < rankDims; ++d)
    chunk *= t.shape[d];
  std::vector<int64_t> strides(rankDims, static_cast<int64_t>(element));
  for (int64_t d = rankDims - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * t.shape[d + 1];
  uint8_t *dst = out.data.data();
  std::function<void(int64_t, int64_t)> copy = [&](int64_t d, int64_t offset) {
    if (d == contiguous) {
      std::memcpy(dst, t.data.data() + offset, chunk);
      dst += chunk;
      return;
    }
    for (auto [begin, end] : region[d])
      for (int64_t i = begin; i < end; ++i)
        copy(d + 1, offset + i * strides[d]);
  };
  copy(0, 0);
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
