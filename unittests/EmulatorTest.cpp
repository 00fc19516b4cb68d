//===- EmulatorTest.cpp - The GPU emulator's core runtime -----------------===//
//
// The PTX lane math against hand-worked examples from the shfl pseudo-code,
// then whole launches of small kernels written as the lowering will emit
// them: `void k(void **params)` calling the __rlx_emu_* hooks, with an
// __rlx_emu_access before every load and store.
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/Emulator.h"
#include "../lib/Runtime/Emulator/Warp.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace rlx::emu;

namespace {

//===--- Lane math --------------------------------------------------------===//

TEST(EmulatorWarp, ButterflyFullWarp) {
  // c = 0x1f: one 32-lane segment, clamp 31.
  EXPECT_EQ(shflSource(ShflMode::Bfly, 5, 16, 0x1f).lane, 21u);
  EXPECT_TRUE(shflSource(ShflMode::Bfly, 5, 16, 0x1f).inRange);
  EXPECT_EQ(shflSource(ShflMode::Bfly, 31, 1, 0x1f).lane, 30u);
  // b is taken mod 32: 33 is 1.
  EXPECT_EQ(shflSource(ShflMode::Bfly, 4, 33, 0x1f).lane, 5u);

  // Sum reduction with offsets 16, 8, 4, 2, 1: every lane ends with the sum.
  uint32_t v[32], b[32], c[32], d[32];
  bool p[32];
  for (uint32_t i = 0; i < 32; ++i) {
    v[i] = i + 1;
    c[i] = 0x1f;
  }
  for (uint32_t off = 16; off; off >>= 1) {
    for (uint32_t i = 0; i < 32; ++i)
      b[i] = off;
    EXPECT_EQ(shflSyncWarp(ShflMode::Bfly, ~0u, v, b, c, d, p), 0u);
    for (uint32_t i = 0; i < 32; ++i) {
      EXPECT_TRUE(p[i]);
      v[i] += d[i];
    }
  }
  for (uint32_t i = 0; i < 32; ++i)
    EXPECT_EQ(v[i], 528u) << "lane " << i;
}

TEST(EmulatorWarp, UpDownIdxWidth32) {
  // Upstream's gpu.shuffle at width 32: up uses c = 0, the others c = 31.
  ShflSource s = shflSource(ShflMode::Up, 3, 1, 0);
  EXPECT_EQ(s.lane, 2u);
  EXPECT_TRUE(s.inRange);
  s = shflSource(ShflMode::Up, 0, 1, 0); // j = -1 < maxLane 0
  EXPECT_EQ(s.lane, 0u);
  EXPECT_FALSE(s.inRange);
  s = shflSource(ShflMode::Up, 1, 2, 0);
  EXPECT_EQ(s.lane, 1u);
  EXPECT_FALSE(s.inRange);
  s = shflSource(ShflMode::Down, 29, 2, 31);
  EXPECT_EQ(s.lane, 31u);
  EXPECT_TRUE(s.inRange);
  s = shflSource(ShflMode::Down, 30, 2, 31); // j = 32 > 31
  EXPECT_EQ(s.lane, 30u);
  EXPECT_FALSE(s.inRange);
  for (uint32_t lane = 0; lane < 32; ++lane) {
    s = shflSource(ShflMode::Idx, lane, 7, 31);
    EXPECT_EQ(s.lane, 7u);
    EXPECT_TRUE(s.inRange);
  }
}

TEST(EmulatorWarp, UpstreamWidth8And16) {
  ShflOperands down8 = gpuShuffleOperands(ShflMode::Down, 8);
  EXPECT_EQ(down8.membermask, 0xffu);
  EXPECT_EQ(down8.c, 7u);
  ShflOperands up16 = gpuShuffleOperands(ShflMode::Up, 16);
  EXPECT_EQ(up16.membermask, 0xffffu);
  EXPECT_EQ(up16.c, 16u);
  ShflOperands x32 = gpuShuffleOperands(ShflMode::Bfly, 32);
  EXPECT_EQ(x32.membermask, 0xffffffffu);
  EXPECT_EQ(x32.c, 31u);
  EXPECT_EQ(gpuShuffleOperands(ShflMode::Up, 32).c, 0u);

  // Down, width 8: c = 7 (segmask 0), maxLane = 7.
  EXPECT_EQ(shflSource(ShflMode::Down, 6, 1, 7).lane, 7u);
  EXPECT_TRUE(shflSource(ShflMode::Down, 6, 1, 7).inRange);
  EXPECT_FALSE(shflSource(ShflMode::Down, 7, 1, 7).inRange);
  // Xor, width 8: 3 ^ 4 = 7 in range, 3 ^ 8 = 11 > 7 is not.
  EXPECT_EQ(shflSource(ShflMode::Bfly, 3, 4, 7).lane, 7u);
  EXPECT_FALSE(shflSource(ShflMode::Bfly, 3, 8, 7).inRange);
  // Up, width 8 / 16: c = 24 / 16 is a clamp (segmask 0), so maxLane = 24 /
  // 16 and j = lane - b < maxLane for every member lane: never in range.
  for (uint32_t lane = 0; lane < 8; ++lane) {
    ShflSource s = shflSource(ShflMode::Up, lane, 1, 24);
    EXPECT_FALSE(s.inRange);
    EXPECT_EQ(s.lane, lane);
  }
  EXPECT_FALSE(shflSource(ShflMode::Up, 15, 1, 16).inRange);
  EXPECT_FALSE(shflSource(ShflMode::Up, 15, 0, 16).inRange);
}

TEST(EmulatorWarp, SegmentedOperands) {
  // CUDA's width-8 c = ((32 - 8) << 8) | 0x1f = 0x181f: segmask 24, clamp 31.
  // Lane 13: minLane = 8, maxLane = 8 | (31 & ~24) = 15.
  EXPECT_EQ(shflSource(ShflMode::Bfly, 13, 1, 0x181f).lane, 12u);
  EXPECT_TRUE(shflSource(ShflMode::Bfly, 13, 8, 0x181f).inRange); // j = 5: bfly has no lower bound
  EXPECT_EQ(shflSource(ShflMode::Bfly, 13, 8, 0x181f).lane, 5u);
  EXPECT_FALSE(shflSource(ShflMode::Bfly, 5, 8, 0x181f).inRange); // j = 13 > maxLane 7
  EXPECT_EQ(shflSource(ShflMode::Idx, 13, 2, 0x181f).lane, 10u);  // 8 | (2 & 7)
  EXPECT_EQ(shflSource(ShflMode::Idx, 13, 30, 0x181f).lane, 14u); // 8 | (30 & 7)
  // Up with c = 0x1800: maxLane = lane & 24.
  EXPECT_EQ(shflSource(ShflMode::Up, 9, 1, 0x1800).lane, 8u);
  EXPECT_FALSE(shflSource(ShflMode::Up, 8, 1, 0x1800).inRange);
  // c = 0x1f1f: segmask 31, so minLane = maxLane = lane.
  EXPECT_FALSE(shflSource(ShflMode::Bfly, 6, 1, 0x1f1f).inRange); // j = 7 > 6
  EXPECT_TRUE(shflSource(ShflMode::Bfly, 7, 1, 0x1f1f).inRange);  // j = 6 <= 7
  EXPECT_EQ(shflSource(ShflMode::Bfly, 7, 1, 0x1f1f).lane, 6u);
  EXPECT_FALSE(shflSource(ShflMode::Down, 6, 1, 0x1f1f).inRange);
  EXPECT_TRUE(shflSource(ShflMode::Down, 6, 0, 0x1f1f).inRange);
  EXPECT_EQ(shflSource(ShflMode::Idx, 6, 3, 0x1f1f).lane, 6u);
  EXPECT_FALSE(shflSource(ShflMode::Up, 6, 1, 0x1f1f).inRange);
  // c = 0x1c03: 4-lane segments clamped at 3. Lane 6: [4, 7].
  EXPECT_EQ(shflSource(ShflMode::Down, 6, 1, 0x1c03).lane, 7u);
  EXPECT_FALSE(shflSource(ShflMode::Down, 7, 1, 0x1c03).inRange);
  EXPECT_EQ(shflSource(ShflMode::Idx, 6, 1, 0x1c03).lane, 5u);
}

TEST(EmulatorWarp, SourceOutsideMembers) {
  uint32_t a[32], b[32], c[32], d[32];
  bool p[32];
  for (uint32_t i = 0; i < 32; ++i) {
    a[i] = 100 + i;
    b[i] = 16;
    c[i] = 0x1f;
  }
  // Only lanes 0..15 take part: every xor-16 source is outside.
  EXPECT_EQ(shflSyncWarp(ShflMode::Bfly, 0xffffu, a, b, c, d, p), 0xffffu);
  EXPECT_EQ(d[3], 103u);
  for (uint32_t i = 0; i < 32; ++i)
    b[i] = 1;
  EXPECT_EQ(shflSyncWarp(ShflMode::Bfly, 0xffffu, a, b, c, d, p), 0u);
  EXPECT_EQ(d[3], 102u);
}

TEST(EmulatorWarp, Votes) {
  EXPECT_EQ(voteSync(VoteMode::Ballot, 0x0000ffffu, 0x00ff00ffu), 0x000000ffu);
  EXPECT_EQ(voteSync(VoteMode::All, 0x0000ffffu, 0x00ff00ffu), 0u);
  EXPECT_EQ(voteSync(VoteMode::Any, 0x0000ffffu, 0x00ff00ffu), 1u);
  EXPECT_EQ(voteSync(VoteMode::Uni, 0x0000ffffu, 0x00ff00ffu), 0u);
  EXPECT_EQ(voteSync(VoteMode::All, 0xf0u, 0xf0u), 1u);
  EXPECT_EQ(voteSync(VoteMode::Uni, 0xf0u, 0xffu), 1u);
  EXPECT_EQ(voteSync(VoteMode::Uni, 0xf0u, 0x0fu), 1u);
  EXPECT_EQ(voteSync(VoteMode::Any, 0xf0u, 0x0fu), 0u);
  EXPECT_EQ(voteSync(VoteMode::Ballot, ~0u, ~0u), ~0u);
}

//===--- Kernels ----------------------------------------------------------===//

uint32_t id(uint32_t kind, uint32_t dim = 0) {
  return static_cast<uint32_t>(__rlx_emu_id(kind * 4 + dim));
}
uint32_t linearTid() {
  return id(RLX_EMU_THREAD_ID, 0) +
         id(RLX_EMU_BLOCK_DIM, 0) *
             (id(RLX_EMU_THREAD_ID, 1) + id(RLX_EMU_BLOCK_DIM, 1) * id(RLX_EMU_THREAD_ID, 2));
}
template <typename T> T load(const T *p) {
  return __rlx_emu_access(p, sizeof(T), RLX_EMU_READ) ? *p : T();
}
template <typename T> void store(T *p, T v) {
  if (__rlx_emu_access(p, sizeof(T), RLX_EMU_WRITE))
    *p = v;
}
template <typename T> T *param(void **params, unsigned i) { return *static_cast<T **>(params[i]); }
template <typename T> T scalar(void **params, unsigned i) { return *static_cast<T *>(params[i]); }
template <typename T> T *sharedParam(void **params, unsigned i) {
  return static_cast<T *>(*static_cast<void **>(params[i]));
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

/// Registers host buffers for one test and unregisters them at the end.
struct Buffers {
  std::vector<const void *> bases;
  void add(const void *p, uint64_t bytes, const char *name) {
    ASSERT_EQ(rlx_emu_register_buffer(p, bytes, name), 0);
    bases.push_back(p);
  }
  ~Buffers() {
    for (const void *p : bases)
      rlx_emu_unregister_buffer(p);
  }
};

int launch(const rlx_emu_kernel &k, std::vector<uint32_t> grid, std::vector<uint32_t> block,
           std::vector<void *> params, uint64_t dynamicShared = 0) {
  return rlx_emu_launch(&k, grid.data(), block.data(), dynamicShared, params.data());
}

// Block-wide tree reduction: params in, out, then the shared buffer.
void reduceKernel(void **params) {
  const int32_t *in = param<int32_t>(params, 0);
  int32_t *out = param<int32_t>(params, 1);
  int32_t *sh = sharedParam<int32_t>(params, 2);
  uint32_t t = id(RLX_EMU_THREAD_ID), b = id(RLX_EMU_BLOCK_ID), n = id(RLX_EMU_BLOCK_DIM);
  store(&sh[t], load(&in[b * n + t]));
  __rlx_emu_barrier();
  for (uint32_t s = n / 2; s > 0; s >>= 1) {
    if (t < s)
      store(&sh[t], load(&sh[t]) + load(&sh[t + s]));
    __rlx_emu_barrier();
  }
  if (t == 0)
    store(&out[b], load(&sh[0]));
}

void checkReduction(uint32_t threads, uint32_t blocks) {
  std::vector<int32_t> in(threads * blocks), out(blocks, -1);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<int32_t>(i % 97) - 40;
  Buffers bufs;
  bufs.add(in.data(), in.size() * 4, "in");
  bufs.add(out.data(), out.size() * 4, "out");
  rlx_emu_shared sh = {threads * 4ull, 16};
  rlx_emu_kernel k = {"reduce", &reduceKernel, 2, &sh, 1};
  int32_t *inP = in.data(), *outP = out.data();
  ASSERT_EQ(launch(k, {blocks, 1, 1}, {threads, 1, 1}, {&inP, &outP}), 0) << rlx_emu_last_report();
  EXPECT_STREQ(rlx_emu_last_report(), "");
  for (uint32_t b = 0; b < blocks; ++b) {
    int32_t expect = 0;
    for (uint32_t t = 0; t < threads; ++t)
      expect += in[b * threads + t];
    EXPECT_EQ(out[b], expect) << "block " << b;
  }
}

TEST(EmulatorLaunch, SharedTreeReduction) { checkReduction(256, 5); }

TEST(EmulatorLaunch, ThousandTwentyFourThreadBlocks) { checkReduction(1024, 2); }

void warpSumKernel(void **params) {
  uint32_t *out = param<uint32_t>(params, 0);
  uint32_t t = linearTid();
  uint32_t v = t + 1;
  for (uint32_t off = 16; off; off >>= 1)
    v += static_cast<uint32_t>(__rlx_emu_shuffle(RLX_EMU_SHFL_XOR, v, off, 32));
  store(&out[t], v);
}

TEST(EmulatorLaunch, WarpXorReduction) {
  std::vector<uint32_t> out(64, 0);
  Buffers bufs;
  bufs.add(out.data(), out.size() * 4, "out");
  rlx_emu_kernel k = {"warp_sum", &warpSumKernel, 1, nullptr, 0};
  uint32_t *outP = out.data();
  ASSERT_EQ(launch(k, {1, 1, 1}, {16, 4, 1}, {&outP}), 0) << rlx_emu_last_report();
  for (uint32_t t = 0; t < 32; ++t)
    EXPECT_EQ(out[t], 528u) << t;    // 1 + ... + 32
  for (uint32_t t = 32; t < 64; ++t)
    EXPECT_EQ(out[t], 1552u) << t;   // 33 + ... + 64
}

// Every lane shuffles a = 10 * lane with the (mode, b, c, mask) of params.
void shflTableKernel(void **params) {
  uint64_t *out = param<uint64_t>(params, 0);
  uint32_t mode = scalar<uint32_t>(params, 1), b = scalar<uint32_t>(params, 2);
  uint32_t c = scalar<uint32_t>(params, 3), mask = scalar<uint32_t>(params, 4);
  uint32_t useShuffle = scalar<uint32_t>(params, 5);
  uint32_t lane = id(RLX_EMU_LANE_ID);
  uint64_t r = useShuffle ? __rlx_emu_shuffle(mode, 10 * lane, b, c)
                          : __rlx_emu_shfl_sync(mode, 10 * lane, b, c, mask);
  store(&out[linearTid()], r);
}

/// Runs shflTableKernel on `threads` lanes; returns the (d, p) pairs.
std::vector<std::pair<uint32_t, bool>> shflTable(uint32_t threads, uint32_t mode, uint32_t b,
                                                 uint32_t c, uint32_t mask, uint32_t useShuffle,
                                                 int expectRc = 0) {
  std::vector<uint64_t> out(threads, ~0ull);
  Buffers bufs;
  bufs.add(out.data(), out.size() * 8, "out");
  rlx_emu_kernel k = {"shfl_table", &shflTableKernel, 6, nullptr, 0};
  uint64_t *outP = out.data();
  EXPECT_EQ(launch(k, {1, 1, 1}, {threads, 1, 1}, {&outP, &mode, &b, &c, &mask, &useShuffle}),
            expectRc)
      << rlx_emu_last_report();
  std::vector<std::pair<uint32_t, bool>> r;
  for (uint64_t v : out)
    r.push_back({static_cast<uint32_t>(v), (v >> 32) != 0});
  return r;
}

TEST(EmulatorLaunch, ShflUpDownIdxTables) {
  auto down = shflTable(32, RLX_EMU_SHFL_DOWN, 3, 0x1f, ~0u, 0);
  for (uint32_t l = 0; l < 32; ++l) {
    EXPECT_EQ(down[l].first, l + 3 <= 31 ? 10 * (l + 3) : 10 * l) << l;
    EXPECT_EQ(down[l].second, l + 3 <= 31) << l;
  }
  auto up = shflTable(32, RLX_EMU_SHFL_UP, 2, 0, ~0u, 0);
  for (uint32_t l = 0; l < 32; ++l) {
    EXPECT_EQ(up[l].first, l >= 2 ? 10 * (l - 2) : 10 * l) << l;
    EXPECT_EQ(up[l].second, l >= 2) << l;
  }
  auto idx = shflTable(32, RLX_EMU_SHFL_IDX, 5, 0x1f, ~0u, 0);
  for (uint32_t l = 0; l < 32; ++l)
    EXPECT_EQ(idx[l], std::make_pair(50u, true)) << l;
  // Segmented idx (width 8): every lane reads lane 2 of its segment.
  auto seg = shflTable(32, RLX_EMU_SHFL_IDX, 2, 0x181f, ~0u, 0);
  for (uint32_t l = 0; l < 32; ++l)
    EXPECT_EQ(seg[l].first, 10 * ((l & 24) | 2)) << l;
  // gpu.shuffle width 8 on an 8-thread block: down 1 (lane 7 keeps its own)
  // and up 1 (upstream's c = 24 puts every source out of range).
  auto down8 = shflTable(8, RLX_EMU_SHFL_DOWN, 1, 8, 0, 1);
  for (uint32_t l = 0; l < 8; ++l)
    EXPECT_EQ(down8[l], std::make_pair(l < 7 ? 10 * (l + 1) : 10 * l, l < 7)) << l;
  auto up8 = shflTable(8, RLX_EMU_SHFL_UP, 1, 8, 0, 1);
  for (uint32_t l = 0; l < 8; ++l)
    EXPECT_EQ(up8[l], std::make_pair(10 * l, false)) << l;
}

TEST(EmulatorLaunch, ShflFromMissingLaneIsReported) {
  // 16 threads, xor 16 at width 32: the sources do not exist.
  auto r = shflTable(16, RLX_EMU_SHFL_XOR, 16, 32, 0, 1, 1);
  EXPECT_EQ(r[3].first, 30u);
  std::string rep = rlx_emu_last_report();
  EXPECT_TRUE(contains(rep, "kernel 'shfl_table' block (0,0,0) thread (0,0,0): shfl.sync.bfly"))
      << rep;
  EXPECT_TRUE(contains(rep, "reads lane 16, which does not exist")) << rep;
  // A lane outside its own membermask.
  shflTable(32, RLX_EMU_SHFL_IDX, 0, 0x1f, 0xffffu, 0, 1);
  rep = rlx_emu_last_report();
  EXPECT_TRUE(contains(rep, "thread (16,0,0): shfl.sync.idx by lane 16, which is not in its "
                            "membermask 0x0000ffff"))
      << rep;
}

void ballotKernel(void **params) {
  uint32_t *out = param<uint32_t>(params, 0);
  uint32_t lane = id(RLX_EMU_LANE_ID);
  uint32_t r = lane < 16 ? __rlx_emu_vote_sync(3, lane & 1, 0x0000ffffu)
                         : __rlx_emu_vote_sync(3, lane % 4 == 0, 0xffff0000u);
  uint32_t any = __rlx_emu_vote_sync(1, lane == 31, ~0u);
  uint32_t all = __rlx_emu_vote_sync(0, lane != 31, ~0u);
  store(&out[lane], r);
  store(&out[32 + lane], any | all << 1);
}

TEST(EmulatorLaunch, VotesWithPartialMasks) {
  std::vector<uint32_t> out(64, 7);
  Buffers bufs;
  bufs.add(out.data(), out.size() * 4, "out");
  rlx_emu_kernel k = {"ballot", &ballotKernel, 1, nullptr, 0};
  uint32_t *outP = out.data();
  ASSERT_EQ(launch(k, {1, 1, 1}, {32, 1, 1}, {&outP}), 0) << rlx_emu_last_report();
  for (uint32_t l = 0; l < 32; ++l) {
    EXPECT_EQ(out[l], l < 16 ? 0x0000aaaau : 0x11110000u) << l;
    EXPECT_EQ(out[32 + l], 1u) << l; // any = 1, all = 0
  }
}

void oobKernel(void **params) {
  float *out = param<float>(params, 0);
  uint32_t t = linearTid();
  store(&out[t], static_cast<float>(t));
}

TEST(EmulatorLaunch, GlobalOutOfBoundsWrite) {
  std::vector<float> host(20, -1.0f);
  Buffers bufs;
  bufs.add(host.data(), 16 * sizeof(float), "out");
  rlx_emu_kernel k = {"oob", &oobKernel, 1, nullptr, 0};
  float *outP = host.data();
  EXPECT_NE(launch(k, {1, 1, 1}, {20, 1, 1}, {&outP}), 0);
  std::string rep = rlx_emu_last_report();
  EXPECT_TRUE(contains(rep, "kernel 'oob' block (0,0,0) thread (16,0,0): out-of-bounds write of "
                            "4 bytes at "))
      << rep;
  EXPECT_TRUE(contains(rep, "not inside any buffer; nearest: offset 64 of buffer 'out' (64 "
                            "bytes), 0 bytes past its end"))
      << rep;
  EXPECT_TRUE(contains(rep, "thread (19,0,0)")) << rep;
  EXPECT_FALSE(contains(rep, "thread (15,0,0)")) << rep;
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(host[i], static_cast<float>(i));
  for (int i = 16; i < 20; ++i)
    EXPECT_EQ(host[i], -1.0f) << "host memory past the end was written";
}

TEST(EmulatorLaunch, FindingsAreCapped) {
  std::vector<float> host(64, -1.0f);
  Buffers bufs;
  bufs.add(host.data(), 16 * sizeof(float), "out");
  rlx_emu_kernel k = {"oob", &oobKernel, 1, nullptr, 0};
  float *outP = host.data();
  EXPECT_NE(launch(k, {1, 1, 1}, {64, 1, 1}, {&outP}), 0);
  std::string rep = rlx_emu_last_report();
  size_t lines = 0;
  for (char ch : rep)
    lines += ch == '\n';
  EXPECT_EQ(lines, 21u) << rep; // 20 findings and the summary
  EXPECT_TRUE(contains(rep, "... and 28 more findings\n")) << rep;
  EXPECT_EQ(host[63], -1.0f);
}

TEST(EmulatorLaunch, UncheckedOptionsSkipTheChecks) {
  std::vector<float> host(20, -1.0f);
  Buffers bufs;
  bufs.add(host.data(), 16 * sizeof(float), "out");
  rlx_emu_kernel k = {"oob", &oobKernel, 1, nullptr, 0};
  float *outP = host.data();
  rlx_emu_set_options(0);
  int rc = launch(k, {1, 1, 1}, {20, 1, 1}, {&outP});
  rlx_emu_set_options(RLX_EMU_CHECK_ALL);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(host[19], 19.0f); // no check, so the (host-owned) bytes were written
}

// Thread 0 writes shared word 0; then (maybe after a barrier) thread 1
// writes it (mode 0), reads it (mode 1); mode 2: thread 0 reads, thread 1 writes;
// mode 3: every thread adds 1 atomically (thread 0's write is then an atomic
// too); mode 4: thread 0 writes, thread 1 adds atomically.
// Each block has its own two output words (blocks sharing one would race).
void raceKernel(void **params) {
  int32_t *out = param<int32_t>(params, 0) + 2 * id(RLX_EMU_BLOCK_ID);
  uint32_t withBarrier = scalar<uint32_t>(params, 1), mode = scalar<uint32_t>(params, 2);
  int32_t *sh = sharedParam<int32_t>(params, 3);
  uint32_t t = linearTid();
  auto atomicAdd = [](int32_t *p, int32_t v) {
    if (__rlx_emu_access(p, sizeof(int32_t), RLX_EMU_WRITE | RLX_EMU_ATOMIC))
      *p += v;
  };
  if (mode == 3) {
    atomicAdd(&sh[1], 1);
    if (withBarrier)
      __rlx_emu_barrier();
    if (t == 0)
      store(&out[0], load(&sh[1]));
    return;
  }
  if (t == 0) {
    if (mode == 2)
      store(&out[0], load(&sh[1]));
    else
      store(&sh[1], 5);
  }
  if (withBarrier)
    __rlx_emu_barrier();
  if (t == 1) {
    if (mode == 1)
      store(&out[1], load(&sh[1]));
    else if (mode == 4)
      atomicAdd(&sh[1], 1);
    else
      store(&sh[1], 6);
  }
}

std::string runRace(uint32_t withBarrier, uint32_t mode, int expectRc) {
  std::vector<int32_t> out(4, 0);
  Buffers bufs;
  bufs.add(out.data(), 16, "out");
  rlx_emu_shared sh[2] = {{64, 16}, {16, 16}};
  rlx_emu_kernel k = {"race", &raceKernel, 3, sh, 2};
  int32_t *outP = out.data();
  EXPECT_EQ(launch(k, {2, 1, 1}, {32, 1, 1}, {&outP, &withBarrier, &mode}), expectRc)
      << rlx_emu_last_report();
  return rlx_emu_last_report();
}

TEST(EmulatorLaunch, SharedMemoryRace) {
  std::string rep = runRace(0, 0, 1);
  EXPECT_TRUE(contains(rep, "kernel 'race' block (0,0,0) thread (1,0,0): data race on shared "
                            "buffer #0 at byte offset 4"))
      << rep;
  EXPECT_TRUE(contains(rep, "write by thread (1,0,0) (linear 1) and write by thread (0,0,0) "
                            "(linear 0)"))
      << rep;
  // Once per (kernel, buffer): block 1 repeats the race without a new line.
  EXPECT_FALSE(contains(rep, "block (1,0,0)")) << rep;
  EXPECT_EQ(runRace(1, 0, 0), "");
}

TEST(EmulatorLaunch, MissingBarrierIsARace) {
  std::string rep = runRace(0, 1, 1);
  EXPECT_TRUE(contains(rep, "read by thread (1,0,0) (linear 1) and write by thread (0,0,0)"))
      << rep;
  rep = runRace(0, 2, 1);
  EXPECT_TRUE(contains(rep, "write by thread (1,0,0) (linear 1) and read by thread (0,0,0)"))
      << rep;
  EXPECT_EQ(runRace(1, 1, 0), "");
  EXPECT_EQ(runRace(1, 2, 0), "");
}

TEST(EmulatorLaunch, AtomicsDoNotRaceWithEachOther) {
  // 32 threads add to one word: no race; the barrier orders the read.
  EXPECT_EQ(runRace(1, 3, 0), "");
  // A plain write and another thread's atomic with no barrier between.
  std::string rep = runRace(0, 4, 1);
  EXPECT_TRUE(contains(rep, "read by thread (1,0,0) (linear 1) and write by thread (0,0,0)"))
      << rep;
  EXPECT_EQ(runRace(1, 4, 0), "");
}

void sharedOobKernel(void **params) {
  int32_t *sh = sharedParam<int32_t>(params, 0);
  uint32_t t = linearTid();
  store(&sh[t], 1); // 16 words of shared memory, 20 threads
}

TEST(EmulatorLaunch, SharedOutOfBounds) {
  rlx_emu_shared sh = {64, 16};
  rlx_emu_kernel k = {"shared_oob", &sharedOobKernel, 0, &sh, 1};
  EXPECT_NE(launch(k, {1, 1, 1}, {20, 1, 1}, {}), 0);
  std::string rep = rlx_emu_last_report();
  EXPECT_TRUE(contains(rep, "thread (16,0,0): out-of-bounds write of 4 bytes at ")) << rep;
  EXPECT_TRUE(contains(rep, "of shared buffer #0 (64 bytes)")) << rep;
}

void divergentKernel(void **params) {
  (void)params;
  if (linearTid() >= 32)
    return;
  __rlx_emu_barrier();
}

TEST(EmulatorLaunch, BarrierDivergence) {
  rlx_emu_kernel k = {"diverge", &divergentKernel, 0, nullptr, 0};
  EXPECT_NE(launch(k, {3, 1, 1}, {64, 1, 1}, {}), 0);
  std::string rep = rlx_emu_last_report();
  EXPECT_TRUE(contains(rep, "kernel 'diverge' block (0,0,0) thread (0,0,0): barrier divergence"))
      << rep;
  EXPECT_TRUE(contains(rep, "threads 0-31 wait at the barrier; threads 32-63 have exited")) << rep;
  EXPECT_FALSE(contains(rep, "block (1,0,0)")) << rep; // the launch stopped
  // The next launch starts from scratch.
  checkReduction(256, 2);
}

void mixedKernel(void **params) {
  (void)params;
  if (linearTid() == 0)
    __rlx_emu_barrier();
  else
    __rlx_emu_shuffle(RLX_EMU_SHFL_XOR, 1, 1, 32);
}

TEST(EmulatorLaunch, DeadlockAtDifferentSyncPoints) {
  rlx_emu_kernel k = {"mixed", &mixedKernel, 0, nullptr, 0};
  EXPECT_NE(launch(k, {1, 1, 1}, {32, 1, 1}, {}), 0);
  std::string rep = rlx_emu_last_report();
  EXPECT_TRUE(contains(rep, "deadlock: no thread can progress")) << rep;
  EXPECT_TRUE(contains(rep, "thread 0 wait at the barrier; threads 1-31 wait at shfl.sync.bfly "
                            "(membermask 0xffffffff)"))
      << rep;
}

// Named barriers (bar.sync / bar.arrive id, count): warp 0 produces into
// shared memory and arrives on barrier 1; warp 1 syncs on it and reads. The
// completed barrier orders the accesses (no race) and the values arrive; a
// second round reuses the barrier. With mode 1, warp 1 syncs with another
// count than warp 0 arrived with (a finding); with mode 2, warp 0 never
// arrives (a deadlock naming the bar.sync).
void namedBarrierKernel(void **params) {
  int32_t *out = param<int32_t>(params, 0);
  uint32_t mode = *static_cast<uint32_t *>(params[1]);
  int32_t *sh = sharedParam<int32_t>(params, 2);
  uint32_t t = linearTid();
  for (int32_t round = 0; round < 2; ++round) {
    if (t < 32) {
      store(&sh[t], 10 * round + static_cast<int32_t>(t));
      if (mode != 2)
        __rlx_emu_named_barrier(1, 64, 0);
      __rlx_emu_named_barrier(2, 64, 1); // warp 1 is done reading
    } else {
      __rlx_emu_named_barrier(1, mode == 1 ? 32 : 64, 1);
      store(&out[32 * round + (t - 32)], load(&sh[63 - t]));
      __rlx_emu_named_barrier(2, 64, 0);
    }
  }
}

std::string runNamedBarrier(uint32_t mode, int expectRc, std::vector<int32_t> &out) {
  out.assign(64, -1);
  Buffers bufs;
  bufs.add(out.data(), out.size() * 4, "out");
  rlx_emu_shared sh[1] = {{32 * 4, 16}};
  rlx_emu_kernel k = {"named", &namedBarrierKernel, 2, sh, 1};
  int32_t *outP = out.data();
  EXPECT_EQ(launch(k, {1, 1, 1}, {64, 1, 1}, {&outP, &mode}), expectRc) << rlx_emu_last_report();
  return rlx_emu_last_report();
}

TEST(EmulatorLaunch, NamedBarriersOrderProducerAndConsumer) {
  std::vector<int32_t> out;
  EXPECT_EQ(runNamedBarrier(0, 0, out), "");
  for (int32_t round = 0; round < 2; ++round)
    for (int32_t i = 0; i < 32; ++i)
      EXPECT_EQ(out[32 * round + i], 10 * round + 31 - i) << round << " " << i;
  std::string rep = runNamedBarrier(1, 1, out);
  EXPECT_TRUE(contains(rep, "bar.sync 1, 32 while the barrier's current phase counts 64 "
                            "threads"))
      << rep;
  rep = runNamedBarrier(2, 1, out);
  EXPECT_TRUE(contains(rep, "deadlock: no thread can progress")) << rep;
  EXPECT_TRUE(contains(rep, "threads 0-31 wait at bar.sync 2, 64; threads 32-63 wait at bar.sync "
                            "1, 64"))
      << rep;
}

void badNamedBarrierKernel(void **params) {
  (void)params;
  __rlx_emu_named_barrier(16, 32, 1);
}

TEST(EmulatorLaunch, NamedBarrierBadIdIsAFinding) {
  rlx_emu_kernel k = {"badbar", &badNamedBarrierKernel, 0, nullptr, 0};
  EXPECT_NE(launch(k, {1, 1, 1}, {32, 1, 1}, {}), 0);
  std::string rep = rlx_emu_last_report();
  EXPECT_TRUE(contains(rep, "bar.sync 16, 32: the id must be 0-15")) << rep;
}

void exitedLaneKernel(void **params) {
  (void)params;
  uint32_t lane = id(RLX_EMU_LANE_ID);
  if (lane < 16)
    return;
  if (lane < 24)
    __rlx_emu_shuffle(RLX_EMU_SHFL_DOWN, lane, 1, 32);
  else
    __rlx_emu_vote_sync(1, 1, ~0u);
}

TEST(EmulatorLaunch, CollectiveWithExitedLanes) {
  rlx_emu_kernel k = {"exited", &exitedLaneKernel, 0, nullptr, 0};
  EXPECT_NE(launch(k, {1, 1, 1}, {32, 1, 1}, {}), 0);
  std::string rep = rlx_emu_last_report();
  EXPECT_TRUE(contains(rep, "kernel 'exited' block (0,0,0) thread (16,0,0): deadlock")) << rep;
  EXPECT_TRUE(contains(rep, "threads 0-15 have exited; threads 16-23 wait at shfl.sync.down "
                            "(membermask 0xffffffff); threads 24-31 wait at vote.sync.any "
                            "(membermask 0xffffffff)"))
      << rep;
}

void idsKernel(void **params) {
  uint32_t *out = param<uint32_t>(params, 0);
  uint32_t t = linearTid();
  uint32_t blockLinear =
      id(RLX_EMU_BLOCK_ID, 0) +
      id(RLX_EMU_GRID_DIM, 0) * (id(RLX_EMU_BLOCK_ID, 1) + id(RLX_EMU_GRID_DIM, 1) * id(RLX_EMU_BLOCK_ID, 2));
  uint32_t threads = id(RLX_EMU_BLOCK_DIM, 0) * id(RLX_EMU_BLOCK_DIM, 1) * id(RLX_EMU_BLOCK_DIM, 2);
  uint32_t *rec = out + (blockLinear * threads + t) * 13;
  for (uint32_t kind = 0; kind < 4; ++kind)
    for (uint32_t d = 0; d < 3; ++d)
      store(&rec[kind * 3 + d], id(kind, d));
  uint32_t local = 1; // private memory is always fine
  store(&rec[12], id(RLX_EMU_LANE_ID) + load(&local) - 1);
}

TEST(EmulatorLaunch, ThreeDimensionalIds) {
  const uint32_t bx = 4, by = 3, bz = 5, gx = 2, gy = 3, gz = 2;
  const uint32_t threads = bx * by * bz, blocks = gx * gy * gz;
  std::vector<uint32_t> out(threads * blocks * 13, ~0u);
  Buffers bufs;
  bufs.add(out.data(), out.size() * 4, "out");
  rlx_emu_kernel k = {"ids", &idsKernel, 1, nullptr, 0};
  uint32_t *outP = out.data();
  ASSERT_EQ(launch(k, {gx, gy, gz}, {bx, by, bz}, {&outP}), 0) << rlx_emu_last_report();
  for (uint32_t z = 0; z < gz; ++z)
    for (uint32_t y = 0; y < gy; ++y)
      for (uint32_t x = 0; x < gx; ++x)
        for (uint32_t tz = 0; tz < bz; ++tz)
          for (uint32_t ty = 0; ty < by; ++ty)
            for (uint32_t tx = 0; tx < bx; ++tx) {
              uint32_t t = tx + bx * (ty + by * tz);
              const uint32_t *r = &out[((x + gx * (y + gy * z)) * threads + t) * 13];
              uint32_t expect[13] = {tx, ty, tz, x, y, z, bx, by, bz, gx, gy, gz, t % 32};
              for (int i = 0; i < 13; ++i)
                ASSERT_EQ(r[i], expect[i]) << "block " << x << y << z << " thread " << t
                                           << " field " << i;
            }
}

void nanKernel(void **params) {
  uint32_t *out = param<uint32_t>(params, 0);
  float *sh = sharedParam<float>(params, 1);
  float *dyn = static_cast<float *>(__rlx_emu_dynamic_shared());
  uint32_t t = linearTid(), b = id(RLX_EMU_BLOCK_ID);
  float s = load(&sh[t]), d = load(&dyn[t]);
  uint32_t bits;
  std::memcpy(&bits, &s, 4);
  store(&out[b * 64 + t], (std::isnan(s) && std::isnan(d) ? 1u : 0u) | (bits == 0xffffffffu ? 2u : 0u));
  store(&sh[t], 1.0f);
  store(&dyn[t], 2.0f);
}

TEST(EmulatorLaunch, SharedMemoryStartsAsNaN) {
  std::vector<uint32_t> out(128, 0);
  Buffers bufs;
  bufs.add(out.data(), out.size() * 4, "out");
  rlx_emu_shared sh = {64 * 4, 64};
  rlx_emu_kernel k = {"nan", &nanKernel, 1, &sh, 1};
  uint32_t *outP = out.data();
  ASSERT_EQ(launch(k, {2, 1, 1}, {64, 1, 1}, {&outP}, 64 * 4), 0) << rlx_emu_last_report();
  for (uint32_t i = 0; i < 128; ++i)
    EXPECT_EQ(out[i], 3u) << i; // block 1 sees NaN again, not block 0's values
}

TEST(EmulatorLaunch, BadConfigurations) {
  rlx_emu_kernel k = {"cfg", &divergentKernel, 0, nullptr, 0};
  EXPECT_NE(launch(k, {1, 1, 1}, {1025, 1, 1}, {}), 0);
  EXPECT_TRUE(contains(rlx_emu_last_report(), "kernel 'cfg': bad launch: block dimension x = "
                                              "1025 exceeds 1024"))
      << rlx_emu_last_report();
  EXPECT_NE(launch(k, {1, 1, 1}, {64, 32, 1}, {}), 0);
  EXPECT_TRUE(contains(rlx_emu_last_report(), "2048 threads per block exceed 1024"))
      << rlx_emu_last_report();
  EXPECT_NE(launch(k, {1, 0, 1}, {32, 1, 1}, {}), 0);
  EXPECT_TRUE(contains(rlx_emu_last_report(), "bad launch: zero grid dimension y"))
      << rlx_emu_last_report();
  EXPECT_NE(launch(k, {1, 1, 1}, {32, 1, 0}, {}), 0);
  EXPECT_TRUE(contains(rlx_emu_last_report(), "bad launch: zero block dimension z"))
      << rlx_emu_last_report();
  rlx_emu_kernel none = {"none", nullptr, 0, nullptr, 0};
  EXPECT_NE(launch(none, {1, 1, 1}, {1, 1, 1}, {}), 0);
  // A good launch after bad ones.
  EXPECT_EQ(launch(k, {1, 1, 1}, {1, 1, 1}, {}), 0);
  EXPECT_STREQ(rlx_emu_last_report(), "");
}

TEST(EmulatorLaunch, RegistryRejectsOverlaps) {
  std::vector<char> mem(256);
  Buffers bufs;
  bufs.add(mem.data(), 128, "a");
  EXPECT_NE(rlx_emu_register_buffer(mem.data() + 64, 16, "inside"), 0);
  EXPECT_NE(rlx_emu_register_buffer(mem.data() + 127, 1, "last byte"), 0);
  EXPECT_EQ(rlx_emu_register_buffer(mem.data() + 128, 128, "b"), 0);
  rlx_emu_unregister_buffer(mem.data() + 128);
}

} // namespace
