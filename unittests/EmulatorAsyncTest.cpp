//===- EmulatorAsyncTest.cpp - The emulator's asynchrony and ordering rules ===//
//
// One test per rule of lib/Runtime/Emulator/Async.cpp and its neighbours,
// each from the PTX ISA's text:
// - "wgmma.mma_async": the operands may be read until the wait_group that
//   retires the group; the accumulators are undefined until then; a
//   wgmma.fence must order the warpgroup's register accesses before a wgmma;
// - "Memory Consistency Model: proxies": generic writes reach the async
//   proxy (wgmma operands) only after the writer's fence.proxy.async;
// - "mbarrier.init" / fence.mbarrier_init before TMA completes on it;
// - "barrier{.cta}": bar.sync 0 is the block barrier (one state);
// - "Data alignment" and cp.async's operand alignment.
// Each rule has its violation (a finding naming it) and its legal
// counterpart (no finding).
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/Emulator.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace {

enum Scenario : uint32_t {
  kLegal,
  kWriteOperandInFlight,
  kReadAccumulatorInFlight,
  kNoFence,
  kNoProxyFence,
  kUncommittedAtExit,
};

uint32_t tid() { return static_cast<uint32_t>(__rlx_emu_id(RLX_EMU_THREAD_ID * 4)); }

// 128 threads, one warpgroup, 4 KiB of zeroed shared memory: A (64 x 16) at
// 0 and B (8 x 16) at 2048 without swizzle; one m64n8k16 wgmma of op id 3.
void wgmmaKernel(void **params) {
  const uint32_t scenario = **static_cast<uint32_t **>(params[0]);
  uint8_t *smem = *static_cast<uint8_t **>(params[1]);
  const uint32_t t = tid();
  for (uint32_t i = t * 32; i < t * 32 + 32; i += 16)
    if (__rlx_emu_access(smem + i, 16, RLX_EMU_WRITE))
      std::memset(smem + i, 0, 16);
  if (scenario != kNoProxyFence)
    __rlx_emu_fence_proxy_async();
  __rlx_emu_barrier();
  auto desc = [&](uint32_t off) {
    uint64_t start = ((reinterpret_cast<uintptr_t>(smem) + off) & 0x3FFFF) >> 4;
    return start | uint64_t(128 >> 4) << 16 | uint64_t(256 >> 4) << 32;
  };
  float c[4] = {}, d[4];
  if (scenario != kNoFence)
    __rlx_emu_wgmma_fence();
  __rlx_emu_wgmma_op(3);
  __rlx_emu_wgmma(1, 8, desc(0), desc(2048), c, d, 0);
  if (scenario == kUncommittedAtExit)
    return;
  __rlx_emu_wgmma_commit();
  // Between two barriers, before any thread's wait_group retired the wgmma
  // (the barriers order the write after the emulator's read of B: no plain
  // race, only the in-flight operand).
  if (scenario == kWriteOperandInFlight) {
    __rlx_emu_barrier();
    if (t == 5 && __rlx_emu_access(smem + 2048, 2, RLX_EMU_WRITE))
      smem[2048] = 1;
    __rlx_emu_barrier();
  }
  if (scenario == kReadAccumulatorInFlight)
    __rlx_emu_wgmma_read(3);
  __rlx_emu_wgmma_wait(0);
  __rlx_emu_wgmma_read(3);
  // After the retiring wait, the operands may be overwritten.
  __rlx_emu_barrier();
  if (t == 5 && __rlx_emu_access(smem + 2048, 2, RLX_EMU_WRITE))
    smem[2048] = 1;
}

std::string runWgmma(uint32_t scenario) {
  uint32_t s = scenario;
  uint32_t *ps = &s;
  rlx_emu_register_buffer(ps, sizeof s, "scenario");
  rlx_emu_shared shared[1] = {{4096, 1024}};
  rlx_emu_kernel k{"async", wgmmaKernel, 1, shared, 1};
  void *params[] = {&ps};
  uint32_t grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
  int rc = rlx_emu_launch(&k, grid, block, 0, params);
  rlx_emu_unregister_buffer(ps);
  return rc ? std::string(rlx_emu_last_report()) : "";
}

} // namespace

TEST(EmulatorAsync, ALegalWgmmaSequenceHasNoFinding) {
  EXPECT_EQ(runWgmma(kLegal), "");
}

TEST(EmulatorAsync, WritingAnOperandOfAnInFlightWgmmaIsAFinding) {
  std::string r = runWgmma(kWriteOperandInFlight);
  EXPECT_NE(r.find("an operand of wgmma.mma_async #3 that warpgroup 0 has in flight"),
            std::string::npos)
      << r;
}

TEST(EmulatorAsync, ReadingAccumulatorsBeforeTheWaitIsAFinding) {
  std::string r = runWgmma(kReadAccumulatorInFlight);
  EXPECT_NE(r.find("reads the accumulators of wgmma.mma_async #3 while it is in flight"),
            std::string::npos)
      << r;
}

TEST(EmulatorAsync, AWgmmaWithoutAFenceIsAFinding) {
  std::string r = runWgmma(kNoFence);
  EXPECT_NE(r.find("issued with no wgmma.fence"), std::string::npos) << r;
}

TEST(EmulatorAsync, AGenericWriteReadByWgmmaNeedsAProxyFence) {
  std::string r = runWgmma(kNoProxyFence);
  EXPECT_NE(r.find("through the generic proxy with no fence.proxy.async"), std::string::npos)
      << r;
}

TEST(EmulatorAsync, ExitingWithAnUncommittedWgmmaIsAFinding) {
  std::string r = runWgmma(kUncommittedAtExit);
  EXPECT_NE(r.find("never committed"), std::string::npos) << r;
}

TEST(EmulatorAsync, BlockBarrierAndNamedBarrierZeroAreOneBarrier) {
  // Warp 0 syncs with bar.sync 0 (all threads), warp 1 with the block
  // barrier: on the GPU both are barrier 0, so they meet.
  auto kernel = [](void **params) {
    uint32_t *out = *static_cast<uint32_t **>(params[0]);
    uint32_t *s = *static_cast<uint32_t **>(params[1]);
    const uint32_t t = tid();
    if (t == 0 && __rlx_emu_access(s, 4, RLX_EMU_WRITE))
      *s = 42;
    if (t < 32)
      __rlx_emu_named_barrier(0, 0, 1);
    else
      __rlx_emu_barrier();
    if (t == 40 && __rlx_emu_access(s, 4, RLX_EMU_READ) && __rlx_emu_access(out, 4, RLX_EMU_WRITE))
      *out = *s;
  };
  uint32_t out = 0;
  uint32_t *po = &out;
  rlx_emu_register_buffer(po, 4, "out");
  rlx_emu_shared shared[1] = {{16, 16}};
  rlx_emu_kernel k{"bar0", kernel, 1, shared, 1};
  void *params[] = {&po};
  uint32_t grid[3] = {1, 1, 1}, block[3] = {64, 1, 1};
  EXPECT_EQ(rlx_emu_launch(&k, grid, block, 0, params), 0) << rlx_emu_last_report();
  EXPECT_EQ(out, 42u);
  rlx_emu_unregister_buffer(po);
}

TEST(EmulatorAsync, AMisalignedAccessIsAFinding) {
  // A 16-byte vector load needs a 16-byte aligned address (log2 16 + 1 = 5
  // in the alignment bits); 8 bytes off is the GPU's misaligned address.
  auto kernel = [](void **params) {
    uint8_t *s = *static_cast<uint8_t **>(params[0]);
    __rlx_emu_access(s, 16, RLX_EMU_READ | (5u << RLX_EMU_ALIGN_SHIFT));
    __rlx_emu_access(s + 8, 16, RLX_EMU_READ | (5u << RLX_EMU_ALIGN_SHIFT));
  };
  rlx_emu_shared shared[1] = {{64, 16}};
  rlx_emu_kernel k{"misaligned", kernel, 0, shared, 1};
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  EXPECT_NE(rlx_emu_launch(&k, grid, block, 0, nullptr), 0);
  std::string r = rlx_emu_last_report();
  EXPECT_NE(r.find("misaligned read of 16 bytes"), std::string::npos) << r;
  EXPECT_NE(r.find("needs 16-byte alignment"), std::string::npos) << r;
}

TEST(EmulatorAsync, AMisalignedCpAsyncIsAFinding) {
  auto kernel = [](void **params) {
    const uint8_t *g = *static_cast<const uint8_t **>(params[0]);
    uint8_t *s = *static_cast<uint8_t **>(params[1]);
    __rlx_emu_cp_async(s + 8, g, 16, 16);
    __rlx_emu_cp_async_commit();
    __rlx_emu_cp_async_wait(0);
  };
  alignas(16) static uint8_t g[64] = {};
  const uint8_t *pg = g;
  rlx_emu_register_buffer(g, sizeof g, "g");
  rlx_emu_shared shared[1] = {{64, 16}};
  rlx_emu_kernel k{"cp", kernel, 1, shared, 1};
  void *params[] = {&pg};
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  EXPECT_NE(rlx_emu_launch(&k, grid, block, 0, params), 0);
  std::string r = rlx_emu_last_report();
  EXPECT_NE(r.find("cp.async of 16 bytes with the misaligned shared destination"),
            std::string::npos)
      << r;
  rlx_emu_unregister_buffer(g);
}

TEST(EmulatorAsync, TmaOnAnMBarrierWithoutFenceMBarrierInitIsAFinding) {
  auto kernel = [](void **params) {
    const rlx_emu_tensor_map *map = *static_cast<const rlx_emu_tensor_map **>(params[0]);
    uint8_t *box = *static_cast<uint8_t **>(params[1]);
    uint64_t *bar = *static_cast<uint64_t **>(params[2]);
    int32_t coords[2] = {0, 0};
    __rlx_emu_mbarrier_init(bar, 1);
    __rlx_emu_mbarrier_arrive(bar, 1, 64);
    __rlx_emu_tma_load(box, map, coords, 2, bar);
    __rlx_emu_mbarrier_wait_parity(bar, 0);
  };
  alignas(16) static float t[4][4] = {};
  static rlx_emu_tensor_map map;
  uint64_t dims[2] = {4, 4}, strides[1] = {16};
  uint32_t box[2] = {4, 4};
  ASSERT_EQ(rlx_emu_encode_tensor_map(&map, t, 2, 4, dims, strides, box, 0), nullptr);
  rlx_emu_register_buffer(t, sizeof t, "tensor");
  rlx_emu_register_buffer(&map, sizeof map, "map");
  const rlx_emu_tensor_map *pm = &map;
  rlx_emu_shared shared[2] = {{64, 128}, {8, 8}};
  rlx_emu_kernel k{"nofence", kernel, 1, shared, 2};
  void *params[] = {&pm};
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  EXPECT_NE(rlx_emu_launch(&k, grid, block, 0, params), 0);
  std::string r = rlx_emu_last_report();
  EXPECT_NE(r.find("no fence.mbarrier_init"), std::string::npos) << r;
  rlx_emu_unregister_buffer(t);
  rlx_emu_unregister_buffer(&map);
}

TEST(EmulatorAsync, TwoBlocksWritingOneGlobalByteIsARace) {
  // Blocks of a launch run concurrently in any order (CUDA programming
  // guide, "Thread hierarchy"): with nothing ordering them, two blocks
  // writing one element race, though the emulator runs them in turn.
  auto kernel = [](void **params) {
    float *out = *static_cast<float **>(params[0]);
    const uint32_t same = **static_cast<uint32_t **>(params[1]);
    uint32_t b = static_cast<uint32_t>(__rlx_emu_id(RLX_EMU_BLOCK_ID * 4));
    float *p = out + (same ? 0 : b);
    if (__rlx_emu_access(p, 4, RLX_EMU_WRITE))
      *p = static_cast<float>(b);
  };
  for (uint32_t same : {0u, 1u}) {
    float out[4] = {};
    float *po = out;
    uint32_t *ps = &same;
    rlx_emu_register_buffer(out, sizeof out, "out");
    rlx_emu_register_buffer(ps, sizeof same, "same");
    rlx_emu_kernel k{"blocks", kernel, 2, nullptr, 0};
    void *params[] = {&po, &ps};
    uint32_t grid[3] = {4, 1, 1}, block[3] = {1, 1, 1};
    int rc = rlx_emu_launch(&k, grid, block, 0, params);
    std::string r = rlx_emu_last_report();
    if (same) {
      EXPECT_NE(rc, 0);
      EXPECT_NE(r.find("writes byte 0 of buffer 'out', which block (0,0,0) wrote in the same "
                       "launch"),
                std::string::npos)
          << r;
    } else {
      EXPECT_EQ(rc, 0) << r;
    }
    rlx_emu_unregister_buffer(out);
    rlx_emu_unregister_buffer(ps);
  }
}

TEST(EmulatorAsync, ACpAsyncSourceChangedBeforeItsWaitIsAFinding) {
  // The copy may read its source at any time until the wait_group that
  // completes it (PTX ISA, cp.async): writing the source in between races.
  auto kernel = [](void **params) {
    uint8_t *g = *static_cast<uint8_t **>(params[0]);
    uint8_t *s = *static_cast<uint8_t **>(params[1]);
    __rlx_emu_cp_async(s, g, 16, 16);
    __rlx_emu_cp_async_commit();
    if (__rlx_emu_access(g, 1, RLX_EMU_WRITE))
      g[0] = 7;
    __rlx_emu_cp_async_wait(0);
  };
  alignas(16) static uint8_t g[16] = {};
  uint8_t *pg = g;
  rlx_emu_register_buffer(g, sizeof g, "g");
  rlx_emu_shared shared[1] = {{16, 16}};
  rlx_emu_kernel k{"cpsrc", kernel, 1, shared, 1};
  void *params[] = {&pg};
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  EXPECT_NE(rlx_emu_launch(&k, grid, block, 0, params), 0);
  std::string r = rlx_emu_last_report();
  EXPECT_NE(r.find("changed between the copy's issue and the cp.async.wait_group"),
            std::string::npos)
      << r;
  rlx_emu_unregister_buffer(g);
}

TEST(EmulatorAsync, SetmaxnregIncWaitsForTheRegisterFile) {
  // PTX ISA, setmaxnreg: .inc blocks until enough registers are free in the
  // SM's register file (65536), which .dec of other warps releases. 384
  // threads start at the kernel's 168 (64512); the consumers (warpgroups 0,
  // 1) may rise to 232 once the producer (warpgroup 2) fell to 40 (64512
  // again); they run first here, so they wait for it; to 240 (66560) they
  // never can while the producer waits for them at the barrier (an exited
  // warp's registers would be free again): a deadlock.
  auto kernel = [](void **params) {
    const uint32_t inc = **static_cast<uint32_t **>(params[0]);
    if (tid() < 256)
      __rlx_emu_setmaxnreg(inc, 1, 168);
    else
      __rlx_emu_setmaxnreg(40, 0, 168);
    __rlx_emu_barrier();
  };
  for (uint32_t inc : {232u, 240u}) {
    uint32_t *pi = &inc;
    rlx_emu_register_buffer(pi, 4, "inc");
    rlx_emu_kernel k{"regs", kernel, 1, nullptr, 0};
    void *params[] = {&pi};
    uint32_t grid[3] = {1, 1, 1}, block[3] = {384, 1, 1};
    int rc = rlx_emu_launch(&k, grid, block, 0, params);
    std::string r = rlx_emu_last_report();
    if (inc == 232) {
      EXPECT_EQ(rc, 0) << r;
    } else {
      EXPECT_NE(r.find("deadlock"), std::string::npos) << r;
      EXPECT_NE(r.find("wait at setmaxnreg.inc 240 (the block holds"), std::string::npos) << r;
    }
    rlx_emu_unregister_buffer(pi);
  }
}

TEST(EmulatorAsync, OnlyASynchronizationChainOrdersTwoThreads) {
  // PTX memory model: thread 0's write and thread 64's read are ordered
  // only through synchronization between them. An unrelated named barrier
  // (warps 1 and 3 on barrier 2) completing in between orders nothing (a
  // block-wide epoch would have hidden this race); warp 0 arriving at
  // barrier 1 where warp 2 syncs does (bar.arrive releases, bar.sync
  // acquires).
  auto kernel = [](void **params) {
    const uint32_t ordered = **static_cast<uint32_t **>(params[0]);
    uint32_t *s = *static_cast<uint32_t **>(params[1]);
    const uint32_t t = tid(), warp = t / 32;
    if (t == 0 && __rlx_emu_access(s, 4, RLX_EMU_WRITE))
      *s = 1;
    if (warp == 1 || warp == 3)
      __rlx_emu_named_barrier(2, 64, 1);
    if (ordered && (warp == 0 || warp == 2))
      __rlx_emu_named_barrier(1, 64, warp == 2);
    if (t == 64)
      __rlx_emu_access(s, 4, RLX_EMU_READ);
  };
  for (uint32_t ordered : {0u, 1u}) {
    uint32_t *po = &ordered;
    rlx_emu_register_buffer(po, 4, "ordered");
    rlx_emu_shared shared[1] = {{16, 16}};
    rlx_emu_kernel k{"hb", kernel, 1, shared, 1};
    void *params[] = {&po};
    uint32_t grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
    int rc = rlx_emu_launch(&k, grid, block, 0, params);
    std::string r = rlx_emu_last_report();
    if (ordered) {
      EXPECT_EQ(rc, 0) << r;
    } else {
      EXPECT_NE(r.find("read by thread (64,0,0) (linear 64) and write by thread (0,0,0)"),
                std::string::npos)
          << r;
    }
    rlx_emu_unregister_buffer(po);
  }
}
