//===- CUDABackend.cpp - Artifacts on the CUDA driver API ------------------===//
//
// One device (ordinal 0), its primary context and one non-blocking stream.
// Every CUresult is checked; errors carry the CUresult name and the kernel or
// module they concern. The driver is dlopen'ed (CUDADriver.h), so the runtime
// loads on machines without CUDA and says so when asked to use it.
//
// Shared memory (cases R1): a launch needing more than 48 KiB of shared memory
// in total (static + dynamic) only runs after the function's
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES was raised to its dynamic
// part. The attribute is a per-function high-water mark, raised and never
// lowered, so interleaved large and small launches (also from several
// threads) all stay valid. A total above the device's opt-in maximum fails
// before the launch.
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/GPU/Backend.h"
#include "RLX/Runtime/GPU/CUDADriver.h"
#include "RLX/Runtime/GPU/NCCL.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <vector>

namespace rlx::gpu {

Backend::~Backend() = default;

std::string cudaErrorName(const CUDADriver &d, CUresult r) {
  const char *name = nullptr;
  if (d.cuGetErrorName && d.cuGetErrorName(r, &name) == CUDA_SUCCESS && name)
    return name;
  return "CUresult " + std::to_string(r);
}

bool loadCUDADriver(CUDADriver &out, std::string &error, const char *libraryName) {
  void *lib = ::dlopen(libraryName, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    error = std::string("no CUDA driver (") + libraryName + " not found)";
    return false;
  }
  // cuGetProcAddress_v2 (CUDA >= 12) returns each entry point with the ABI of
  // the CUDA version asked for; older drivers only export the versioned names.
  using GetProc = CUresult (*)(const char *, void **, int, unsigned long long, int *);
  auto getProc = reinterpret_cast<GetProc>(::dlsym(lib, "cuGetProcAddress_v2"));
  struct Entry {
    void **slot;
    const char *name;
    const char *versioned;
    bool optional;
  };
  CUDADriver d;
#define RLX_CU(field, versioned, optional)                                                                            \
  Entry { reinterpret_cast<void **>(&d.field), #field, versioned, optional }
  const Entry entries[] = {
      RLX_CU(cuInit, "cuInit", false),
      RLX_CU(cuDeviceGetCount, "cuDeviceGetCount", false),
      RLX_CU(cuDeviceGet, "cuDeviceGet", false),
      RLX_CU(cuDeviceGetAttribute, "cuDeviceGetAttribute", false),
      RLX_CU(cuDeviceGetName, "cuDeviceGetName", false),
      RLX_CU(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", false),
      RLX_CU(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", false),
      RLX_CU(cuCtxSetCurrent, "cuCtxSetCurrent", false),
      RLX_CU(cuStreamCreate, "cuStreamCreate", false),
      RLX_CU(cuStreamDestroy, "cuStreamDestroy_v2", false),
      RLX_CU(cuStreamSynchronize, "cuStreamSynchronize", false),
      RLX_CU(cuMemAlloc, "cuMemAlloc_v2", false),
      RLX_CU(cuMemFree, "cuMemFree_v2", false),
      RLX_CU(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", false),
      RLX_CU(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", false),
      RLX_CU(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", true),
      RLX_CU(cuMemsetD8Async, "cuMemsetD8Async", true),
      RLX_CU(cuModuleLoadData, "cuModuleLoadData", false),
      RLX_CU(cuModuleLoadDataEx, "cuModuleLoadDataEx", true),
      RLX_CU(cuModuleUnload, "cuModuleUnload", false),
      RLX_CU(cuModuleGetFunction, "cuModuleGetFunction", false),
      RLX_CU(cuFuncGetAttribute, "cuFuncGetAttribute", false),
      RLX_CU(cuFuncSetAttribute, "cuFuncSetAttribute", false),
      RLX_CU(cuLaunchKernel, "cuLaunchKernel", false),
      RLX_CU(cuEventCreate, "cuEventCreate", false),
      RLX_CU(cuEventDestroy, "cuEventDestroy_v2", false),
      RLX_CU(cuEventRecord, "cuEventRecord", false),
      RLX_CU(cuEventSynchronize, "cuEventSynchronize", false),
      RLX_CU(cuEventElapsedTime, "cuEventElapsedTime", false),
      RLX_CU(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled", true),
      RLX_CU(cuGetErrorName, "cuGetErrorName", true),
      RLX_CU(cuGetErrorString, "cuGetErrorString", true),
  };
#undef RLX_CU
  for (const Entry &e : entries) {
    void *fn = nullptr;
    int status = 0;
    if (!getProc || getProc(e.name, &fn, 12000, /*CU_GET_PROC_ADDRESS_DEFAULT*/ 0, &status) != CUDA_SUCCESS)
      fn = nullptr;
    if (!fn)
      fn = ::dlsym(lib, e.versioned);
    if (!fn && !e.optional) {
      error = std::string("CUDA driver ") + libraryName + " lacks " + e.versioned;
      ::dlclose(lib);
      return false;
    }
    *e.slot = fn;
  }
  out = d;
  return true;
}

namespace {

bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

constexpr uint64_t kDefaultSharedLimit = 48 * 1024;

class CUDABackend final : public Backend {
public:
  explicit CUDABackend(const CUDADriver &d) : d_(d) {}
  ~CUDABackend() override;

  bool init(std::string &error);
  const char *name() const override { return "cuda"; }
  bool alloc(uint64_t bytes, const std::string &label, DevicePtr &out, std::string &error) override;
  void free(DevicePtr p) override;
  bool copyToDevice(DevicePtr dst, const void *src, uint64_t bytes, std::string &error) override;
  bool copyToHost(void *dst, DevicePtr src, uint64_t bytes, std::string &error) override;
  bool loadModules(const Manifest &m, std::string &error) override;
  bool launch(size_t kernel, const Dim3 &grid, const Dim3 &block, uint64_t dynamicSharedBytes, void **params,
              std::string &error) override;
  bool synchronize(std::string &error) override;
  bool encodeTensorMap(const TensorMapInfo &map, DevicePtr base, void *out, std::string &error) override;
  bool timerStart(std::string &error) override;
  bool flushCaches(std::string &error) override;
  bool timerStop(double &ms, std::string &error) override;
  bool setCommunicator(const Communicator &c, std::string &error) override;
  bool allReduceSum(DevicePtr send, DevicePtr recv, uint64_t count, const std::string &dtype,
                    std::string &error) override;
  bool allGather(DevicePtr send, DevicePtr recv, uint64_t count, const std::string &dtype,
                 std::string &error) override;
  int communicatorSize() const override { return comm_.size; }

private:
  bool deviceCopy(DevicePtr dst, DevicePtr src, uint64_t bytes, std::string &error);
  /// A one-rank copy without NCCL, else `call` with NCCL's data type.
  bool collective(const char *what, DevicePtr send, DevicePtr recv, uint64_t count, const std::string &dtype,
                  std::string &error, const std::function<int(int type)> &call);
  struct Kernel {
    std::string name, module;
    CUfunction fn = nullptr;
    uint64_t staticShared = 0;
    uint64_t dynamicLimit = 0; ///< the attribute as last set (high-water mark), 0 = never set
  };

  // Checks r; on failure sets error to "<what>: <CUresult name> (<text>)".
  bool check(CUresult r, const std::string &what, std::string &error) const {
    if (r == CUDA_SUCCESS)
      return true;
    error = what + ": " + cudaErrorName(d_, r);
    const char *text = nullptr;
    if (d_.cuGetErrorString && d_.cuGetErrorString(r, &text) == CUDA_SUCCESS && text && *text)
      error += std::string(" (") + text + ")";
    return false;
  }
  // The context is per thread in the driver API: make it current on
  // whichever thread calls us.
  bool makeCurrent(std::string &error) {
    thread_local CUcontext current = nullptr;
    if (current == ctx_)
      return true;
    if (!check(d_.cuCtxSetCurrent(ctx_), "cuCtxSetCurrent", error))
      return false;
    current = ctx_;
    return true;
  }
  bool loadModule(const Manifest &m, const ModuleInfo &mo, CUmodule &out, std::string &error);

  const CUDADriver &d_;
  CUdevice dev_ = 0;
  bool retained_ = false;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr, stop_ = nullptr;
  /// Twice the L2's size, written before each timed run (flushCaches).
  CUdeviceptr flush_ = 0;
  size_t flushBytes_ = 0;
  unsigned char flushValue_ = 0;
  int ccMajor_ = 0, ccMinor_ = 0;
  uint64_t optinLimit_ = kDefaultSharedLimit;
  std::vector<CUmodule> modules_;
  std::vector<Kernel> kernels_;
  std::mutex attrMutex_; ///< guards Kernel::dynamicLimit, the attribute and lastKernel_
  std::string lastKernel_;
  bool warnedFallback_ = false;
  /// Tensor parallelism: NCCL on the stream (size > 1).
  Communicator comm_;
  NCCLLibrary nccl_;
  NcclComm ncclComm_ = nullptr;
};

CUDABackend::~CUDABackend() {
  std::string ignored;
  if (ctx_)
    (void)makeCurrent(ignored);
  if (stream_)
    d_.cuStreamSynchronize(stream_);
  if (ncclComm_)
    nccl_.ncclCommDestroy(ncclComm_);
  if (flush_)
    d_.cuMemFree(flush_);
  if (start_)
    d_.cuEventDestroy(start_);
  if (stop_)
    d_.cuEventDestroy(stop_);
  for (CUmodule m : modules_)
    if (m)
      d_.cuModuleUnload(m);
  if (stream_)
    d_.cuStreamDestroy(stream_);
  if (retained_)
    d_.cuDevicePrimaryCtxRelease(dev_);
}

bool CUDABackend::init(std::string &error) {
  CUresult r = d_.cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    error = "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)";
    return false;
  }
  if (!check(r, "cuInit", error))
    return false;
  int count = 0;
  if (!check(d_.cuDeviceGetCount(&count), "cuDeviceGetCount", error))
    return false;
  if (count == 0) {
    error = "no CUDA device";
    return false;
  }
  // One device per process: $RLX_CUDA_DEVICE (rlx-run --tp sets it to each
  // rank's local rank), else ordinal 0.
  int ordinal = 0;
  if (const char *env = std::getenv("RLX_CUDA_DEVICE")) {
    char *end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (!*env || *end || v < 0 || v >= count) {
      error = std::string("RLX_CUDA_DEVICE='") + env + "' is not a device ordinal (this machine has " +
              std::to_string(count) + " CUDA device(s))";
      return false;
    }
    ordinal = int(v);
  }
  if (!check(d_.cuDeviceGet(&dev_, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")", error) ||
      !check(d_.cuDeviceGetAttribute(&ccMajor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_),
             "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)", error) ||
      !check(d_.cuDeviceGetAttribute(&ccMinor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev_),
             "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)", error))
    return false;
  int optin = 0;
  if (!check(d_.cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev_),
             "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)", error))
    return false;
  optinLimit_ = optin > 0 ? uint64_t(optin) : kDefaultSharedLimit;
  if (!check(d_.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain", error))
    return false;
  retained_ = true;
  if (!makeCurrent(error))
    return false;
  return check(d_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate", error);
}

bool CUDABackend::alloc(uint64_t bytes, const std::string &label, DevicePtr &out, std::string &error) {
  if (!makeCurrent(error))
    return false;
  CUdeviceptr p = 0;
  // cuMemAlloc rejects 0 bytes; a zero-byte buffer still gets an address.
  if (!check(d_.cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc(" + std::to_string(bytes) + " bytes for " + label + ")",
             error))
    return false;
  out = p;
  return true;
}

void CUDABackend::free(DevicePtr p) {
  std::string ignored;
  if (p && makeCurrent(ignored))
    d_.cuMemFree(p);
}

bool CUDABackend::copyToDevice(DevicePtr dst, const void *src, uint64_t bytes, std::string &error) {
  return makeCurrent(error) && (bytes == 0 || check(d_.cuMemcpyHtoDAsync(dst, src, bytes, stream_),
                                                    "cuMemcpyHtoDAsync", error));
}

bool CUDABackend::copyToHost(void *dst, DevicePtr src, uint64_t bytes, std::string &error) {
  if (!makeCurrent(error))
    return false;
  if (bytes && !check(d_.cuMemcpyDtoHAsync(dst, src, bytes, stream_), "cuMemcpyDtoHAsync", error))
    return false;
  return synchronize(error);
}

bool CUDABackend::loadModule(const Manifest &m, const ModuleInfo &mo, CUmodule &out, std::string &error) {
  std::string device = "sm_" + std::to_string(ccMajor_) + std::to_string(ccMinor_);
  std::string where = "module '" + mo.name + "'";
  CUresult cubinResult = CUDA_SUCCESS;
  if (!mo.cubin.empty()) {
    std::string image;
    if (!readFile(m.dir + "/" + mo.cubin, image)) {
      error = where + ": cannot read cubin '" + mo.cubin + "'";
      return false;
    }
    cubinResult = d_.cuModuleLoadData(&out, image.data());
    if (cubinResult == CUDA_SUCCESS)
      return true;
    bool fallback = (cubinResult == CUDA_ERROR_NO_BINARY_FOR_GPU || cubinResult == CUDA_ERROR_INVALID_IMAGE) &&
                    !mo.ptx.empty();
    if (!fallback)
      return check(cubinResult,
                   "cuModuleLoadData of " + where + " (cubin '" + mo.cubin + "' for " + m.chip + ", device " + device +
                       (mo.ptx.empty() ? ", no PTX to fall back to)" : ")"),
                   error);
    if (!warnedFallback_) {
      std::fprintf(stderr,
                   "rlx-gpu: %s: cubin '%s' (%s) rejected with %s on this %s device; JIT-compiling PTX '%s' instead\n",
                   where.c_str(), mo.cubin.c_str(), m.chip.c_str(), cudaErrorName(d_, cubinResult).c_str(),
                   device.c_str(), mo.ptx.c_str());
      warnedFallback_ = true;
    }
  }
  std::string ptx;
  if (!readFile(m.dir + "/" + mo.ptx, ptx)) {
    error = where + ": cannot read PTX '" + mo.ptx + "'";
    return false;
  }
  ptx.push_back('\0');
  std::string what = "cuModuleLoadData of " + where + " (PTX '" + mo.ptx + "', .version " + m.ptxVersion +
                     ", device " + device + ")";
  if (d_.cuModuleLoadDataEx) {
    std::vector<char> log(8192, '\0');
    int opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log.data(), reinterpret_cast<void *>(uintptr_t(log.size()))};
    CUresult r = d_.cuModuleLoadDataEx(&out, ptx.data(), 2, opts, vals);
    if (r != CUDA_SUCCESS) {
      check(r, what, error);
      log.back() = '\0';
      if (log[0])
        error += ": " + std::string(log.data());
      return false;
    }
    return true;
  }
  return check(d_.cuModuleLoadData(&out, ptx.data()), what, error);
}

bool CUDABackend::loadModules(const Manifest &m, std::string &error) {
  if (!makeCurrent(error))
    return false;
  for (const ModuleInfo &mo : m.modules) {
    CUmodule mod = nullptr;
    if (!loadModule(m, mo, mod, error))
      return false;
    modules_.push_back(mod);
  }
  for (const KernelInfo &k : m.kernels) {
    Kernel kk;
    kk.name = k.name;
    kk.module = k.module;
    if (!check(d_.cuModuleGetFunction(&kk.fn, modules_[k.moduleIndex], k.name.c_str()),
               "cuModuleGetFunction of kernel '" + k.name + "' in module '" + k.module + "'", error))
      return false;
    int bytes = 0;
    if (d_.cuFuncGetAttribute(&bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, kk.fn) == CUDA_SUCCESS && bytes >= 0)
      kk.staticShared = uint64_t(bytes);
    else
      kk.staticShared = k.staticSharedBytes;
    kernels_.push_back(std::move(kk));
  }
  return true;
}

bool CUDABackend::launch(size_t kernel, const Dim3 &grid, const Dim3 &block, uint64_t dynamicSharedBytes,
                         void **params, std::string &error) {
  if (kernel >= kernels_.size()) {
    error = "launch of kernel #" + std::to_string(kernel) + ": modules not loaded";
    return false;
  }
  if (!makeCurrent(error))
    return false;
  Kernel &k = kernels_[kernel];
  std::string where = "kernel '" + k.name + "' (module '" + k.module + "')";
  uint64_t total = dynamicSharedBytes + k.staticShared;
  if (total > optinLimit_) {
    error = where + ": " + std::to_string(total) + " bytes of shared memory requested (" +
            std::to_string(k.staticShared) + " static + " + std::to_string(dynamicSharedBytes) +
            " dynamic) exceed the device's opt-in limit of " + std::to_string(optinLimit_) +
            " bytes (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)";
    return false;
  }
  // The 48 KiB default covers static + dynamic together: a kernel with 1 B
  // static and exactly 48 KiB dynamic already needs the attribute.
  if (total > kDefaultSharedLimit) {
    std::lock_guard<std::mutex> lock(attrMutex_);
    if (dynamicSharedBytes > k.dynamicLimit) {
      if (!check(d_.cuFuncSetAttribute(k.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(dynamicSharedBytes)),
                 "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, " + std::to_string(dynamicSharedBytes) + ") of " +
                     where,
                 error))
        return false;
      k.dynamicLimit = dynamicSharedBytes;
    }
  }
  {
    std::lock_guard<std::mutex> lock(attrMutex_);
    lastKernel_ = k.name;
  }
  return check(d_.cuLaunchKernel(k.fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                 unsigned(dynamicSharedBytes), stream_, params, nullptr),
               "cuLaunchKernel of " + where, error);
}

bool CUDABackend::setCommunicator(const Communicator &c, std::string &error) {
  if (ncclComm_) {
    error = "the CUDA backend's communicator is set already";
    return false;
  }
  // NCCL whenever an id is given (one rank too: a single-GPU check of the
  // NCCL path); without one, one rank copies.
  if (c.size > 1 || c.hasNcclId) {
    if (!c.hasNcclId) {
      error = "a CUDA communicator over " + std::to_string(c.size) +
              " ranks needs the NCCL unique id of rank 0 (rlx_gpu_nccl_unique_id)";
      return false;
    }
    if (!makeCurrent(error) || !loadNCCL(nccl_, error))
      return false;
    NcclUniqueId id;
    std::memcpy(id.internal, c.ncclId, sizeof(id.internal));
    if (int r = nccl_.ncclCommInitRank(&ncclComm_, c.size, id, c.rank)) {
      error = "ncclCommInitRank (rank " + std::to_string(c.rank) + " of " + std::to_string(c.size) +
              "): " + nccl_.ncclGetErrorString(r);
      ncclComm_ = nullptr;
      return false;
    }
  }
  comm_ = c;
  return true;
}

bool CUDABackend::deviceCopy(DevicePtr dst, DevicePtr src, uint64_t bytes, std::string &error) {
  if (dst == src || bytes == 0)
    return true;
  if (!d_.cuMemcpyDtoDAsync) {
    error = "the CUDA driver lacks cuMemcpyDtoDAsync_v2 (a one-rank collective)";
    return false;
  }
  return check(d_.cuMemcpyDtoDAsync(dst, src, bytes, stream_), "cuMemcpyDtoDAsync", error);
}

bool CUDABackend::collective(const char *what, DevicePtr send, DevicePtr recv, uint64_t count,
                             const std::string &dtype, std::string &error,
                             const std::function<int(int type)> &call) {
  if (!makeCurrent(error))
    return false;
  if (!ncclComm_)
    return deviceCopy(recv, send, count * uint64_t(dtypeBytes(dtype)), error);
  int type = ncclDataTypeOf(dtype);
  if (type < 0) {
    error = std::string("NCCL has no ") + what + " of " + dtype;
    return false;
  }
  if (int r = call(type)) {
    error = std::string(what) + ": " + nccl_.ncclGetErrorString(r);
    return false;
  }
  return true;
}

bool CUDABackend::allReduceSum(DevicePtr send, DevicePtr recv, uint64_t count, const std::string &dtype,
                               std::string &error) {
  return collective("ncclAllReduce", send, recv, count, dtype, error, [&](int type) {
    return nccl_.ncclAllReduce(reinterpret_cast<const void *>(send), reinterpret_cast<void *>(recv), count, type,
                               kNcclSum, ncclComm_, stream_);
  });
}

bool CUDABackend::allGather(DevicePtr send, DevicePtr recv, uint64_t count, const std::string &dtype,
                            std::string &error) {
  return collective("ncclAllGather", send, recv, count, dtype, error, [&](int type) {
    return nccl_.ncclAllGather(reinterpret_cast<const void *>(send), reinterpret_cast<void *>(recv), count, type,
                               ncclComm_, stream_);
  });
}

bool CUDABackend::synchronize(std::string &error) {
  if (!makeCurrent(error))
    return false;
  std::string lastKernel;
  {
    std::lock_guard<std::mutex> lock(attrMutex_);
    lastKernel = lastKernel_;
  }
  return check(d_.cuStreamSynchronize(stream_),
               lastKernel.empty() ? std::string("cuStreamSynchronize")
                                   : "cuStreamSynchronize (last kernel launched: '" + lastKernel + "')",
               error);
}

bool CUDABackend::timerStart(std::string &error) {
  if (!makeCurrent(error))
    return false;
  if (!start_ && (!check(d_.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate", error) ||
                  !check(d_.cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate", error)))
    return false;
  return check(d_.cuEventRecord(start_, stream_), "cuEventRecord", error);
}

bool CUDABackend::flushCaches(std::string &error) {
  if (!makeCurrent(error))
    return false;
  if (!d_.cuMemsetD8Async) {
    error = "the CUDA driver has no cuMemsetD8Async (flushing the L2 for timing)";
    return false;
  }
  if (!flush_) {
    int l2 = 0;
    if (!check(d_.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev_),
               "cuDeviceGetAttribute(L2_CACHE_SIZE)", error))
      return false;
    // Writing twice the L2's bytes leaves none of the timed work's data in it.
    flushBytes_ = 2 * size_t(std::max(l2, 1 << 20));
    if (!check(d_.cuMemAlloc(&flush_, flushBytes_), "cuMemAlloc (L2 flush buffer)", error))
      return false;
  }
  ++flushValue_;
  return check(d_.cuMemsetD8Async(flush_, flushValue_, flushBytes_, stream_), "cuMemsetD8Async", error);
}

bool CUDABackend::timerStop(double &ms, std::string &error) {
  float f = 0;
  if (!makeCurrent(error) || !check(d_.cuEventRecord(stop_, stream_), "cuEventRecord", error) ||
      !check(d_.cuEventSynchronize(stop_), "cuEventSynchronize", error) ||
      !check(d_.cuEventElapsedTime(&f, start_, stop_), "cuEventElapsedTime", error))
    return false;
  ms = double(f);
  return true;
}

bool CUDABackend::encodeTensorMap(const TensorMapInfo &map, DevicePtr base, void *out, std::string &error) {
  if (!d_.cuTensorMapEncodeTiled) {
    error = "the CUDA driver has no cuTensorMapEncodeTiled (CUDA 12 or newer is needed for TMA)";
    return false;
  }
  int type = map.dtype == "bf16"  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
             : map.dtype == "f16" ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
             : map.dtype == "f32" ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
             : map.dtype == "f64" ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64
             : map.elementBytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
             : map.elementBytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
             : map.elementBytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                                     : CU_TENSOR_MAP_DATA_TYPE_UINT64;
  unsigned long long dims[5], strides[4];
  unsigned box[5], elementStrides[5] = {1, 1, 1, 1, 1};
  for (uint32_t d = 0; d < map.rank; ++d) {
    dims[d] = map.dims[d];
    box[d] = map.box[d];
    if (d)
      strides[d - 1] = map.strides[d - 1];
  }
  return check(d_.cuTensorMapEncodeTiled(out, type, map.rank, reinterpret_cast<void *>(base), dims, strides, box,
                                         elementStrides, /*INTERLEAVE_NONE*/ 0, int(map.swizzle),
                                         CU_TENSOR_MAP_L2_PROMOTION_L2_128B, /*OOB_FILL_NONE: zeros*/ 0),
               "cuTensorMapEncodeTiled", error);
}

} // namespace

std::unique_ptr<Backend> createCUDABackend(const CUDADriver &driver, std::string &error) {
  auto b = std::make_unique<CUDABackend>(driver);
  if (!b->init(error))
    return nullptr;
  return b;
}

std::unique_ptr<Backend> createCUDABackend(std::string &error) {
  // One table per process: the library stays loaded.
  static CUDADriver driver;
  static std::string loadError;
  static bool loaded = loadCUDADriver(driver, loadError);
  if (!loaded) {
    error = loadError;
    return nullptr;
  }
  return createCUDABackend(driver, error);
}

} // namespace rlx::gpu
