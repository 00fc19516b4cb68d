//===- EmulatorMBarrierTest.cpp - mbarrier objects in the emulator --------===//
//
// The PTX ISA's mbarrier semantics (lib/Runtime/Emulator/MBarrier.cpp) on
// their own: phases and parities through a two-slot producer/consumer ring
// (the pipeline shape of a TMA + wgmma main loop, with threads standing in
// for the copies), transaction bytes, a wait that can never complete (a
// reported deadlock, not a hang) and misuse findings.
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/Emulator.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

uint32_t tid() { return static_cast<uint32_t>(__rlx_emu_id(RLX_EMU_THREAD_ID * 4)); }

template <typename T> T *sharedParam(void **params, unsigned i) {
  return *static_cast<T **>(params[i]);
}

int launch1(rlx_emu_kernel &k, uint32_t threads, void **params) {
  uint32_t grid[3] = {1, 1, 1}, block[3] = {threads, 1, 1};
  return rlx_emu_launch(&k, grid, block, 0, params);
}

constexpr uint32_t kIters = 8;

// Warp 0 produces, warp 1 consumes, through two slots of 32 floats: full[s]
// and empty[s] expect 32 arrivals (one per lane). Iteration i uses slot i % 2
// in its phase (i / 2) % 2; producers wait for the opposite parity of empty,
// which an mbarrier in phase 0 reports complete (the slots start empty).
void ringKernel(void **params) {
  float *out = *static_cast<float **>(params[0]);
  float *slots = sharedParam<float>(params, 1);
  uint64_t *bars = sharedParam<uint64_t>(params, 2); // full[0..1], empty[0..1]
  uint32_t t = tid(), lane = t % 32;
  if (t == 0)
    for (int b = 0; b < 4; ++b)
      __rlx_emu_mbarrier_init(&bars[b], 32);
  __rlx_emu_barrier();
  for (uint32_t i = 0; i < kIters; ++i) {
    uint32_t s = i % 2, phase = (i / 2) % 2;
    if (t < 32) {
      __rlx_emu_mbarrier_wait_parity(&bars[2 + s], phase ^ 1);
      if (__rlx_emu_access(&slots[32 * s + lane], 4, RLX_EMU_WRITE))
        slots[32 * s + lane] = static_cast<float>(100 * i + lane);
      __rlx_emu_mbarrier_arrive(&bars[s], 1, 0);
    } else {
      __rlx_emu_mbarrier_wait_parity(&bars[s], phase);
      float v = 0;
      if (__rlx_emu_access(&slots[32 * s + lane], 4, RLX_EMU_READ))
        v = slots[32 * s + lane];
      out[32 * i + lane] = v;
      __rlx_emu_mbarrier_arrive(&bars[2 + s], 1, 0);
    }
  }
}

} // namespace

TEST(EmulatorMBarrier, ProducerConsumerRingPhases) {
  std::vector<float> out(32 * kIters, -1.0f);
  float *pout = out.data();
  ASSERT_EQ(rlx_emu_register_buffer(pout, out.size() * 4, "out"), 0);
  rlx_emu_shared shared[2] = {{2 * 32 * 4, 16}, {4 * 8, 8}};
  rlx_emu_kernel k{"ring", ringKernel, 1, shared, 2};
  void *params[] = {&pout};
  EXPECT_EQ(launch1(k, 64, params), 0) << rlx_emu_last_report();
  for (uint32_t i = 0; i < kIters; ++i)
    for (uint32_t lane = 0; lane < 32; ++lane)
      EXPECT_EQ(out[32 * i + lane], static_cast<float>(100 * i + lane)) << i << " " << lane;
  rlx_emu_unregister_buffer(pout);
}

namespace {
// One thread: arrive.expect_tx of 64 bytes, then two complete_tx of 32.
void txKernel(void **params) {
  uint32_t *out = *static_cast<uint32_t **>(params[0]);
  uint64_t *bar = sharedParam<uint64_t>(params, 1);
  __rlx_emu_mbarrier_init(bar, 1);
  uint64_t state = __rlx_emu_mbarrier_arrive(bar, 1, 64);
  out[0] = static_cast<uint32_t>(state);
  out[1] = __rlx_emu_mbarrier_test_wait(bar, state, 0);  // 64 bytes pending
  __rlx_emu_mbarrier_tx(bar, -32);
  out[2] = __rlx_emu_mbarrier_test_wait(bar, 0, 1);      // parity 0: still pending
  __rlx_emu_mbarrier_tx(bar, -32);
  out[3] = __rlx_emu_mbarrier_test_wait(bar, state, 0);  // phase 0 complete
  out[4] = __rlx_emu_mbarrier_test_wait(bar, 0, 1);      // parity 0 complete
  out[5] = __rlx_emu_mbarrier_test_wait(bar, 1, 1);      // parity 1 (phase 1) not yet
  // Phase 1: expect_tx without an arrival keeps it open.
  __rlx_emu_mbarrier_tx(bar, 16);
  uint64_t s1 = __rlx_emu_mbarrier_arrive(bar, 1, 0);
  out[6] = static_cast<uint32_t>(s1);
  out[7] = __rlx_emu_mbarrier_test_wait(bar, s1, 0);
  __rlx_emu_mbarrier_tx(bar, -16);
  out[8] = __rlx_emu_mbarrier_test_wait(bar, s1, 0);
  __rlx_emu_mbarrier_wait_parity(bar, 1); // complete: returns at once
  out[9] = 1;
}
} // namespace

TEST(EmulatorMBarrier, TransactionBytesKeepThePhaseOpen) {
  std::vector<uint32_t> out(10, 99);
  uint32_t *pout = out.data();
  ASSERT_EQ(rlx_emu_register_buffer(pout, out.size() * 4, "out"), 0);
  rlx_emu_shared shared[1] = {{8, 8}};
  rlx_emu_kernel k{"tx", txKernel, 1, shared, 1};
  void *params[] = {&pout};
  EXPECT_EQ(launch1(k, 1, params), 0) << rlx_emu_last_report();
  EXPECT_EQ(out, (std::vector<uint32_t>{0, 0, 0, 1, 1, 0, 1, 0, 1, 1}));
  rlx_emu_unregister_buffer(pout);
}

TEST(EmulatorMBarrier, AWaitNothingCompletesIsADeadlock) {
  auto kernel = [](void **params) {
    uint64_t *bar = sharedParam<uint64_t>(params, 0);
    if (tid() == 0)
      __rlx_emu_mbarrier_init(bar, 2);
    __rlx_emu_barrier();
    if (tid() == 0)
      __rlx_emu_mbarrier_arrive(bar, 1, 0); // one of the two arrivals
    __rlx_emu_mbarrier_wait_parity(bar, 0);
  };
  rlx_emu_shared shared[1] = {{8, 8}};
  rlx_emu_kernel k{"stuck", kernel, 0, shared, 1};
  EXPECT_NE(launch1(k, 4, nullptr), 0);
  std::string report = rlx_emu_last_report();
  EXPECT_NE(report.find("deadlock"), std::string::npos) << report;
  EXPECT_NE(report.find("threads 0-3 wait at mbarrier.try_wait.parity 0 (mbarrier at"),
            std::string::npos)
      << report;
}

TEST(EmulatorMBarrier, MisuseIsAFinding) {
  struct Case {
    void (*kernel)(void **);
    const char *expect;
  };
  static uint64_t global = 0;
  Case cases[] = {
      {[](void **params) { __rlx_emu_mbarrier_arrive(sharedParam<uint64_t>(params, 0), 1, 0); },
       "which mbarrier.init never initialized"},
      {[](void **) { __rlx_emu_mbarrier_init(&global, 1); },
       "which is not in the block's shared memory"},
      {[](void **params) {
         uint64_t *bar = sharedParam<uint64_t>(params, 0);
         __rlx_emu_mbarrier_init(bar, 2);
         __rlx_emu_mbarrier_arrive(bar, 3, 0);
       },
       "whose phase expects only 2 more"},
      {[](void **params) { __rlx_emu_mbarrier_init(sharedParam<uint64_t>(params, 0), 0); },
       "mbarrier.init with a count of 0"},
      {[](void **params) {
         auto *p = reinterpret_cast<uint8_t *>(sharedParam<uint64_t>(params, 0));
         __rlx_emu_mbarrier_init(p + 4, 1);
       },
       "which is not 8-byte aligned"},
  };
  for (const Case &c : cases) {
    rlx_emu_shared shared[1] = {{16, 8}};
    rlx_emu_kernel k{"misuse", c.kernel, 0, shared, 1};
    EXPECT_NE(launch1(k, 1, nullptr), 0) << c.expect;
    std::string report = rlx_emu_last_report();
    EXPECT_NE(report.find(c.expect), std::string::npos) << report;
  }
}

//===--- TMA tiled loads -------------------------------------------------===//

namespace {

struct TmaCase {
  rlx_emu_tensor_map map;
  int32_t coords[2];
  uint32_t expectBytes;
  uint32_t boxElems;
  uint32_t elemBytes;
  bool readEarly = false; ///< read the box's first word before the wait
};

// Thread 0: init the mbarrier (1 arrival), arrive.expect_tx, issue the load,
// (readEarly) read the box's first word before the wait (out[0]), wait,
// copy the box's shared bytes to out[1..].
void tmaKernel(void **params) {
  const TmaCase *c = *static_cast<const TmaCase **>(params[0]);
  uint32_t *out = *static_cast<uint32_t **>(params[1]);
  uint8_t *box = sharedParam<uint8_t>(params, 2);
  uint64_t *bar = sharedParam<uint64_t>(params, 3);
  __rlx_emu_mbarrier_init(bar, 1);
  __rlx_emu_fence_proxy_async(); // fence.mbarrier_init: TMA completes on it
  __rlx_emu_mbarrier_arrive(bar, 1, c->expectBytes);
  __rlx_emu_tma_load(box, &c->map, c->coords, 2, bar);
  if (c->readEarly && __rlx_emu_access(box, 4, RLX_EMU_READ))
    std::memcpy(&out[0], box, 4);
  __rlx_emu_mbarrier_wait_parity(bar, 0);
  uint32_t words = c->boxElems * c->elemBytes / 4;
  for (uint32_t i = 0; i < words; ++i)
    if (__rlx_emu_access(box + 4 * i, 4, RLX_EMU_READ))
      std::memcpy(&out[1 + i], box + 4 * i, 4);
}

int runTma(TmaCase &c, std::vector<uint32_t> &out) {
  const TmaCase *pc = &c;
  uint32_t *pout = out.data();
  rlx_emu_register_buffer(pc, sizeof c, "case");
  rlx_emu_register_buffer(pout, out.size() * 4, "out");
  rlx_emu_shared shared[2] = {{4096, 1024}, {8, 8}};
  rlx_emu_kernel k{"tma", tmaKernel, 2, shared, 2};
  void *params[] = {&pc, &pout};
  int rc = launch1(k, 1, params);
  rlx_emu_unregister_buffer(pc);
  rlx_emu_unregister_buffer(pout);
  return rc;
}

} // namespace

TEST(EmulatorTma, BoxWithOutOfBoundsElementsLandsAtTheWait) {
  // f32 tensor of 5 rows × 12 columns; an 8 × 4 box at column 8, row 3:
  // columns 12..15 and rows 5, 6 are outside (zero).
  alignas(16) float t[5][12];
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 12; ++c)
      t[r][c] = static_cast<float>(100 * r + c + 1);
  ASSERT_EQ(rlx_emu_register_buffer(t, sizeof t, "tensor"), 0);
  TmaCase c{};
  uint64_t dims[2] = {12, 5}, strides[1] = {48};
  uint32_t box[2] = {8, 4};
  ASSERT_EQ(rlx_emu_encode_tensor_map(&c.map, t, 2, 4, dims, strides, box, 0), nullptr);
  c.coords[0] = 8;
  c.coords[1] = 3;
  c.expectBytes = 8 * 4 * 4;
  c.boxElems = 32;
  c.elemBytes = 4;
  std::vector<uint32_t> out(1 + 32, 0);
  ASSERT_EQ(runTma(c, out), 0) << rlx_emu_last_report();
  for (int r = 0; r < 4; ++r)
    for (int col = 0; col < 8; ++col) {
      float v;
      std::memcpy(&v, &out[1 + 8 * r + col], 4);
      int tr = 3 + r, tc = 8 + col;
      float expect = tr < 5 && tc < 12 ? t[tr][tc] : 0.0f;
      EXPECT_EQ(v, expect) << r << " " << col;
    }
  rlx_emu_unregister_buffer(t);
}

TEST(EmulatorTma, AReadBeforeTheWaitThatCompletesTheLoadIsARace) {
  // PTX ISA, cp.async.bulk.tensor: the box's writes become visible through
  // the mbarrier's complete-tx; a read before observing that phase races
  // with them (the load may land at any time until then), whatever it sees.
  alignas(16) float t[4][4] = {};
  ASSERT_EQ(rlx_emu_register_buffer(t, sizeof t, "tensor"), 0);
  TmaCase c{};
  uint64_t dims[2] = {4, 4}, strides[1] = {16};
  uint32_t box[2] = {4, 4};
  ASSERT_EQ(rlx_emu_encode_tensor_map(&c.map, t, 2, 4, dims, strides, box, 0), nullptr);
  c.expectBytes = 64;
  c.boxElems = 16;
  c.elemBytes = 4;
  c.readEarly = true;
  std::vector<uint32_t> out(17, 0);
  EXPECT_NE(runTma(c, out), 0);
  std::string report = rlx_emu_last_report();
  EXPECT_NE(report.find("which a TMA load writes, before observing the mbarrier phase"),
            std::string::npos)
      << report;
  rlx_emu_unregister_buffer(t);
}

TEST(EmulatorTma, Swizzle128BPermutesSixteenByteChunksByRow) {
  // bf16 8 × 64 (128-byte rows), one box, 128B swizzle: element (r, c) at
  // byte r·128 + ((c / 8) ^ r)·16 + (c % 8)·2 of the 1024-byte atom.
  alignas(16) uint16_t t[8][64];
  for (int r = 0; r < 8; ++r)
    for (int col = 0; col < 64; ++col)
      t[r][col] = static_cast<uint16_t>(1000 * r + col);
  ASSERT_EQ(rlx_emu_register_buffer(t, sizeof t, "tensor"), 0);
  TmaCase c{};
  uint64_t dims[2] = {64, 8}, strides[1] = {128};
  uint32_t box[2] = {64, 8};
  ASSERT_EQ(rlx_emu_encode_tensor_map(&c.map, t, 2, 2, dims, strides, box, 3), nullptr);
  c.expectBytes = 1024;
  c.boxElems = 512;
  c.elemBytes = 2;
  std::vector<uint32_t> out(1 + 256, 0);
  ASSERT_EQ(runTma(c, out), 0) << rlx_emu_last_report();
  const uint8_t *bytes = reinterpret_cast<const uint8_t *>(&out[1]);
  for (int r = 0; r < 8; ++r)
    for (int col = 0; col < 64; ++col) {
      uint16_t v;
      std::memcpy(&v, bytes + r * 128 + ((col / 8) ^ r) * 16 + (col % 8) * 2, 2);
      EXPECT_EQ(v, t[r][col]) << r << " " << col;
    }
  rlx_emu_unregister_buffer(t);
}

TEST(EmulatorTma, Swizzle64BAnd32BPermuteChunksByRowPairsAndQuads) {
  // CU_TENSOR_MAP_SWIZZLE_64B / 32B: rows of 64 / 32 bytes; the 16-byte
  // chunk c of row r lands at c ^ ((r / 2) % 4) / c ^ ((r / 4) % 2).
  for (uint32_t swizzle : {2u, 1u}) {
    const uint32_t cols = swizzle == 2 ? 32 : 16, rowBytes = 2 * cols;
    alignas(16) static uint16_t t[8][32];
    for (uint32_t r = 0; r < 8; ++r)
      for (uint32_t col = 0; col < cols; ++col)
        t[r][col] = static_cast<uint16_t>(1000 * r + col);
    ASSERT_EQ(rlx_emu_register_buffer(t, sizeof t, "tensor"), 0);
    TmaCase c{};
    uint64_t dims[2] = {cols, 8}, strides[1] = {64};
    uint32_t box[2] = {cols, 8};
    ASSERT_EQ(rlx_emu_encode_tensor_map(&c.map, t, 2, 2, dims, strides, box, swizzle), nullptr);
    c.expectBytes = 8 * rowBytes;
    c.boxElems = 8 * cols;
    c.elemBytes = 2;
    std::vector<uint32_t> out(1 + 8 * rowBytes / 4, 0);
    ASSERT_EQ(runTma(c, out), 0) << rlx_emu_last_report();
    const uint8_t *bytes = reinterpret_cast<const uint8_t *>(&out[1]);
    for (uint32_t r = 0; r < 8; ++r)
      for (uint32_t col = 0; col < cols; ++col) {
        uint32_t x = swizzle == 2 ? (r / 2) % 4 : (r / 4) % 2;
        uint16_t v;
        std::memcpy(&v, bytes + r * rowBytes + ((col / 8) ^ x) * 16 + (col % 8) * 2, 2);
        EXPECT_EQ(v, t[r][col]) << swizzle << " " << r << " " << col;
      }
    rlx_emu_unregister_buffer(t);
  }
}

TEST(EmulatorTma, MoreExpectedBytesThanTheBoxIsADeadlock) {
  alignas(16) float t[4][4] = {};
  ASSERT_EQ(rlx_emu_register_buffer(t, sizeof t, "tensor"), 0);
  TmaCase c{};
  uint64_t dims[2] = {4, 4}, strides[1] = {16};
  uint32_t box[2] = {4, 4};
  ASSERT_EQ(rlx_emu_encode_tensor_map(&c.map, t, 2, 4, dims, strides, box, 0), nullptr);
  c.expectBytes = 128; // the box is 64
  c.boxElems = 16;
  c.elemBytes = 4;
  std::vector<uint32_t> out(17, 0);
  EXPECT_NE(runTma(c, out), 0);
  std::string report = rlx_emu_last_report();
  EXPECT_NE(report.find("deadlock"), std::string::npos) << report;
  rlx_emu_unregister_buffer(t);
}

TEST(EmulatorTma, EncodeChecksWhatTheDriverChecks) {
  alignas(16) static uint8_t t[4096];
  rlx_emu_tensor_map m;
  uint64_t dims[2] = {64, 8}, strides[1] = {128};
  auto encode = [&](const void *base, uint32_t eb, uint32_t b0, uint32_t b1, uint32_t swz,
                    uint64_t stride = 128) {
    uint32_t box[2] = {b0, b1};
    uint64_t s[1] = {stride};
    const char *e = rlx_emu_encode_tensor_map(&m, base, 2, eb, dims, s, box, swz);
    return std::string(e ? e : "");
  };
  (void)strides;
  EXPECT_EQ(encode(t, 2, 64, 8, 3), "");
  EXPECT_NE(encode(t, 2, 6, 8, 0).find("multiple of 16 bytes"), std::string::npos);
  EXPECT_NE(encode(t, 4, 64, 8, 3).find("swizzle span"), std::string::npos);
  EXPECT_NE(encode(t + 4, 2, 64, 8, 0).find("16-byte aligned"), std::string::npos);
  EXPECT_NE(encode(t, 2, 64, 300, 0).find("1 to 256"), std::string::npos);
  EXPECT_NE(encode(t, 2, 64, 8, 0, 100).find("multiples of 16 bytes"), std::string::npos);
  EXPECT_NE(encode(t, 3, 64, 8, 0).find("element size"), std::string::npos);
}

TEST(EmulatorTma, ALoadNoWaitLandsIsAFinding) {
  auto kernel = [](void **params) {
    const rlx_emu_tensor_map *map = *static_cast<const rlx_emu_tensor_map **>(params[0]);
    uint8_t *box = sharedParam<uint8_t>(params, 1);
    uint64_t *bar = sharedParam<uint64_t>(params, 2);
    int32_t coords[2] = {0, 0};
    __rlx_emu_mbarrier_init(bar, 1);
    __rlx_emu_fence_proxy_async();
    __rlx_emu_tma_load(box, map, coords, 2, bar);
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
  rlx_emu_kernel k{"nowait", kernel, 1, shared, 2};
  void *params[] = {&pm};
  EXPECT_NE(launch1(k, 1, params), 0);
  std::string report = rlx_emu_last_report();
  EXPECT_NE(report.find("1 TMA load(s) on the mbarrier at"), std::string::npos) << report;
  EXPECT_NE(report.find("never landed"), std::string::npos) << report;
  rlx_emu_unregister_buffer(t);
  rlx_emu_unregister_buffer(&map);
}

TEST(EmulatorMBarrier, TestWaitPollingLetsTheOtherThreadsRun) {
  // Thread 0 polls test_wait.parity until thread 32 (another warp) arrives;
  // the emulator's fibers are cooperative, so the poll must yield.
  auto kernel = [](void **params) {
    uint32_t *out = *static_cast<uint32_t **>(params[0]);
    uint64_t *bar = sharedParam<uint64_t>(params, 1);
    if (tid() == 0)
      __rlx_emu_mbarrier_init(bar, 1);
    __rlx_emu_barrier();
    if (tid() == 0) {
      while (!__rlx_emu_mbarrier_test_wait(bar, 0, 1)) {
      }
      out[0] = 1;
      out[1] = 1;
    } else if (tid() == 32) {
      __rlx_emu_mbarrier_arrive(bar, 1, 0);
    }
  };
  std::vector<uint32_t> out(2, 0);
  uint32_t *pout = out.data();
  ASSERT_EQ(rlx_emu_register_buffer(pout, 8, "out"), 0);
  rlx_emu_shared shared[1] = {{8, 8}};
  rlx_emu_kernel k{"poll", kernel, 1, shared, 1};
  void *params[] = {&pout};
  EXPECT_EQ(launch1(k, 64, params), 0) << rlx_emu_last_report();
  EXPECT_EQ(out, (std::vector<uint32_t>{1, 1}));
  rlx_emu_unregister_buffer(pout);
}

TEST(EmulatorMBarrier, APollThatNeverSucceedsIsAFinding) {
  auto kernel = [](void **params) {
    uint64_t *bar = sharedParam<uint64_t>(params, 0);
    __rlx_emu_mbarrier_init(bar, 2);
    while (!__rlx_emu_mbarrier_test_wait(bar, 0, 1)) {
    }
  };
  rlx_emu_shared shared[1] = {{8, 8}};
  rlx_emu_kernel k{"spin", kernel, 0, shared, 1};
  EXPECT_NE(launch1(k, 1, nullptr), 0);
  std::string report = rlx_emu_last_report();
  EXPECT_NE(report.find("polled 1048576 times without its phase completing"), std::string::npos)
      << report;
}

TEST(EmulatorTma, ABoxOutsideSharedMemoryIsAFinding) {
  auto kernel = [](void **params) {
    const rlx_emu_tensor_map *map = *static_cast<const rlx_emu_tensor_map **>(params[0]);
    float *global = *static_cast<float **>(params[1]);
    uint64_t *bar = sharedParam<uint64_t>(params, 2);
    int32_t coords[2] = {0, 0};
    __rlx_emu_mbarrier_init(bar, 1);
    __rlx_emu_tma_load(global, map, coords, 2, bar);
  };
  alignas(128) static float t[4][4] = {}, g[16] = {};
  static rlx_emu_tensor_map map;
  uint64_t dims[2] = {4, 4}, strides[1] = {16};
  uint32_t box[2] = {4, 4};
  ASSERT_EQ(rlx_emu_encode_tensor_map(&map, t, 2, 4, dims, strides, box, 0), nullptr);
  rlx_emu_register_buffer(t, sizeof t, "tensor");
  rlx_emu_register_buffer(g, sizeof g, "global");
  rlx_emu_register_buffer(&map, sizeof map, "map");
  const rlx_emu_tensor_map *pm = &map;
  float *pg = g;
  rlx_emu_shared shared[1] = {{8, 8}};
  rlx_emu_kernel k{"global", kernel, 2, shared, 1};
  void *params[] = {&pm, &pg};
  EXPECT_NE(launch1(k, 1, params), 0);
  std::string report = rlx_emu_last_report();
  EXPECT_NE(report.find("does not lie in the block's shared memory"), std::string::npos) << report;
  rlx_emu_unregister_buffer(t);
  rlx_emu_unregister_buffer(g);
  rlx_emu_unregister_buffer(&map);
}
