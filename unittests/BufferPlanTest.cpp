//===- BufferPlanTest.cpp - The arena placement core ----------------------===//

#include "RLX/Dialect/LIR/Transforms/BufferPlan.h"

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
  // A hole of 128 bytes at offset 0 and one of 64 at offset 192 open up at
  // time 2; the 64-byte buffer should take the small hole and leave the
  // large one for the 128-byte buffer.
  std::vector<PlannedBuffer> bufs = {
      {128, 0, 1},  // dies at 1: hole [0, 128)
      {64, 0, 5},   // [128, 192) stays
      {64, 0, 1},   // dies at 1: hole [192, 256)
      {64, 0, 5},   // [256, 320) stays
      {64, 2, 5},   // best fit: 192
      {128, 3, 5},  // then fits at 0
  };
  std::vector<PlannedBuffer> firstFit = bufs;
  PlanSummary best = planArena(bufs, 64);
  PlanSummary first = planArenaFirstFit(firstFit, 64);
  EXPECT_EQ(checkPlacement(bufs, 64), "");
  EXPECT_EQ(checkPlacement(firstFit, 64), "");
  EXPECT_EQ(best.arenaBytes, best.lowerBoundBytes);
  EXPECT_GE(first.arenaBytes, best.arenaBytes);
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
