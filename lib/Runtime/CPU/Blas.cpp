//===- Blas.cpp - The BLAS the CPU runtime calls, chosen at load time -----===//
//
// See Blas.h for the search order.
//
//===----------------------------------------------------------------------===//

#include "Blas.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

#ifndef RLX_BLAS_CANDIDATES
#define RLX_BLAS_CANDIDATES ""
#endif
#ifndef RLX_DNNL_CANDIDATES
#define RLX_DNNL_CANDIDATES ""
#endif

namespace rlx::cpu {
namespace {

/// `name` or, failing that, `scipy_name` (the scipy-openblas builds).
void *symbol(void *handle, const char *name) {
  if (void *p = dlsym(handle, name))
    return p;
  std::string prefixed = std::string("scipy_") + name;
  return dlsym(handle, prefixed.c_str());
}

template <typename Fn>
void bind(Fn &fn, void *handle, const char *name) {
  fn = reinterpret_cast<Fn>(symbol(handle, name));
}

/// Opens `lib` into `b`; false (with `why`) when it does not load or is not
/// a CBLAS.
bool tryLoad(Blas &b, const std::string &lib, std::string &why) {
  void *handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *e = dlerror();
    why = e ? e : ("cannot open " + lib);
    return false;
  }
  bind(b.sgemm, handle, "cblas_sgemm");
  bind(b.sgemv, handle, "cblas_sgemv");
  if (!b.sgemm || !b.sgemv) {
    why = lib + " has no cblas_sgemm/cblas_sgemv";
    b.sgemm = nullptr;
    b.sgemv = nullptr;
    dlclose(handle);
    return false;
  }
  bind(b.setNumThreads, handle, "openblas_set_num_threads");
  bind(b.getNumThreads, handle, "openblas_get_num_threads");
  bind(b.getConfig, handle, "openblas_get_config");
  bind(b.getCorename, handle, "openblas_get_corename");
  Dl_info info;
  const char *file = dladdr(reinterpret_cast<void *>(b.sgemm), &info) && info.dli_fname
                         ? info.dli_fname
                         : lib.c_str();
  std::snprintf(b.path, sizeof(b.path), "%s", file);
  return true;
}

/// The configured ;-list, then `fallbacks`.
std::vector<std::string> candidates(const std::string &configured,
                                    std::initializer_list<const char *> fallbacks) {
  std::vector<std::string> list;
  for (size_t start = 0; start < configured.size();) {
    size_t end = configured.find(';', start);
    if (end == std::string::npos)
      end = configured.size();
    if (end > start)
      list.push_back(configured.substr(start, end - start));
    start = end + 1;
  }
  list.insert(list.end(), fallbacks.begin(), fallbacks.end());
  return list;
}

/// oneDNN's name for its instruction set (dnnl_cpu_isa_t), hex when unknown.
std::string isaName(unsigned isa) {
  switch (isa) {
  case 0x7: return "avx2";
  case 0x27: return "avx512_core";
  case 0x67: return "avx512_core_vnni";
  case 0xe7: return "avx512_core_bf16";
  default: {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "0x%x", isa);
    return hex;
  }
  }
}

struct DnnlVersion {
  int major, minor, patch;
  const char *hash;
};

/// Adds oneDNN's sgemm to `b` when it is found and, unless named by
/// RLX_DNNL, has AVX-512 kernels for this CPU; says why not otherwise.
void loadDnnl(Blas &b) {
  const char *env = std::getenv("RLX_DNNL");
  std::string forced = env ? env : "";
  if (forced == "0" || forced == "off") {
    std::snprintf(b.dnnlInfo, sizeof(b.dnnlInfo), "off (RLX_DNNL=%s)", forced.c_str());
    return;
  }
  // $RLX_DNNL_CANDIDATES (the Python package names its wheel's library
  // there) and the configured ones are tried like libdnnl.so.3: only used
  // where oneDNN has AVX-512 kernels.
  const char *envCandidates = std::getenv("RLX_DNNL_CANDIDATES");
  std::string listed = std::string(envCandidates ? envCandidates : "") + ";" + RLX_DNNL_CANDIDATES;
  std::vector<std::string> libs = forced.empty() ? candidates(listed, {"libdnnl.so.3"})
                                                 : std::vector<std::string>{forced};
  for (const std::string &lib : libs) {
    void *handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      continue;
    auto sgemm = reinterpret_cast<DnnlSgemmFn>(dlsym(handle, "dnnl_sgemm"));
    auto isaFn = reinterpret_cast<unsigned (*)()>(dlsym(handle, "dnnl_get_effective_cpu_isa"));
    auto versionFn =
        reinterpret_cast<const DnnlVersion *(*)()>(dlsym(handle, "dnnl_version"));
    if (!sgemm || !isaFn || !versionFn) {
      dlclose(handle);
      continue;
    }
    unsigned isa = isaFn();
    const DnnlVersion *v = versionFn();
    Dl_info info;
    const char *file = dladdr(reinterpret_cast<void *>(sgemm), &info) && info.dli_fname
                           ? info.dli_fname
                           : lib.c_str();
    bool avx512 = (isa & 0x27u) == 0x27u;
    std::snprintf(b.dnnlInfo, sizeof(b.dnnlInfo), "oneDNN %d.%d.%d, ISA %s%s (%s)", v->major,
                  v->minor, v->patch, isaName(isa).c_str(),
                  avx512 || !forced.empty() ? "" : ": not used, no AVX-512 kernels", file);
    if (!avx512 && forced.empty()) {
      dlclose(handle);
      return;
    }
    b.dnnlSgemm = sgemm;
    b.ompSetNumThreads = reinterpret_cast<void (*)(int)>(dlsym(handle, "omp_set_num_threads"));
    return;
  }
  const char *why = dlerror();
  if (forced.empty())
    std::snprintf(b.dnnlInfo, sizeof(b.dnnlInfo), "not found");
  else
    std::snprintf(b.dnnlInfo, sizeof(b.dnnlInfo), "RLX_DNNL=%s does not load: %s",
                  forced.c_str(), why ? why : "no dnnl_sgemm");
}

Blas load() {
  Blas b;
  // OpenBLAS's worker threads spin for 2^28 cycles after each call before they
  // sleep; next to oneDNN's OpenMP threads (and on 2 cores) that spinning takes
  // the cores the next GEMM needs: a Llama prefill step measured 370 ms instead
  // of 53. Unless the user set it, they sleep at once (read when the library
  // loads, below).
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", /*overwrite=*/0);
  if (const char *forced = std::getenv("RLX_BLAS"); forced && *forced) {
    std::string why;
    if (!tryLoad(b, forced, why))
      std::snprintf(b.error, sizeof(b.error), "RLX_BLAS=%s: %s", forced, why.c_str());
    else
      loadDnnl(b);
    return b;
  }
  std::string tried;
  for (const std::string &lib :
       candidates(RLX_BLAS_CANDIDATES, {"libopenblas.so.0", "libblas.so.3"})) {
    std::string why;
    if (tryLoad(b, lib, why)) {
      loadDnnl(b);
      return b;
    }
    tried += (tried.empty() ? "" : "; ") + why;
  }
  std::snprintf(b.error, sizeof(b.error),
                "no BLAS found (install scipy-openblas32 from PyPI or Debian's libopenblas0, or "
                "set RLX_BLAS to a CBLAS library): %s",
                tried.c_str());
  return b;
}

} // namespace

const Blas &blas() {
  static const Blas loaded = load();
  return loaded;
}

} // namespace rlx::cpu
