//===- BufferPlanTest.cpp - The arena placement core ----------------------===//

#include "RLX/Dialect/LIR/Transforms/BufferPlan.h"

#include <algorithm>

#include "gtest/gtest.h"

#include <random>

using namespace mlir::rlx::lir;

TEST(BufferPlan, LowerBoundIsTheLargestLiveSum) {
  std::vector<PlannedBuffer> bufs = {{100, 0, 2}, {50, 1, 3}, {70, 3, 4}};
  // At 1..2: 150; at 3: 120; at 4: 70.
  EXPECT_EQ(lifetimeLowerBound(bufs), 150);
}

TEST(BufferPlan, ChainReusesBytes) {
  // B3: t1 [0,1], t2 [1,2], t3 [2,3], 512 bytes each.
  std::vector<PlannedBuffer> bufs = {{512, 0, 1}, {512, 1, 2}, {512, 2, 3}};
  PlanSummary s = planArena(bufs, 64);
  EXPECT_EQ(s.arenaBytes, 1024);
  EXPECT_EQ(s.lowerBoundBytes, 1024);
  EXPECT_EQ(s.sumBytes, 1536);
  EXPECT_EQ(bufs[0].offset, bufs[2].offset);
  EXPECT_EQ(checkPlacement(bufs, 64), "");
}

TEST(BufferPlan, SizesAreAligned) {
  std::vector<PlannedBuffer> bufs = {{10, 0, 0}, {10, 0, 0}};
  PlanSummary s = planArena(bufs, 64);
  EXPECT_EQ(s.arenaBytes, 128);
  EXPECT_EQ(bufs[0].offset % 64, 0);
  EXPECT_EQ(bufs[1].offset % 64, 0);
}

TEST(BufferPlan, BestFitBeatsFirstFit) {
  // Decreasing-size first fit (the original RLX planner) puts the second
  // 128-byte buffer at 128, above the first; the 64-byte one then fits at 0
  // but the last 128-byte buffer only at 192: 320 bytes. Placing the 64-byte
  // buffer over the first buffer's dead bytes at 0 and the last 128-byte one
  // over them too needs 256, the lower bound. (The test used to assert >= on
  // an input where first fit was already optimal.)
  std::vector<PlannedBuffer> bufs = {
      {128, 0, 1},
      {128, 1, 3},
      {64, 3, 5},
      {128, 4, 6},
  };
  // The lower bound computed here, not by the planner: live bytes per step.
  int64_t bound = 0;
  for (int64_t t = 0; t <= 6; ++t) {
    int64_t live = 0;
    for (const PlannedBuffer &b : bufs)
      live += b.start <= t && t <= b.end ? b.size : 0;
    bound = std::max(bound, live);
  }
  ASSERT_EQ(bound, 256);
  std::vector<PlannedBuffer> firstFit = bufs;
  PlanSummary best = planArena(bufs, 64);
  PlanSummary first = planArenaFirstFit(firstFit, 64);
  EXPECT_EQ(checkPlacement(bufs, 64), "");
  EXPECT_EQ(checkPlacement(firstFit, 64), "");
  EXPECT_EQ(first.arenaBytes, 320);
  EXPECT_EQ(best.arenaBytes, bound);
  EXPECT_EQ(best.lowerBoundBytes, bound);
}

TEST(BufferPlan, CheckerCatchesOverlap) {
  std::vector<PlannedBuffer> bufs = {{128, 0, 2, 0}, {128, 1, 3, 64}};
  EXPECT_NE(checkPlacement(bufs, 64), "");
  bufs[1].offset = 128;
  EXPECT_EQ(checkPlacement(bufs, 64), "");
  bufs[1].offset = 130;
  EXPECT_NE(checkPlacement(bufs, 64), "");
}

// Random interval sets: every plan is legal, at least the lower bound and
// never more than the sum of all buffers.
TEST(BufferPlan, RandomPlansAreLegal) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<PlannedBuffer> bufs;
    int n = 1 + rng() % 40;
    for (int i = 0; i < n; ++i) {
      int64_t start = rng() % 50, len = rng() % 10;
      bufs.push_back({int64_t(1 + rng() % 4096), start, start + len});
    }
    std::vector<PlannedBuffer> ff = bufs;
    PlanSummary s = planArena(bufs, 64);
    PlanSummary f = planArenaFirstFit(ff, 64);
    ASSERT_EQ(checkPlacement(bufs, 64), "") << "trial " << trial;
    ASSERT_EQ(checkPlacement(ff, 64), "") << "trial " << trial;
    ASSERT_GE(s.arenaBytes, s.lowerBoundBytes);
    ASSERT_LE(s.arenaBytes, s.sumBytes);
    ASSERT_LE(s.arenaBytes, f.arenaBytes) << "trial " << trial; // size order is one we try
  }
}
