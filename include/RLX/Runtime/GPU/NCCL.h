//===- NCCL.h - NCCL, dlopen'ed like the driver -----------------*- C++ -*-===//
//
// The collectives of a tensor-parallel plan on the CUDA backend are NCCL
// calls on the backend's stream. Like the driver (CUDADriver.h), NCCL is
// opened at run time (libnccl.so.2, or $RLX_NCCL_LIBRARY): the runtime builds
// and links without it, and only a tensor-parallel run on a GPU needs it.
// The declarations are NCCL's C ABI (nccl.h, NCCL 2.x): an opaque
// communicator, a 128-byte unique id passed by value, and enums as ints.
//===----------------------------------------------------------------------===//
#ifndef RLX_RUNTIME_GPU_NCCL_H
#define RLX_RUNTIME_GPU_NCCL_H

#include <cstddef>
#include <string>

namespace rlx::gpu {

constexpr size_t kNcclUniqueIdBytes = 128;
struct NcclUniqueId {
  char internal[kNcclUniqueIdBytes];
};
using NcclComm = struct ncclComm *;

/// NCCL's data types (ncclDataType_t) and reduction (ncclRedOp_t) used here.
enum NcclDataType : int { kNcclFloat16 = 6, kNcclFloat32 = 7, kNcclBfloat16 = 9 };
enum NcclRedOp : int { kNcclSum = 0 };

struct NCCLLibrary {
  int (*ncclGetUniqueId)(NcclUniqueId *id) = nullptr;
  int (*ncclCommInitRank)(NcclComm *comm, int nranks, NcclUniqueId id, int rank) = nullptr;
  int (*ncclCommDestroy)(NcclComm comm) = nullptr;
  int (*ncclAllReduce)(const void *send, void *recv, size_t count, int dtype, int op, NcclComm comm,
                       void *stream) = nullptr;
  int (*ncclAllGather)(const void *send, void *recv, size_t sendcount, int dtype, NcclComm comm,
                       void *stream) = nullptr;
  const char *(*ncclGetErrorString)(int result) = nullptr;
};

/// Opens NCCL (`libraryName`, or $RLX_NCCL_LIBRARY, else libnccl.so.2) and
/// resolves its entry points; false with `error` naming what is missing.
bool loadNCCL(NCCLLibrary &out, std::string &error, const char *libraryName = nullptr);

/// NCCL's data type for an MLIR element type name; -1 for others.
int ncclDataTypeOf(const std::string &dtype);

} // namespace rlx::gpu

#endif // RLX_RUNTIME_GPU_NCCL_H
