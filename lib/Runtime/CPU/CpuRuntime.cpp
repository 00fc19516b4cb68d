//===- CpuRuntime.cpp - What RLX's generated CPU code calls ---------------===//
//
// A small C runtime loaded by the JIT (and linked into AOT builds): BLAS
// sgemm on memref descriptors (the BLAS is opened at load time: Blas.h). Row strides of the descriptors become BLAS
// leading dimensions, so slices of packed activations need no copy.
//
//===----------------------------------------------------------------------===//

#include "Blas.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace rlx::cpu;

namespace {
template <int Rank>
struct Desc {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

/// The leading dimension of a row-major matrix view: its row stride, or its
/// column count when there is a single row (whose stride is arbitrary).
inline int leading(int64_t rows, int64_t cols, int64_t rowStride) {
  return static_cast<int>(rows <= 1 ? std::max<int64_t>(cols, 1) : rowStride);
}

/// oneDNN serves GEMMs from this many rows (a decode step's grouped attention
/// products, 2-8 rows, stay with OpenBLAS, which has less to set up per call).
constexpr int64_t kDnnlMinRows = 16;

/// The thread count rlx_cpu_set_num_threads asked for (0: libraries' default).
std::atomic<int> requestedThreads{0};

/// C = op(A)·op(B) + beta·C by loops: only when no BLAS could be opened
/// (rlx-run and the Python package refuse to run then; a model linked ahead
/// of time gets the right numbers and one message on stderr).
void gemmLoops(const float *a, int64_t aStride, const float *b, int64_t bStride, float *c,
               int64_t m, int64_t n, int64_t k, int64_t cStride, bool ta, bool tb, float beta) {
  static std::once_flag warned;
  std::call_once(warned, [] {
    std::fprintf(stderr, "rlx cpu runtime: %s; matmuls run as plain loops\n", blas().error);
  });
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        acc += (ta ? a[p * aStride + i] : a[i * aStride + p]) *
               (tb ? b[j * bStride + p] : b[p * bStride + j]);
      float &out = c[i * cStride + j];
      out = beta == 0.0f ? acc : acc + beta * out;
    }
}

void gemm(const float *a, int64_t aRows, int64_t aCols, int64_t aStride, const float *b,
          int64_t bRows, int64_t bCols, int64_t bStride, float *c, int64_t m, int64_t n,
          int64_t cStride, bool ta, bool tb, float beta) {
  int64_t k = ta ? aRows : aCols;
  if (m == 0 || n == 0)
    return;
  const Blas &lib = blas();
  if (!lib.sgemm)
    return gemmLoops(a, aStride, b, bStride, c, m, n, k, cStride, ta, tb, beta);
  // One row (a decode step): a matrix-vector product. BLAS's gemm kernels
  // are far slower than gemv on this shape, which is bound by reading B.
  if (m == 1 && !ta) {
    // c = a·op(B): with transB, c = B·aᵀ over B [n, k]; else c = Bᵀ·aᵀ over B [k, n].
    lib.sgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, static_cast<int>(bRows),
              static_cast<int>(bCols), 1.0f, b, leading(bRows, bCols, bStride), a, 1, beta, c, 1);
    return;
  }
  // oneDNN for a row-major [K, N] B (rlx-mir-pack-weights{kn-weights} stores
  // weights so when the runtime says it prefers them: rlx_cpu_prefers_kn_weights).
  if (lib.dnnlSgemm && !ta && !tb && m >= kDnnlMinRows) {
    // OpenMP's thread count is per calling thread: apply the requested one.
    if (int threads = requestedThreads.load(std::memory_order_relaxed);
        threads > 0 && lib.ompSetNumThreads)
      lib.ompSetNumThreads(threads);
    // A status other than success (0) leaves C unwritten: OpenBLAS does it.
    if (lib.dnnlSgemm('N', 'N', m, n, k, 1.0f, a, leading(aRows, aCols, aStride), b,
                      leading(bRows, bCols, bStride), beta, c, leading(m, n, cStride)) == 0)
      return;
  }
  lib.sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
            static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
            leading(aRows, aCols, aStride), b, leading(bRows, bCols, bStride), beta, c,
            leading(m, n, cStride));
}
} // namespace

extern "C" {

/// C = op(A)·op(B) + beta·C on 2-D f32 descriptors.
void _mlir_ciface_rlx_cpu_sgemm(Desc<2> *a, Desc<2> *b, Desc<2> *c, int32_t ta, int32_t tb,
                                float beta) {
  gemm(a->aligned + a->offset, a->sizes[0], a->sizes[1], a->strides[0], b->aligned + b->offset,
       b->sizes[0], b->sizes[1], b->strides[0], c->aligned + c->offset, c->sizes[0], c->sizes[1],
       c->strides[0], ta != 0, tb != 0, beta);
}

/// The same for every batch of 3-D descriptors.
void _mlir_ciface_rlx_cpu_sgemm_batched(Desc<3> *a, Desc<3> *b, Desc<3> *c, int32_t ta,
                                        int32_t tb, float beta) {
  for (int64_t i = 0; i < c->sizes[0]; ++i)
    gemm(a->aligned + a->offset + i * a->strides[0], a->sizes[1], a->sizes[2], a->strides[1],
         b->aligned + b->offset + i * b->strides[0], b->sizes[1], b->sizes[2], b->strides[1],
         c->aligned + c->offset + i * c->strides[0], c->sizes[1], c->sizes[2], c->strides[1],
         ta != 0, tb != 0, beta);
}

/// A 1-D integer memref descriptor (expert ids: i32 or i64 elements).
struct IdDesc {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
};

/// out[t, :] = x[t, :]·w[clamp(ids[t])]ᵀ (rlx_mir.grouped_matmul on f32):
/// the rows of each expert gathered, one GEMM per expert with rows (a GEMV
/// for a single row), the results scattered back. `idBits`: 32 or 64;
/// `zeroOutOfRange`: rows of ids outside [0, E) are zeros, not clamped.
static void groupedSgemm(Desc<2> *x, Desc<3> *w, IdDesc *ids, Desc<2> *out, int idBits,
                         int32_t zeroOutOfRange) {
  int64_t t = x->sizes[0], k = x->sizes[1], e = w->sizes[0], n = w->sizes[1];
  if (t == 0 || n == 0 || e == 0)
    return;
  const float *xs = x->aligned + x->offset;
  float *os = out->aligned + out->offset;
  if (k == 0) { // empty sums (the caller's zero fill is gone)
    for (int64_t i = 0; i < t; ++i)
      std::fill_n(os + i * out->strides[0], n, 0.0f);
    return;
  }
  auto idAt = [&](int64_t i) -> int64_t {
    int64_t at = ids->offset + i * ids->strides[0];
    int64_t id = idBits == 32 ? static_cast<const int32_t *>(ids->aligned)[at]
                              : static_cast<const int64_t *>(ids->aligned)[at];
    if (zeroOutOfRange && (id < 0 || id >= e))
      return e; // the zero rows' bucket
    return std::clamp<int64_t>(id, 0, e - 1);
  };
  // Rows by expert (a counting sort keeps each expert's rows in order),
  // then the zero rows.
  std::vector<int64_t> start(e + 2, 0), order(t);
  for (int64_t i = 0; i < t; ++i)
    ++start[idAt(i) + 1];
  for (int64_t j = 0; j <= e; ++j)
    start[j + 1] += start[j];
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t i = 0; i < t; ++i)
    order[fill[idAt(i)]++] = i;
  for (int64_t i = start[e]; i < start[e + 1]; ++i)
    std::fill_n(os + order[i] * out->strides[0], n, 0.0f);
  std::vector<float> a, c;
  for (int64_t j = 0; j < e; ++j) {
    int64_t rows = start[j + 1] - start[j];
    if (rows == 0)
      continue;
    const float *wj = w->aligned + w->offset + j * w->strides[0];
    if (rows == 1) {
      int64_t r = order[start[j]];
      gemm(xs + r * x->strides[0], 1, k, x->strides[0], wj, n, k, w->strides[1],
           os + r * out->strides[0], 1, n, out->strides[0], false, true, 0.0f);
      continue;
    }
    a.resize(rows * k);
    c.resize(rows * n);
    for (int64_t i = 0; i < rows; ++i)
      std::memcpy(&a[i * k], xs + order[start[j] + i] * x->strides[0], k * sizeof(float));
    gemm(a.data(), rows, k, k, wj, n, k, w->strides[1], c.data(), rows, n, n, false, true, 0.0f);
    for (int64_t i = 0; i < rows; ++i)
      std::memcpy(os + order[start[j] + i] * out->strides[0], &c[i * n], n * sizeof(float));
  }
}

void _mlir_ciface_rlx_cpu_grouped_sgemm_i64(Desc<2> *x, Desc<3> *w, IdDesc *ids, Desc<2> *out,
                                            int32_t zeroOutOfRange) {
  groupedSgemm(x, w, ids, out, 64, zeroOutOfRange);
}

void _mlir_ciface_rlx_cpu_grouped_sgemm_i32(Desc<2> *x, Desc<3> *w, IdDesc *ids, Desc<2> *out,
                                            int32_t zeroOutOfRange) {
  groupedSgemm(x, w, ids, out, 32, zeroOutOfRange);
}

/// memref.copy of non-contiguous memrefs, as MLIR's memref-to-llvm lowering
/// calls it: `memrefCopy(element bytes, unranked src, unranked dst)`, an
/// unranked memref being {rank, descriptor*} and a descriptor {allocated,
/// aligned, offset, sizes[rank], strides[rank]} (in elements). RLX defines it
/// here instead of loading upstream's libmlir_c_runner_utils.so, which would
/// bring libMLIR/libLLVM into the process's global symbol scope (and break
/// other LLVM users in the process, e.g. triton under torch).
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

/// The first element and the sizes/strides of an unranked memref.
struct StridedView {
  char *data;
  const int64_t *sizes, *strides;
};

static StridedView viewOf(const UnrankedMemRef *m, int64_t elemSize) {
  auto *d = static_cast<char *>(m->descriptor);
  char *aligned;
  int64_t offset;
  std::memcpy(&aligned, d + sizeof(void *), sizeof(void *));
  std::memcpy(&offset, d + 2 * sizeof(void *), sizeof(int64_t));
  auto *sizes = reinterpret_cast<const int64_t *>(d + 2 * sizeof(void *) + sizeof(int64_t));
  return {aligned + offset * elemSize, sizes, sizes + m->rank};
}

void memrefCopy(int64_t elemSize, UnrankedMemRef *src, UnrankedMemRef *dst) {
  StridedView from = viewOf(src, elemSize), to = viewOf(dst, elemSize);
  char *s = from.data, *t = to.data;
  const int64_t *sizes = from.sizes, *sStrides = from.strides, *dStrides = to.strides;
  int64_t rank = src->rank;
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] == 0)
      return;
  if (rank == 0) {
    std::memcpy(t, s, elemSize);
    return;
  }
  // The innermost run copied with memcpy when both sides are contiguous there.
  int64_t last = rank - 1;
  bool runs = sStrides[last] == 1 && dStrides[last] == 1;
  int64_t inner = runs ? sizes[last] : 1;
  int64_t outerRank = runs ? last : rank;
  std::vector<int64_t> index(outerRank, 0);
  while (true) {
    int64_t so = 0, doff = 0;
    for (int64_t d = 0; d < outerRank; ++d) {
      so += index[d] * sStrides[d];
      doff += index[d] * dStrides[d];
    }
    std::memcpy(t + doff * elemSize, s + so * elemSize, inner * elemSize);
    int64_t d = outerRank - 1;
    for (; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// Sets the BLAS thread count (no-op for a BLAS without the call).
void rlx_cpu_set_num_threads(int32_t n) {
  requestedThreads.store(n, std::memory_order_relaxed);
  if (blas().setNumThreads)
    blas().setNumThreads(n);
  if (blas().ompSetNumThreads)
    blas().ompSetNumThreads(n);
}

/// 1 when GEMMs read a row-major [K, N] B faster than an [N, K] one (oneDNN
/// is in use): the CPU runner then packs weights with kn-weights.
int32_t rlx_cpu_prefers_kn_weights() { return blas().dnnlSgemm ? 1 : 0; }

/// The BLAS thread count (0 when the BLAS cannot tell).
int32_t rlx_cpu_get_num_threads() {
  return blas().getNumThreads ? blas().getNumThreads() : 0;
}

/// One line naming the BLAS in use: its configuration string (OpenBLAS:
/// version, build options, the core type it picked) and its file; or, with
/// `*ok` = 0, why none could be opened.
const char *rlx_cpu_blas_info(int32_t *ok) {
  static const std::string line = [] {
    const Blas &lib = blas();
    if (!lib.sgemm)
      return std::string(lib.error);
    std::string s = lib.getConfig ? lib.getConfig() : "CBLAS";
    if (lib.getCorename)
      s += std::string(", core ") + lib.getCorename();
    return s + " (" + lib.path + "); GEMM with a [K, N] B: " +
           (lib.dnnlSgemm ? lib.dnnlInfo : std::string("OpenBLAS (oneDNN ") + lib.dnnlInfo + ")");
  }();
  if (ok)
    *ok = blas().sgemm ? 1 : 0;
  return line.c_str();
}
}
