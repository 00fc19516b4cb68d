//===- QGemm.cpp - 8-bit integer GEMM with exact 32-bit accumulation ------===//
//
// rlx_mir.qmatmul on the CPU path (rlx-cpu-matmul-to-blas calls it):
// C[m, n] = Σ_k (A[m, k] − za) · (B[k, n] − zb) in i32, the operands' bytes
// read as signed or unsigned. Both are centered once into i16 (|v| ≤ 255),
// so a product is ≤ 65025 and a pair of them (pmaddwd on x86, the
// compiler's pick elsewhere) fits i32: every term is exact and so is the
// sum for K < 33025 (the op's verifier bound).
//
// The kernel is a 4×2 register block of dot products over contiguous K,
// written as plain loops the compiler vectorizes; on x86 it is built twice
// (AVX2 and baseline) and picked at load time (target_clones), so one binary
// runs on every CPU. Columns are split over the BLAS's thread count.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

extern "C" int32_t rlx_cpu_get_num_threads();

namespace {

template <typename T, int Rank> struct Desc {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

#if defined(__x86_64__) && defined(__clang__) && defined(__linux__)
#define RLX_QGEMM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define RLX_QGEMM_CLONES
#endif

/// One block of R rows of a × C rows of b (both [., k] contiguous i16).
template <int R, int C>
inline void block(const int16_t *a, const int16_t *b, int64_t k, int32_t *c, int64_t ldc) {
  int32_t acc[R][C] = {};
  for (int64_t p = 0; p < k; ++p)
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < C; ++j)
        acc[r][j] += int32_t(a[r * k + p]) * int32_t(b[j * k + p]);
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j)
      c[r * ldc + j] = acc[r][j];
}

/// C[0:m, n0:n1] from the centered a [m, k] and bt [n, k].
RLX_QGEMM_CLONES
void kernel(const int16_t *a, const int16_t *bt, int32_t *c, int64_t ldc, int64_t m, int64_t n0,
            int64_t n1, int64_t k) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    int64_t j = n0;
    for (; j + 2 <= n1; j += 2)
      block<4, 2>(a + i * k, bt + j * k, k, c + i * ldc + j, ldc);
    for (; j < n1; ++j)
      block<4, 1>(a + i * k, bt + j * k, k, c + i * ldc + j, ldc);
  }
  for (; i < m; ++i) {
    int64_t j = n0;
    for (; j + 4 <= n1; j += 4)
      block<1, 4>(a + i * k, bt + j * k, k, c + i * ldc + j, ldc);
    for (; j < n1; ++j)
      block<1, 1>(a + i * k, bt + j * k, k, c + i * ldc + j, ldc);
  }
}

inline int16_t centered(int8_t v, bool isUnsigned, int32_t zp) {
  return static_cast<int16_t>((isUnsigned ? int32_t(uint8_t(v)) : int32_t(v)) - zp);
}

} // namespace

extern "C" {

/// a [M, K], b [K, N] (or [N, K] with transB), c [M, N] i32 (overwritten).
void _mlir_ciface_rlx_cpu_qgemm_s8(Desc<int8_t, 2> *a, Desc<int8_t, 2> *b, Desc<int32_t, 2> *c,
                                   int32_t transB, int32_t za, int32_t zb, int32_t aUnsigned,
                                   int32_t bUnsigned) {
  int64_t m = a->sizes[0], k = a->sizes[1], n = c->sizes[1];
  if (m == 0 || n == 0)
    return;
  const int8_t *ap = a->aligned + a->offset, *bp = b->aligned + b->offset;
  int32_t *cp = c->aligned + c->offset;
  std::vector<int16_t> ac(static_cast<size_t>(m * k)), bt(static_cast<size_t>(n * k));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      ac[i * k + p] = centered(ap[i * a->strides[0] + p * a->strides[1]], aUnsigned, za);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = 0; p < k; ++p) {
      int8_t v = transB ? bp[j * b->strides[0] + p * b->strides[1]]
                        : bp[p * b->strides[0] + j * b->strides[1]];
      bt[j * k + p] = centered(v, bUnsigned, zb);
    }
  int64_t ldc = c->strides[0];
  if (c->strides[1] != 1) { // a strided C: through a contiguous one
    std::vector<int32_t> tmp(static_cast<size_t>(m * n));
    kernel(ac.data(), bt.data(), tmp.data(), n, m, 0, n, k);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        cp[i * ldc + j * c->strides[1]] = tmp[i * n + j];
    return;
  }
  // Threads over column ranges, for products worth a thread each.
  int64_t threads = rlx_cpu_get_num_threads();
  if (threads <= 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<int64_t>({threads, n, std::max<int64_t>(1, m * n * k / (1 << 20))});
  if (threads <= 1) {
    kernel(ac.data(), bt.data(), cp, ldc, m, 0, n, k);
    return;
  }
  std::vector<std::thread> pool;
  int64_t per = (n + threads - 1) / threads;
  for (int64_t t = 1; t < threads; ++t) {
    int64_t n0 = t * per, n1 = std::min(n, n0 + per);
    if (n0 < n1)
      pool.emplace_back(kernel, ac.data(), bt.data(), cp, ldc, m, n0, n1, k);
  }
  kernel(ac.data(), bt.data(), cp, ldc, m, 0, std::min(n, per), k);
  for (std::thread &t : pool)
    t.join();
}

} // extern "C"
