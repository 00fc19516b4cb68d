//===- QGemm.cpp - 8-bit integer GEMM with exact 32-bit accumulation ------===//
//
// rlx_mir.qmatmul on the CPU path (rlx-cpu-matmul-to-blas calls it):
// C[m, n] = Σ_k (A[m, k] − za) · (B[k, n] − zb) in i32, the operands' bytes
// read as signed or unsigned. Centered values are 16-bit (|v| ≤ 255): A is
// centered once per call, B (the weight, read in place when it is [N, K])
// as it is loaded, so a product is ≤ 65025 and a pair of them (pmaddwd on
// x86, the compiler's pick elsewhere) fits i32: every term is exact and so
// is the sum for K < 33025 (the op's verifier bound).
//
// The kernel is a 4×2 register block of dot products over contiguous K: on
// x86 with AVX2 (checked at run time, so one binary runs on every CPU) in
// intrinsics, vpmaddwd on 16 values of K per step; elsewhere the same
// blocks as plain loops. Columns are split over the BLAS's thread count.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

extern "C" int32_t rlx_cpu_get_num_threads();

namespace {

template <typename T, int Rank> struct Desc {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define RLX_QGEMM_X86 1
#endif

/// B's element as its centered value: its byte read signed or unsigned,
/// minus the zero point, in 16 bits (|v| ≤ 255), so that products of two
/// such values pair up in pmaddwd.
template <bool Unsigned> inline int16_t centeredB(int8_t v, int16_t zb) {
  return static_cast<int16_t>((Unsigned ? int16_t(uint8_t(v)) : int16_t(v)) - zb);
}

/// One block of R rows of a (centered i16, [., k]) × C rows of bt (bytes,
/// [., ldb] with k contiguous), added to c.
template <int R, int C, bool Unsigned>
inline void block(const int16_t *a, int64_t k, const int8_t *bt, int64_t ldb, int16_t zb,
                  int32_t *c, int64_t ldc) {
  int32_t acc[R][C] = {};
  for (int64_t p = 0; p < k; ++p)
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < C; ++j)
        acc[r][j] += int32_t(a[r * k + p]) * int32_t(centeredB<Unsigned>(bt[j * ldb + p], zb));
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j)
      c[r * ldc + j] += acc[r][j];
}

/// The portable block, as a class template the blocking takes.
template <int R, int C, bool Unsigned> struct PlainBlock {
  static void run(const int16_t *a, int64_t k, const int8_t *bt, int64_t ldb, int16_t zb,
                  int32_t *c, int64_t ldc) {
    block<R, C, Unsigned>(a, k, bt, ldb, zb, c, ldc);
  }
};

/// C[0:m, n0:n1] += the centered a [m, k] times the bytes of bt [n, ldb]
/// (read along k), in Block<4, 2> tiles (Block<1, 4> on the last rows).
template <template <int, int, bool> class Block, bool Unsigned>
__attribute__((always_inline)) inline void blocked(const int16_t *a, const int8_t *bt,
                                                   int64_t ldb, int16_t zb, int32_t *c,
                                                   int64_t ldc, int64_t m, int64_t n0,
                                                   int64_t n1, int64_t k) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    int64_t j = n0;
    for (; j + 2 <= n1; j += 2)
      Block<4, 2, Unsigned>::run(a + i * k, k, bt + j * ldb, ldb, zb, c + i * ldc + j, ldc);
    for (; j < n1; ++j)
      Block<4, 1, Unsigned>::run(a + i * k, k, bt + j * ldb, ldb, zb, c + i * ldc + j, ldc);
  }
  for (; i < m; ++i) {
    int64_t j = n0;
    for (; j + 4 <= n1; j += 4)
      Block<1, 4, Unsigned>::run(a + i * k, k, bt + j * ldb, ldb, zb, c + i * ldc + j, ldc);
    for (; j < n1; ++j)
      Block<1, 1, Unsigned>::run(a + i * k, k, bt + j * ldb, ldb, zb, c + i * ldc + j, ldc);
  }
}

#ifdef RLX_QGEMM_X86
/// The sum of an AVX2 register's eight i32 lanes.
__attribute__((target("avx2"))) inline int32_t lanes(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

/// The AVX2 form of block: 16 values of K per step, B's bytes widened and
/// centered to i16, pairs of products summed by vpmaddwd; the K tail scalar.
template <int R, int C, bool Unsigned>
__attribute__((target("avx2"))) inline void blockAvx2(const int16_t *a, int64_t k,
                                                      const int8_t *bt, int64_t ldb, int16_t zb,
                                                      int32_t *c, int64_t ldc) {
  __m256i acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j)
      acc[r][j] = _mm256_setzero_si256();
  __m256i z = _mm256_set1_epi16(zb);
  int64_t p = 0;
  for (; p + 16 <= k; p += 16) {
    __m256i b[C];
    for (int j = 0; j < C; ++j) {
      __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i *>(bt + j * ldb + p));
      b[j] = _mm256_sub_epi16(Unsigned ? _mm256_cvtepu8_epi16(bytes) : _mm256_cvtepi8_epi16(bytes),
                              z);
    }
    for (int r = 0; r < R; ++r) {
      __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a + r * k + p));
      for (int j = 0; j < C; ++j)
        acc[r][j] = _mm256_add_epi32(acc[r][j], _mm256_madd_epi16(av, b[j]));
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j) {
      int32_t sum = lanes(acc[r][j]);
      for (int64_t q = p; q < k; ++q)
        sum += int32_t(a[r * k + q]) * int32_t(centeredB<Unsigned>(bt[j * ldb + q], zb));
      c[r * ldc + j] += sum;
    }
}

template <int R, int C, bool Unsigned> struct Avx2Block {
  __attribute__((target("avx2"))) static void run(const int16_t *a, int64_t k, const int8_t *bt,
                                                  int64_t ldb, int16_t zb, int32_t *c,
                                                  int64_t ldc) {
    blockAvx2<R, C, Unsigned>(a, k, bt, ldb, zb, c, ldc);
  }
};

template <bool Unsigned>
__attribute__((target("avx2"))) void kernelAvx2(const int16_t *a, const int8_t *bt, int64_t ldb,
                                                int16_t zb, int32_t *c, int64_t ldc, int64_t m,
                                                int64_t n0, int64_t n1, int64_t k) {
  blocked<Avx2Block, Unsigned>(a, bt, ldb, zb, c, ldc, m, n0, n1, k);
}
#endif

/// The CPU's best form (AVX2 where it has it, checked once).
void kernel(const int16_t *a, const int8_t *bt, int64_t ldb, int16_t zb, bool bUnsigned,
            int32_t *c, int64_t ldc, int64_t m, int64_t n0, int64_t n1, int64_t k) {
#ifdef RLX_QGEMM_X86
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2)
    return bUnsigned ? kernelAvx2<true>(a, bt, ldb, zb, c, ldc, m, n0, n1, k)
                     : kernelAvx2<false>(a, bt, ldb, zb, c, ldc, m, n0, n1, k);
#endif
  if (bUnsigned)
    blocked<PlainBlock, true>(a, bt, ldb, zb, c, ldc, m, n0, n1, k);
  else
    blocked<PlainBlock, false>(a, bt, ldb, zb, c, ldc, m, n0, n1, k);
}

inline int16_t centered(int8_t v, bool isUnsigned, int32_t zp) {
  return static_cast<int16_t>((isUnsigned ? int32_t(uint8_t(v)) : int32_t(v)) - zp);
}

} // namespace

extern "C" {

/// a [M, K], b [K, N] (or [N, K] with transB), c [M, N] i32: C += A·B, or
/// C = A·B with `overwrite` (C's old values never read).
void _mlir_ciface_rlx_cpu_qgemm_s8(Desc<int8_t, 2> *a, Desc<int8_t, 2> *b, Desc<int32_t, 2> *c,
                                   int32_t transB, int32_t za, int32_t zb, int32_t aUnsigned,
                                   int32_t bUnsigned, int32_t overwrite) {
  int64_t m = a->sizes[0], k = a->sizes[1], n = c->sizes[1];
  if (m == 0 || n == 0)
    return;
  const int8_t *ap = a->aligned + a->offset, *bp = b->aligned + b->offset;
  int32_t *cp = c->aligned + c->offset;
  std::vector<int16_t> ac(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      ac[i * k + p] = centered(ap[i * a->strides[0] + p * a->strides[1]], aUnsigned, za);
  // B is read in place when it is [N, K] with K contiguous (nn.Linear's
  // weight); otherwise its bytes are transposed into that form.
  int64_t ldb = b->strides[0];
  std::vector<int8_t> packed;
  if (!transB || b->strides[1] != 1) {
    packed.resize(static_cast<size_t>(n * k));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        packed[j * k + p] = transB ? bp[j * b->strides[0] + p * b->strides[1]]
                                   : bp[p * b->strides[0] + j * b->strides[1]];
    bp = packed.data();
    ldb = k;
  }
  int64_t ldc = c->strides[0];
  if (c->strides[1] != 1) { // a strided C: through a contiguous one
    std::vector<int32_t> tmp(static_cast<size_t>(m * n), 0);
    kernel(ac.data(), bp, ldb, int16_t(zb), bUnsigned, tmp.data(), n, m, 0, n, k);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int32_t &out = cp[i * ldc + j * c->strides[1]];
        out = overwrite ? tmp[i * n + j] : out + tmp[i * n + j];
      }
    return;
  }
  if (overwrite)
    for (int64_t i = 0; i < m; ++i)
      std::fill_n(cp + i * ldc, n, 0);
  // Threads over column ranges, for products worth a thread each.
  int64_t threads = rlx_cpu_get_num_threads();
  if (threads <= 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<int64_t>({threads, n, std::max<int64_t>(1, m * n * k / (1 << 20))});
  auto columns = [&](int64_t n0, int64_t n1) {
    kernel(ac.data(), bp, ldb, int16_t(zb), bUnsigned, cp, ldc, m, n0, n1, k);
  };
  if (threads <= 1)
    return columns(0, n);
  std::vector<std::thread> pool;
  int64_t per = (n + threads - 1) / threads;
  for (int64_t t = 1; t < threads; ++t) {
    int64_t n0 = t * per, n1 = std::min(n, n0 + per);
    if (n0 < n1)
      pool.emplace_back(columns, n0, n1);
  }
  columns(0, std::min(n, per));
  for (std::thread &t : pool)
    t.join();
}

} // extern "C"
