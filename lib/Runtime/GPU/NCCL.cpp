//===- NCCL.cpp - Opening NCCL at run time --------------------------------===//

#include "RLX/Runtime/GPU/NCCL.h"

#include <cstdlib>
#include <dlfcn.h>

using namespace rlx::gpu;

bool rlx::gpu::loadNCCL(NCCLLibrary &out, std::string &error, const char *libraryName) {
  std::string name = libraryName ? libraryName : "";
  if (name.empty())
    if (const char *env = std::getenv("RLX_NCCL_LIBRARY"))
      name = env;
  if (name.empty())
    name = "libnccl.so.2";
  void *lib = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    error = "no NCCL (" + name +
            " not found; it comes with the CUDA toolkit or `pip install nvidia-nccl-cu13`, or set "
            "RLX_NCCL_LIBRARY)";
    return false;
  }
  NCCLLibrary n;
  struct Entry {
    void **slot;
    const char *name;
  };
  const Entry entries[] = {
      {reinterpret_cast<void **>(&n.ncclGetUniqueId), "ncclGetUniqueId"},
      {reinterpret_cast<void **>(&n.ncclCommInitRank), "ncclCommInitRank"},
      {reinterpret_cast<void **>(&n.ncclCommDestroy), "ncclCommDestroy"},
      {reinterpret_cast<void **>(&n.ncclAllReduce), "ncclAllReduce"},
      {reinterpret_cast<void **>(&n.ncclAllGather), "ncclAllGather"},
      {reinterpret_cast<void **>(&n.ncclGetErrorString), "ncclGetErrorString"},
  };
  for (const Entry &e : entries) {
    *e.slot = ::dlsym(lib, e.name);
    if (!*e.slot) {
      error = "NCCL library " + name + " lacks " + e.name;
      ::dlclose(lib);
      return false;
    }
  }
  out = n;
  return true;
}

int rlx::gpu::ncclDataTypeOf(const std::string &dtype) {
  if (dtype == "f32")
    return kNcclFloat32;
  if (dtype == "f16")
    return kNcclFloat16;
  if (dtype == "bf16")
    return kNcclBfloat16;
  return -1;
}
