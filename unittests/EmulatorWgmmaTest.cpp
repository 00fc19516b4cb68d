//===- EmulatorWgmmaTest.cpp - wgmma in the emulator ----------------------===//
//
// wgmma.mma_async m64nNk16 (lib/Runtime/Emulator/Wgmma.h) on its own: the
// descriptor addressing without swizzle (interleaved core matrices) and with
// the 128B swizzle that TMA writes, K-major and MN-major (transposed B, as
// flash attention's V), A from registers, the accumulator layout of the PTX
// ISA's figure, written out here independently, and scale-d / negation.
// Values are small integers (as case G4), so every result is exact.
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/Emulator.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

uint16_t bf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return static_cast<uint16_t>(bits >> 16); // exact for small integers
}

float A(uint32_t r, uint32_t k) { return static_cast<float>((r + 2 * k) % 3); }
float B(uint32_t n, uint32_t k) { return static_cast<float>((2 * k + n) % 3); }

constexpr uint32_t kN = 24;

struct WgmmaCase {
  std::vector<uint8_t> image; // the shared-memory image to copy in
  uint64_t descA, descB;      // without the start address (added in-kernel)
  uint32_t offA, offB;        // byte offsets of A and B in the image
  uint32_t flags;
  uint32_t n = kN;
  bool registerA = false; // A from each thread's registers (the PTX ISA's figure)
};

/// The A registers of warpgroup thread t for the register-A form, written
/// from the PTX ISA's figure ("wgmma .m64nNk16 register fragment layout for
/// matrix A"): warp w holds rows 16w..16w+15 as mma.m16n8k16's A fragment;
/// register i of lane l: row 16w + l/4 + 8·(i % 2), k = 2·(l % 4) + 8·(i / 2)
/// and k + 1 (the lower k in the low half).
void registersOfA(uint32_t t, uint32_t regs[4]) {
  uint32_t w = t / 32, l = t % 32;
  for (uint32_t i = 0; i < 4; ++i) {
    uint32_t row = 16 * w + l / 4 + 8 * (i % 2), k = 2 * (l % 4) + 8 * (i / 2);
    regs[i] = uint32_t(bf16(A(row, k))) | uint32_t(bf16(A(row, k + 1))) << 16;
  }
}

// Thread 0 copies the image into shared memory (1024-byte aligned); every
// thread of the warpgroup issues the wgmma with C = 1 + its register index
// and stores its n/2 results.
void wgmmaKernel(void **params) {
  const WgmmaCase *s = *static_cast<const WgmmaCase **>(params[0]);
  float *out = *static_cast<float **>(params[1]);
  uint8_t *smem = *static_cast<uint8_t **>(params[2]);
  uint32_t t = static_cast<uint32_t>(__rlx_emu_id(RLX_EMU_THREAD_ID * 4));
  if (t == 0 && __rlx_emu_access(smem, s->image.size(), RLX_EMU_WRITE))
    std::memcpy(smem, s->image.data(), s->image.size());
  __rlx_emu_fence_proxy_async(); // the generic writes, visible to wgmma
  __rlx_emu_barrier();
  auto addr = [&](uint32_t off) {
    return static_cast<uint64_t>(((reinterpret_cast<uintptr_t>(smem) + off) & 0x3FFFF) >> 4);
  };
  float c[128], d[128];
  const uint32_t n = s->n;
  for (uint32_t i = 0; i < n / 2; ++i)
    c[i] = static_cast<float>(1 + i);
  __rlx_emu_wgmma_fence();
  if (s->registerA) {
    uint32_t regs[4];
    registersOfA(t, regs);
    __rlx_emu_wgmma_rs(1, n, regs, s->descB | addr(s->offB), c, d, s->flags);
  } else {
    __rlx_emu_wgmma(1, n, s->descA | addr(s->offA), s->descB | addr(s->offB), c, d, s->flags);
  }
  __rlx_emu_wgmma_commit();
  __rlx_emu_wgmma_wait(0);
  for (uint32_t i = 0; i < n / 2; ++i)
    out[t * (n / 2) + i] = d[i];
}

std::string run(const WgmmaCase &s, std::vector<float> &out) {
  const WgmmaCase *ps = &s;
  float *po = out.data();
  rlx_emu_register_buffer(ps, sizeof s, "setup");
  rlx_emu_register_buffer(s.image.data(), s.image.size(), "image");
  rlx_emu_register_buffer(po, out.size() * 4, "out");
  rlx_emu_shared shared[1] = {{s.image.size(), 1024}};
  rlx_emu_kernel k{"wgmma", wgmmaKernel, 2, shared, 1};
  void *params[] = {&ps, &po};
  uint32_t grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
  int rc = rlx_emu_launch(&k, grid, block, 0, params);
  rlx_emu_unregister_buffer(ps);
  rlx_emu_unregister_buffer(s.image.data());
  rlx_emu_unregister_buffer(po);
  return rc ? std::string(rlx_emu_last_report()) : "";
}

void put(std::vector<uint8_t> &img, uint32_t off, float v) {
  uint16_t b = bf16(v);
  std::memcpy(&img[off], &b, 2);
}

/// The PTX ISA's accumulator figure for m64nNk16: thread t = 32·w + lane,
/// register 4j + i ↔ row 16w + lane/4 + 8·(i/2), column 8j + 2·(lane%4) + i%2.
void checkD(const std::vector<float> &out, float scaleAB, bool accumulate, uint32_t n = kN) {
  for (uint32_t t = 0; t < 128; ++t)
    for (uint32_t j = 0; j < n / 8; ++j)
      for (uint32_t i = 0; i < 4; ++i) {
        uint32_t w = t / 32, lane = t % 32;
        uint32_t row = 16 * w + lane / 4 + 8 * (i / 2), col = 8 * j + 2 * (lane % 4) + i % 2;
        double sum = 0;
        for (uint32_t k = 0; k < 16; ++k)
          sum += A(row, k) * B(col, k);
        uint32_t reg = 4 * j + i;
        float expect = static_cast<float>(scaleAB * sum + (accumulate ? 1.0 + reg : 0.0));
        ASSERT_EQ(out[t * (n / 2) + reg], expect) << "thread " << t << " reg " << reg;
      }
}

} // namespace

TEST(EmulatorWgmma, InterleavedCoreMatricesWithoutSwizzle) {
  // Core matrices of 8 rows × 16 bytes; LBO 128 (the next 8 k), SBO 256
  // (the next 8 rows).
  WgmmaCase s{};
  s.offA = 0;
  s.offB = 64 * 16 * 2;
  s.image.assign(s.offB + kN * 16 * 2, 0);
  auto at = [](uint32_t r, uint32_t k) { return (r / 8) * 256 + (k / 8) * 128 + (r % 8) * 16 + (k % 8) * 2; };
  for (uint32_t r = 0; r < 64; ++r)
    for (uint32_t k = 0; k < 16; ++k)
      put(s.image, s.offA + at(r, k), A(r, k));
  for (uint32_t n = 0; n < kN; ++n)
    for (uint32_t k = 0; k < 16; ++k)
      put(s.image, s.offB + at(n, k), B(n, k));
  uint64_t lbo = 128 >> 4, sbo = 256 >> 4;
  s.descA = s.descB = lbo << 16 | sbo << 32;
  s.flags = 1; // scale-d: D = A·B + C
  std::vector<float> out(128 * kN / 2, -1);
  ASSERT_EQ(run(s, out), "");
  checkD(out, 1.0f, true);
}

TEST(EmulatorWgmma, Swizzle128BAsTmaWritesIt) {
  // A and B as 64-element (128-byte) K rows in 8-row atoms, swizzled the way
  // a 128B TMA box lands (16-byte chunk c of row r at chunk c ^ (r % 8));
  // the wgmma takes the second K slice (k = 16..31): start + 32 bytes.
  WgmmaCase s{};
  s.offA = 0;
  s.offB = 64 * 128;
  s.image.assign(s.offB + 32 * 128, 0);
  auto at = [](uint32_t r, uint32_t col) {
    uint32_t off = r * 128 + col * 2;
    return off ^ (((off >> 7) & 7) << 4);
  };
  for (uint32_t r = 0; r < 64; ++r)
    for (uint32_t k = 0; k < 16; ++k)
      put(s.image, s.offA + at(r, 16 + k), A(r, k));
  for (uint32_t n = 0; n < kN; ++n)
    for (uint32_t k = 0; k < 16; ++k)
      put(s.image, s.offB + at(n, 16 + k), B(n, k));
  uint64_t sbo = 1024 >> 4, swizzle128 = uint64_t(1) << 62, kSlice = 32 >> 4;
  s.descA = s.descB = (sbo << 32 | swizzle128) + kSlice;
  s.flags = 2 | 4; // both negated: D = A·B; no accumulate
  std::vector<float> out(128 * kN / 2, -1);
  ASSERT_EQ(run(s, out), "");
  checkD(out, 1.0f, false);
  s.flags = 2 | 1; // A negated, accumulate
  ASSERT_EQ(run(s, out), "");
  checkD(out, -1.0f, true);
}

TEST(EmulatorWgmma, Swizzle64BAnd32BAsTmaWritesThem) {
  // The 64B and 32B modes (descriptor bits 62-63 = 2, 3): K rows of 64 / 32
  // bytes; the PTX ISA's swizzle XORs the 16-byte chunk index (address bits
  // 4..) with bits 7.. of the address, masked to 2 / 1 bits: row r's chunk c
  // lands at c ^ ((r / 2) % 4) for 64B and c ^ ((r / 4) % 2) for 32B. The
  // 64B case takes its second K slice (start + 32 bytes).
  struct Mode { uint32_t rowBytes, mode, slice; };
  for (Mode m : {Mode{64, 2, 1}, Mode{32, 3, 0}}) {
    WgmmaCase s{};
    s.offA = 0;
    s.offB = 64 * m.rowBytes;
    s.image.assign(s.offB + 32 * m.rowBytes, 0);
    auto at = [&](uint32_t r, uint32_t col) {
      uint32_t chunk = col / 8, within = (col % 8) * 2;
      uint32_t x = m.rowBytes == 64 ? (r / 2) % 4 : (r / 4) % 2;
      return r * m.rowBytes + (chunk ^ x) * 16 + within;
    };
    for (uint32_t r = 0; r < 64; ++r)
      for (uint32_t k = 0; k < 16; ++k)
        put(s.image, s.offA + at(r, 16 * m.slice + k), A(r, k));
    for (uint32_t n = 0; n < kN; ++n)
      for (uint32_t k = 0; k < 16; ++k)
        put(s.image, s.offB + at(n, 16 * m.slice + k), B(n, k));
    uint64_t sbo = (8 * m.rowBytes) >> 4;
    s.descA = s.descB = (sbo << 32 | uint64_t(m.mode) << 62) + m.slice * (32 >> 4);
    s.flags = 1;
    std::vector<float> out(128 * kN / 2, -1);
    ASSERT_EQ(run(s, out), "") << m.rowBytes;
    checkD(out, 1.0f, true);
  }
}

/// B (n × 16) MN-major under the 128B swizzle, as TMA lands V's rows in
/// flash attention: row k of a 64-column chunk is 128 bytes (64 n values),
/// rows of one 8-row atom are consecutive; the atoms of k = 8..15 start
/// `atoms` bytes after those of k = 0..7 and the next 64 columns `chunks`
/// bytes further. Element (n, k) at
/// (n / 64)·chunks + (k / 8)·atoms + (k % 8)·128 + 2·(n % 64), then the
/// swizzle; the descriptor takes LBO = chunks, SBO = atoms (PTX ISA,
/// MN-major canonical layouts).
void putTransposed(std::vector<uint8_t> &img, uint32_t base, uint32_t rows, uint32_t chunks,
                   uint32_t atoms, float (*value)(uint32_t, uint32_t)) {
  for (uint32_t col = 0; col < rows; ++col)
    for (uint32_t k = 0; k < 16; ++k) {
      uint32_t off = (col / 64) * chunks + (k / 8) * atoms + (k % 8) * 128 + 2 * (col % 64);
      put(img, base + (off ^ (((off >> 7) & 7) << 4)), value(col, k));
    }
}
void putTransposedB(WgmmaCase &s, uint32_t n, uint32_t lbo) {
  putTransposed(s.image, s.offB, n, lbo, 1024, B);
}

TEST(EmulatorWgmma, TransposedBMNMajorSwizzle128B) {
  // A K-major (swizzled, as above), B MN-major with two 64-column chunks
  // (n = 72) 4096 bytes apart: imm-trans-b (flags bit 4).
  WgmmaCase s{};
  s.n = 72;
  s.offA = 0;
  s.offB = 64 * 128;
  const uint32_t lbo = 4096;
  s.image.assign(s.offB + 2 * lbo, 0);
  for (uint32_t r = 0; r < 64; ++r)
    for (uint32_t k = 0; k < 16; ++k) {
      uint32_t off = r * 128 + k * 2;
      put(s.image, s.offA + (off ^ (((off >> 7) & 7) << 4)), A(r, k));
    }
  putTransposedB(s, s.n, lbo);
  uint64_t sbo = 1024 >> 4, swizzle128 = uint64_t(1) << 62;
  s.descA = sbo << 32 | swizzle128;
  s.descB = uint64_t(lbo >> 4) << 16 | sbo << 32 | swizzle128;
  s.flags = 16 | 1;
  std::vector<float> out(128 * s.n / 2, -1);
  ASSERT_EQ(run(s, out), "");
  checkD(out, 1.0f, true, s.n);
}

TEST(EmulatorWgmma, TransposedAAndBWithSpreadAtoms) {
  // Both operands MN-major (imm-trans-a and -b), their 8-k atoms 2048 bytes
  // apart (SBO, not the packed 1024) and column chunks 8192 bytes apart
  // (LBO): an emulator that swapped LBO and SBO, or assumed packed atoms,
  // reads other bytes.
  WgmmaCase s{};
  s.n = 128;
  s.offA = 0;
  s.offB = 4 * 8192;
  s.image.assign(s.offB + 2 * 8192, 0);
  putTransposed(s.image, s.offA, 64, 8192, 2048, A);
  putTransposed(s.image, s.offB, s.n, 8192, 2048, B);
  uint64_t layout = uint64_t(8192 >> 4) << 16 | uint64_t(2048 >> 4) << 32 | uint64_t(1) << 62;
  s.descA = s.descB = layout;
  s.flags = 8 | 16;
  std::vector<float> out(128 * s.n / 2, -1);
  ASSERT_EQ(run(s, out), "");
  checkD(out, 1.0f, false, s.n);
}

TEST(EmulatorWgmma, RegisterAWithTransposedB) {
  // The register-A form flash attention uses for O += P·V: A from each
  // thread's registers, B MN-major; D = A·B, then D = -A·B + C.
  WgmmaCase s{};
  s.registerA = true;
  s.n = 128;
  s.offB = 0;
  const uint32_t lbo = 2048;
  s.image.assign(2 * lbo, 0);
  putTransposedB(s, s.n, lbo);
  s.descB = uint64_t(lbo >> 4) << 16 | uint64_t(1024 >> 4) << 32 | uint64_t(1) << 62;
  s.flags = 16;
  std::vector<float> out(128 * s.n / 2, -1);
  ASSERT_EQ(run(s, out), "");
  checkD(out, 1.0f, false, s.n);
  s.flags = 16 | 2 | 1;
  ASSERT_EQ(run(s, out), "");
  checkD(out, -1.0f, true, s.n);
}

TEST(EmulatorWgmma, RegisterAWithTransposedAIsAFinding) {
  auto kernel = [](void **) {
    float c[4] = {}, d[4];
    uint32_t a[4] = {};
    __rlx_emu_wgmma_rs(1, 8, a, 0, c, d, 8);
  };
  rlx_emu_shared shared[1] = {{16, 16}};
  rlx_emu_kernel k{"rs", kernel, 0, shared, 1};
  uint32_t grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
  EXPECT_NE(rlx_emu_launch(&k, grid, block, 0, nullptr), 0);
  std::string report = rlx_emu_last_report();
  EXPECT_NE(report.find("wgmma.mma_async (A in registers): bad configuration"), std::string::npos)
      << report;
}

TEST(EmulatorWgmma, APartialWarpgroupIsAFinding) {
  auto kernel = [](void **) {
    float c[4] = {}, d[4];
    __rlx_emu_wgmma(1, 8, 0, 0, c, d, 0);
  };
  rlx_emu_kernel k{"partial", kernel, 0, nullptr, 0};
  uint32_t grid[3] = {1, 1, 1}, block[3] = {64, 1, 1};
  EXPECT_NE(rlx_emu_launch(&k, grid, block, 0, nullptr), 0);
  EXPECT_NE(std::string(rlx_emu_last_report()).find("partial warpgroup"), std::string::npos);
}

TEST(EmulatorWgmma, ADescriptorPastTheSharedWindowIsAFinding) {
  auto kernel = [](void **) {
    float c[4] = {}, d[4];
    uint64_t past = (uint64_t(0x3FF0) >> 0) | (uint64_t(1024 >> 4) << 32); // start 0x3FF00, SBO 1 KiB
    __rlx_emu_wgmma(1, 8, past, past, c, d, 0);
  };
  rlx_emu_shared shared[1] = {{16, 16}};
  rlx_emu_kernel k{"past", kernel, 0, shared, 1};
  uint32_t grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
  EXPECT_NE(rlx_emu_launch(&k, grid, block, 0, nullptr), 0);
  std::string report = rlx_emu_last_report();
  EXPECT_NE(report.find("past the 2^18-byte shared window"), std::string::npos) << report;
}
