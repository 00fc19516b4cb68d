//===- Blas.h - The BLAS the CPU runtime calls, chosen at load time -------===//
//
// The runtime does not link a BLAS: it opens one with dlopen the first time
// it needs one, so that the library is chosen for the CPU it runs on rather
// than for the machine it was built on. Search order (the first that opens
// and has cblas_sgemm wins):
//   1. $RLX_BLAS: a path or soname (an error when it does not load: a user
//      who names a library gets that library or a message, never another);
//   2. the libraries named at configure time (RLX_BLAS_CANDIDATES: by default
//      the OpenBLAS of the `scipy-openblas32` wheel, the OpenBLAS numpy and
//      SciPy ship, with DYNAMIC_ARCH kernels for every current x86-64 and
//      Arm core);
//   3. the system's libopenblas.so.0, then libblas.so.3.
// OpenBLAS picks its kernels (its "core") from CPUID itself; RLX never sets
// OPENBLAS_CORETYPE. Symbols are looked up with and without the `scipy_`
// prefix of the scipy-openblas builds.
//
// GEMMs with 16 rows or more and a row-major [K, N] B go to oneDNN's
// dnnl_sgemm instead when oneDNN is found ($RLX_DNNL_CANDIDATES, then the
// configured RLX_DNNL_CANDIDATES: by default the `onednn-cpu-gomp` wheel's
// libdnnl, then libdnnl.so.3) and its JIT picked AVX-512 kernels for this CPU: those run
// 1.5-1.9x OpenBLAS's on AVX-512 machines whose cores OpenBLAS maps to its
// AVX2 kernels (measured on AMD Zen 5, bench/README.md). RLX_DNNL=0 turns it
// off; RLX_DNNL=<library> forces that library, whatever its ISA. OPENBLAS_THREAD_TIMEOUT
// defaults to 4 (OpenBLAS's threads sleep right after a call instead of
// spinning on the cores oneDNN's threads need).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_RUNTIME_CPU_BLAS_H
#define RLX_RUNTIME_CPU_BLAS_H

#include <cstdint>

namespace rlx::cpu {

enum CblasOrder { CblasRowMajor = 101, CblasColMajor = 102 };
enum CblasTranspose { CblasNoTrans = 111, CblasTrans = 112 };

using SgemmFn = void (*)(CblasOrder, CblasTranspose, CblasTranspose, int m, int n, int k,
                         float alpha, const float *a, int lda, const float *b, int ldb,
                         float beta, float *c, int ldc);
using DnnlSgemmFn = int (*)(char transa, char transb, int64_t m, int64_t n, int64_t k,
                           float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                           float beta, float *c, int64_t ldc);
using SgemvFn = void (*)(CblasOrder, CblasTranspose, int m, int n, float alpha, const float *a,
                         int lda, const float *x, int incx, float beta, float *y, int incy);

/// The BLAS in use: loaded once (thread-safe), never unloaded.
struct Blas {
  SgemmFn sgemm = nullptr;
  SgemvFn sgemv = nullptr;
  void (*setNumThreads)(int) = nullptr;
  int (*getNumThreads)() = nullptr;
  const char *(*getConfig)() = nullptr;   ///< openblas_get_config
  const char *(*getCorename)() = nullptr; ///< openblas_get_corename
  char path[512] = {};                    ///< the library's file (dladdr)
  char error[1024] = {};                  ///< why none loaded (sgemm null)
  /// oneDNN's row-major sgemm, when it is used (see above), and its threads.
  DnnlSgemmFn dnnlSgemm = nullptr;
  void (*ompSetNumThreads)(int) = nullptr; ///< oneDNN's OpenMP (per calling thread)
  char dnnlInfo[512] = {}; ///< version, ISA, file; or why it is not used
};

/// The BLAS, loading it on the first call.
const Blas &blas();

} // namespace rlx::cpu

#endif // RLX_RUNTIME_CPU_BLAS_H
