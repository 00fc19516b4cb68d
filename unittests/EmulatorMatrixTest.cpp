//===- EmulatorMatrixTest.cpp - mma.sync and ldmatrix in the emulator ------===//
//
// The PTX fragment layouts (lib/Runtime/Emulator/Matrix.h) against the PTX
// ISA's tables, worked by hand for single lanes, then a whole warp computing
// case G4 (../shared/cases: M = 64, K = 128, A[i,k] = (i + 2k) mod 3,
// B[k,n] = (2k + n) mod 3, every product exact) with ldmatrix from shared
// memory and mma.sync, bit-exact in f16 and in bf16.
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/Emulator.h"
#include "../lib/Runtime/Emulator/Matrix.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace rlx::emu;

namespace {

uint16_t toBf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return static_cast<uint16_t>(bits >> 16); // exact for the small integers used here
}

uint16_t toHalf(float v) {
  // Small non-negative integers (< 2048): exact.
  if (v == 0)
    return 0;
  int e = 0;
  float m = std::frexp(v, &e); // v = m · 2^e, m in [0.5, 1)
  uint32_t man = static_cast<uint32_t>((m * 2 - 1) * 1024);
  return static_cast<uint16_t>(((e - 1 + 15) << 10) | man);
}

uint32_t pack(uint16_t lo, uint16_t hi) { return lo | static_cast<uint32_t>(hi) << 16; }

} // namespace

TEST(EmulatorMatrix, HalfAndBf16Decoding) {
  EXPECT_EQ(halfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(halfToFloat(0xC000), -2.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(halfToFloat(0x7C00)));
  EXPECT_EQ(bf16ToFloat(0x3F80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0xC040), -3.0f);
  for (float v : {0.0f, 1.0f, 2.0f, 3.0f, 214.0f, 1000.0f})
    EXPECT_EQ(halfToFloat(toHalf(v)), v);
}

// The PTX ISA's tables, single lanes worked by hand: lane 0 (groupID 0, tig 0)
// and lane 13 (groupID 3, tig 1).
TEST(EmulatorMatrix, MmaFragmentLayoutByHand) {
  // A = one-hot at (3, 10): held by lane 13 (groupID 3, tig 1) in a2's low
  // half (row groupID, col 2·tig + 8 = 10). B = one-hot at (k 10, n 3): held
  // by lane 13 (tig 1 → k 2·1 + 8 = 10 is b1's low half, n = groupID 3).
  uint32_t a[32][4] = {}, b[32][2] = {};
  float c[32][4] = {}, d[32][4];
  a[13][2] = pack(0x3C00, 0);      // A[3][10] = 1
  b[13][1] = pack(0x4000, 0);      // B[10][3] = 2
  c[0][3] = 5;                     // lane 0's c3: C[8][1]
  mmaM16N8K16(MmaType::F16, a, b, c, d);
  // D[3][3] = 2: row 3 = groupID of lanes 12..15, col 3 = 2·tig + 1 → tig 1,
  // element c1: lane 13, d[1].
  for (uint32_t lane = 0; lane < 32; ++lane)
    for (uint32_t i = 0; i < 4; ++i) {
      float want = (lane == 13 && i == 1) ? 2.0f : (lane == 0 && i == 3) ? 5.0f : 0.0f;
      EXPECT_EQ(d[lane][i], want) << "lane " << lane << " d" << i;
    }
}

TEST(EmulatorMatrix, LdmatrixByHand) {
  // Matrix m row r holds values 100·m + 10·r + c (c = 0..7) as b16 integers.
  uint8_t rows[32][16];
  for (uint32_t l = 0; l < 32; ++l)
    for (uint32_t c = 0; c < 8; ++c) {
      uint16_t v = static_cast<uint16_t>(100 * (l / 8) + 10 * (l % 8) + c);
      std::memcpy(&rows[l][2 * c], &v, 2);
    }
  uint32_t out[32][4];
  ldmatrixM8N8(4, false, rows, out);
  // Lane 9: row 9/4 = 2, cols 2·(9%4) = 2, 3 of each matrix.
  for (uint32_t m = 0; m < 4; ++m)
    EXPECT_EQ(out[9][m], pack(100 * m + 22, 100 * m + 23));
  ldmatrixM8N8(2, true, rows, out);
  // .trans: lane 9 holds (row 2, cols 2,3) of the transpose = M[2][2], M[3][2].
  EXPECT_EQ(out[9][0], pack(22, 32));
  EXPECT_EQ(out[9][1], pack(122, 132));
}

namespace {

struct G4 {
  int n;
  bool bf16;
};

// One warp: C[64×N] = A[64×128] · B[128×N], 16×8×16 steps through shared
// memory with ldmatrix (A: .x4, B: .x2.trans) and mma.sync, as the lowering
// of a tensor-core kernel will do.
void g4Kernel(void **params) {
  const uint16_t *A = *static_cast<const uint16_t **>(params[0]);
  const uint16_t *B = *static_cast<const uint16_t **>(params[1]);
  float *C = *static_cast<float **>(params[2]);
  const int N = *static_cast<int *>(params[3]);
  const uint32_t type = *static_cast<uint32_t *>(params[4]);
  uint16_t *As = *static_cast<uint16_t **>(params[5]); // 16 × 16
  uint16_t *Bs = *static_cast<uint16_t **>(params[6]); // 16 × 8
  const uint32_t lane = static_cast<uint32_t>(__rlx_emu_id(RLX_EMU_THREAD_ID * 4));
  for (int m0 = 0; m0 < 64; m0 += 16)
    for (int n0 = 0; n0 < N; n0 += 8) {
      float acc[4] = {0, 0, 0, 0};
      for (int k0 = 0; k0 < 128; k0 += 16) {
        for (uint32_t e = lane; e < 256; e += 32) {
          __rlx_emu_access(&As[e], 2, RLX_EMU_WRITE);
          As[e] = A[(m0 + e / 16) * 128 + k0 + e % 16];
        }
        for (uint32_t e = lane; e < 128; e += 32) {
          __rlx_emu_access(&Bs[e], 2, RLX_EMU_WRITE);
          Bs[e] = B[(k0 + e / 8) * N + n0 + e % 8];
        }
        __rlx_emu_barrier();
        uint32_t a[4], b[2];
        uint32_t m = lane / 8, r = lane % 8;
        __rlx_emu_ldmatrix(4, 0, &As[(r + 8 * (m & 1)) * 16 + 8 * (m >> 1)], a);
        __rlx_emu_ldmatrix(2, 1, &Bs[(lane % 16) * 8], b);
        float d[4];
        __rlx_emu_mma_m16n8k16(type, a, b, acc, d);
        std::memcpy(acc, d, sizeof d);
        __rlx_emu_barrier();
      }
      uint32_t g = lane / 4, t = lane % 4;
      for (uint32_t i = 0; i < 4; ++i)
        C[(m0 + g + 8 * (i >> 1)) * N + n0 + 2 * t + (i & 1)] = acc[i];
    }
}

} // namespace

class EmulatorMatrixG4 : public ::testing::TestWithParam<G4> {};

TEST_P(EmulatorMatrixG4, BitExactWithLdmatrixAndMma) {
  const G4 p = GetParam();
  std::vector<uint16_t> A(64 * 128), B(128 * p.n);
  for (int i = 0; i < 64; ++i)
    for (int k = 0; k < 128; ++k) {
      float v = static_cast<float>((i + 2 * k) % 3);
      A[i * 128 + k] = p.bf16 ? toBf16(v) : toHalf(v);
    }
  for (int k = 0; k < 128; ++k)
    for (int n = 0; n < p.n; ++n) {
      float v = static_cast<float>((2 * k + n) % 3);
      B[k * p.n + n] = p.bf16 ? toBf16(v) : toHalf(v);
    }
  std::vector<float> C(64 * p.n, -1.0f);
  const uint16_t *pa = A.data(), *pb = B.data();
  float *pc = C.data();
  int n = p.n;
  uint32_t type = p.bf16 ? 1 : 0;
  rlx_emu_shared shared[2] = {{16 * 16 * 2, 16}, {16 * 8 * 2, 16}};
  rlx_emu_kernel k{"g4", g4Kernel, 5, shared, 2};
  void *params[] = {&pa, &pb, &pc, &n, &type};
  uint32_t grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
  ASSERT_EQ(rlx_emu_launch(&k, grid, block, 0, params), 0) << rlx_emu_last_report();
  // The case's independent figures.
  const std::map<int, std::pair<double, float>> expected = {
      {8, {65515, 84}}, {24, {196608, 86}}, {40, {327766, 214}}, {56, {458731, 84}}};
  double sum = 0;
  float mx = 0;
  for (float v : C) {
    sum += v;
    mx = std::max(mx, v);
  }
  EXPECT_EQ(sum, expected.at(p.n).first);
  EXPECT_EQ(C[63 * p.n + p.n - 1], expected.at(p.n).second);
  EXPECT_EQ(mx, 215.0f);
  EXPECT_EQ(C[0], 214.0f);
  EXPECT_EQ(C[1], 84.0f);
  EXPECT_EQ(C[2], 86.0f);
  EXPECT_EQ(C[3], 214.0f);
  // Every element equals the integer reference.
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < p.n; ++j) {
      int ref = 0;
      for (int kk = 0; kk < 128; ++kk)
        ref += ((i + 2 * kk) % 3) * ((2 * kk + j) % 3);
      ASSERT_EQ(C[i * p.n + j], static_cast<float>(ref)) << i << "," << j;
    }
}

INSTANTIATE_TEST_SUITE_P(, EmulatorMatrixG4,
                         ::testing::Values(G4{8, false}, G4{8, true}, G4{24, false},
                                           G4{40, true}, G4{56, false}, G4{56, true}));

TEST(EmulatorMatrix, MmaInAPartialWarpIsReported) {
  auto kernel = [](void **) {
    uint32_t a[4] = {}, b[2] = {};
    float c[4] = {}, d[4];
    __rlx_emu_mma_m16n8k16(0, a, b, c, d);
  };
  rlx_emu_kernel k{"partial", kernel, 0, nullptr, 0};
  uint32_t grid[3] = {1, 1, 1}, block[3] = {16, 1, 1};
  EXPECT_NE(rlx_emu_launch(&k, grid, block, 0, nullptr), 0);
  EXPECT_NE(std::string(rlx_emu_last_report()).find("mma.sync in a partial warp"),
            std::string::npos);
}

namespace {
// Thread t copies 16 bytes (4 floats) of `in` into shared memory with
// cp.async, in two groups (floats 0-1, then 2-3), then reads them back before
// any wait, after wait_group 1 and after wait_group 0.
void asyncKernel(void **params) {
  const float *in = *static_cast<const float **>(params[0]);
  float *out = *static_cast<float **>(params[1]);
  float *s = *static_cast<float **>(params[2]);
  uint32_t t = static_cast<uint32_t>(__rlx_emu_id(RLX_EMU_THREAD_ID * 4));
  __rlx_emu_cp_async(&s[4 * t], &in[4 * t], 8, 8);
  __rlx_emu_cp_async_commit();
  __rlx_emu_cp_async(&s[4 * t + 2], &in[4 * t + 2], 8, 4); // second float zero-filled
  __rlx_emu_cp_async_commit();
  out[12 * t + 0] = s[4 * t];      // before any wait: the NaN fill
  __rlx_emu_cp_async_wait(1);      // the first group only
  out[12 * t + 1] = s[4 * t];
  out[12 * t + 2] = s[4 * t + 1];
  out[12 * t + 3] = s[4 * t + 2];  // still pending: NaN
  __rlx_emu_cp_async_wait(0);
  out[12 * t + 4] = s[4 * t + 2];
  out[12 * t + 5] = s[4 * t + 3];  // past src_size: 0
}
} // namespace

TEST(EmulatorAsyncCopy, CopiesCompleteOnlyAtTheirWait) {
  std::vector<float> in(128), out(12 * 32, -1.0f);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<float>(i + 1);
  const float *pin = in.data();
  float *pout = out.data();
  ASSERT_EQ(rlx_emu_register_buffer(pin, in.size() * 4, "in"), 0);
  ASSERT_EQ(rlx_emu_register_buffer(pout, out.size() * 4, "out"), 0);
  rlx_emu_shared shared[1] = {{128 * 4, 16}};
  rlx_emu_kernel k{"async", asyncKernel, 2, shared, 1};
  void *params[] = {&pin, &pout};
  uint32_t grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
  EXPECT_EQ(rlx_emu_launch(&k, grid, block, 0, params), 0) << rlx_emu_last_report();
  for (uint32_t t = 0; t < 32; ++t) {
    const float *o = &out[12 * t];
    EXPECT_TRUE(std::isnan(o[0])) << t;
    EXPECT_EQ(o[1], in[4 * t]);
    EXPECT_EQ(o[2], in[4 * t + 1]);
    EXPECT_TRUE(std::isnan(o[3])) << t;
    EXPECT_EQ(o[4], in[4 * t + 2]);
    EXPECT_EQ(o[5], 0.0f);
  }
  rlx_emu_unregister_buffer(pin);
  rlx_emu_unregister_buffer(pout);
}

TEST(EmulatorAsyncCopy, AMissingWaitIsReported) {
  auto kernel = [](void **params) {
    float *s = *static_cast<float **>(params[0]);
    static float src[4] = {1, 2, 3, 4};
    (void)src;
    __rlx_emu_cp_async(s, s + 4, 16, 0); // zero-fill, no source read
    __rlx_emu_cp_async_commit();
  };
  rlx_emu_shared shared[1] = {{64, 16}};
  rlx_emu_kernel k{"nowait", kernel, 0, shared, 1};
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  EXPECT_NE(rlx_emu_launch(&k, grid, block, 0, nullptr), 0);
  EXPECT_NE(std::string(rlx_emu_last_report()).find("never waited"), std::string::npos);
}
