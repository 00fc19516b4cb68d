//===- Backend.h - Where an artifact's kernels run --------------*- C++ -*-===//
//
// The runtime (Runtime.cpp) walks a manifest function's plan: it allocates
// the arena and IO buffers, uploads inputs and weights, launches the kernels
// in plan order and copies outputs back. A Backend is the device underneath:
// the CUDA driver (CUDABackend.cpp) or the CPU emulator running the same
// kernels compiled for the host (EmulatorBackend.cpp). Device pointers are
// 64-bit integers on both (CUdeviceptr; a host address on the emulator), so a
// kernel parameter is always a pointer to one of them.
//===----------------------------------------------------------------------===//
#ifndef RLX_RUNTIME_GPU_BACKEND_H
#define RLX_RUNTIME_GPU_BACKEND_H

#include "RLX/Runtime/GPU/Manifest.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rlx::gpu {

struct CUDADriver;

using DevicePtr = uint64_t;

/// Host all-reduce (sum) of `count` elements of `dtype` ("f32", "f16",
/// "bf16") across the ranks, from `send` into `recv` (which may be equal):
/// the caller's transport, e.g. MPI_Allreduce. Returns 0 on success.
using HostAllReduceFn = int (*)(void *ctx, const void *send, void *recv, size_t count,
                                const char *dtype);
/// Host all-gather of `bytes` bytes from every rank into `recv` (rank r's
/// at r·bytes): e.g. MPI_Allgather of bytes. Returns 0 on success.
using HostAllGatherFn = int (*)(void *ctx, const void *send, void *recv, size_t bytes);

/// Tensor-parallel ranks: this process is `rank` of `size`. The CUDA backend
/// runs collectives with NCCL on the id every rank was given (rank 0 made
/// it, ncclGetUniqueId); the emulator, whose device memory is host memory,
/// calls `hostAllReduce`.
struct Communicator {
  int rank = 0, size = 1;
  bool hasNcclId = false;
  unsigned char ncclId[128] = {};
  HostAllReduceFn hostAllReduce = nullptr;
  HostAllGatherFn hostAllGather = nullptr;
  void *hostContext = nullptr;
};

class Backend {
public:
  virtual ~Backend();
  virtual const char *name() const = 0;

  /// `label` names the allocation in reports ("f/@arena", "f/x").
  virtual bool alloc(uint64_t bytes, const std::string &label, DevicePtr &out, std::string &error) = 0;
  virtual void free(DevicePtr p) = 0;
  virtual bool copyToDevice(DevicePtr dst, const void *src, uint64_t bytes, std::string &error) = 0;
  virtual bool copyToHost(void *dst, DevicePtr src, uint64_t bytes, std::string &error) = 0;

  /// Loads every module of the manifest and resolves every kernel.
  virtual bool loadModules(const Manifest &m, std::string &error) = 0;
  /// Launches m.kernels[kernel] (asynchronously where the device allows).
  /// params[i] points at the value of kernel parameter i.
  virtual bool launch(size_t kernel, const Dim3 &grid, const Dim3 &block, uint64_t dynamicSharedBytes,
                      void **params, std::string &error) = 0;
  virtual bool synchronize(std::string &error) = 0;
  /// Encodes `map` over the device memory at `base` into the 128 bytes at
  /// `out` (64-byte aligned host memory): the driver's CUtensorMap, or the
  /// emulator's rlx_emu_tensor_map. The runtime copies it to the device.
  virtual bool encodeTensorMap(const TensorMapInfo &map, DevicePtr base, void *out, std::string &error) = 0;

  /// Timing of the work between timerStart and timerStop, in milliseconds
  /// (CUDA events on the stream; wall clock on the emulator).
  virtual bool timerStart(std::string &error) = 0;
  virtual bool timerStop(double &ms, std::string &error) = 0;
  /// Evicts from the device's caches what earlier work left there, before a
  /// timed run (CUDA: a buffer twice the L2's size written on the stream).
  /// The emulator's timing models no cache: nothing to do.
  virtual bool flushCaches(std::string &error) { return true; }
  /// Per block of the last launch, in launch order (x fastest): its start
  /// (µs from the launch's) and duration, where the backend knows them (the
  /// emulator, which runs blocks one after another); empty elsewhere.
  virtual std::vector<std::pair<double, double>> lastBlockTimes() { return {}; }

  /// The ranks a tensor-parallel plan's collectives run over (see
  /// rlx_gpu_set_communicator). Without one, a plan runs as one rank.
  virtual bool setCommunicator(const Communicator &c, std::string &error) = 0;
  /// Sum all-reduce of `count` elements of `dtype` from `send` into `recv`
  /// (they may be equal), ordered after the work launched before it.
  virtual bool allReduceSum(DevicePtr send, DevicePtr recv, uint64_t count, const std::string &dtype,
                            std::string &error) = 0;
  /// Every rank's `count` elements of `dtype` at `send`, in rank order, at
  /// `recv` (size × count elements).
  virtual bool allGather(DevicePtr send, DevicePtr recv, uint64_t count, const std::string &dtype,
                         std::string &error) = 0;
  /// The communicator's size (1 without one).
  virtual int communicatorSize() const = 0;
};

/// The CUDA backend on the system driver (dlopen'ed libcuda.so.1).
std::unique_ptr<Backend> createCUDABackend(std::string &error);
/// The CUDA backend on a given driver table (unit tests pass a fake one).
/// `driver` must outlive the backend.
std::unique_ptr<Backend> createCUDABackend(const CUDADriver &driver, std::string &error);
/// The emulator backend; loadModules dlopens the artifact's emulator library.
std::unique_ptr<Backend> createEmulatorBackend(std::string &error);

} // namespace rlx::gpu

#endif // RLX_RUNTIME_GPU_BACKEND_H
