//===- CUDADriver.h - The CUDA driver API as a table ------------*- C++ -*-===//
//
// The GPU runtime must build and load on machines without CUDA, so it does
// not include cuda.h or link libcuda: it declares the few driver types and
// values it uses (numbers from the CUDA driver API reference) and calls the
// driver through this table of function pointers, filled from libcuda.so.1 at
// run time (loadCUDADriver) or, in unit tests, with fakes.
//===----------------------------------------------------------------------===//
#ifndef RLX_RUNTIME_GPU_CUDADRIVER_H
#define RLX_RUNTIME_GPU_CUDADRIVER_H

#include <cstddef>
#include <string>

namespace rlx::gpu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

enum : CUresult {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_FAILED = 719,
};

enum : int {
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_STREAM_NON_BLOCKING = 1,
  CU_EVENT_DEFAULT = 0,
};

/// CUtensorMapDataType values.
enum : int {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
  CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
  CU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
  CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4,
  CU_TENSOR_MAP_DATA_TYPE_INT64 = 5,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
};

/// The driver entry points the runtime calls, with the ABI of CUDA 12.0
/// (cuMemAlloc is cuMemAlloc_v2 and so on). A null entry is an error when
/// used, except the optional ones marked so.
struct CUDADriver {
  CUresult (*cuInit)(unsigned flags) = nullptr;
  CUresult (*cuDeviceGetCount)(int *count) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *dev, int ordinal) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int *value, int attrib, CUdevice dev) = nullptr;
  CUresult (*cuDeviceGetName)(char *name, int len, CUdevice dev) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice dev) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext ctx) = nullptr;
  CUresult (*cuStreamCreate)(CUstream *stream, unsigned flags) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream stream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream stream) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr *p, size_t bytes) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr p) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream s) = nullptr;
  CUresult (*cuMemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream s) = nullptr;
  /// Optional: a one-rank collective (tensor parallelism) is a device copy.
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s) = nullptr;
  /// Optional: timing with the L2 flushed (rlx_gpu_set_flush_caches).
  CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream s) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule *mod, const void *image) = nullptr;
  /// Optional: PTX is JIT-compiled with it to get ptxas' error log.
  CUresult (*cuModuleLoadDataEx)(CUmodule *mod, const void *image, unsigned numOptions, int *options,
                                 void **values) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule mod) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction *f, CUmodule mod, const char *name) = nullptr;
  CUresult (*cuFuncGetAttribute)(int *value, int attrib, CUfunction f) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction f, int attrib, int value) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned sharedBytes, CUstream s, void **params, void **extra) = nullptr;
  CUresult (*cuEventCreate)(CUevent *e, unsigned flags) = nullptr;
  CUresult (*cuEventDestroy)(CUevent e) = nullptr;
  CUresult (*cuEventRecord)(CUevent e, CUstream s) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent e) = nullptr;
  CUresult (*cuEventElapsedTime)(float *ms, CUevent start, CUevent end) = nullptr;
  /// Optional (CUDA 12+): kernels with TMA loads need it.
  CUresult (*cuTensorMapEncodeTiled)(void *tensorMap, int dataType, unsigned rank, void *globalAddress,
                                     const unsigned long long *globalDim,
                                     const unsigned long long *globalStrides, const unsigned *boxDim,
                                     const unsigned *elementStrides, int interleave, int swizzle,
                                     int l2Promotion, int oobFill) = nullptr;
  /// Optional: without them errors show the number only.
  CUresult (*cuGetErrorName)(CUresult r, const char **name) = nullptr;
  CUresult (*cuGetErrorString)(CUresult r, const char **text) = nullptr;
};

/// Fills `out` from `libraryName` (dlopen, then cuGetProcAddress_v2 asking
/// for the CUDA 12.0 ABI, else dlsym of the versioned names). Fails with
/// "no CUDA driver (libcuda.so.1 not found)" when the library does not load,
/// or names the first missing entry point. The library stays loaded.
bool loadCUDADriver(CUDADriver &out, std::string &error, const char *libraryName = "libcuda.so.1");

/// "CUDA_ERROR_NO_BINARY_FOR_GPU" (or "CUresult 209" without cuGetErrorName).
std::string cudaErrorName(const CUDADriver &d, CUresult r);

} // namespace rlx::gpu

#endif // RLX_RUNTIME_GPU_CUDADRIVER_H
