//===- BufferPlan.h - Offsets in one arena from buffer lifetimes -*- C++ -*-===//
//
// The placement core of rlx-lir-plan-buffers, independent of the IR so that
// unit tests and benchmarks can feed it intervals directly.
//
// A buffer is live during the ops [start, end] (inclusive, positions in the
// schedule). Two buffers may share bytes only if their lifetimes are
// disjoint. The lower bound of any plan is the largest sum of (aligned)
// sizes live at one position.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_LIR_TRANSFORMS_BUFFERPLAN_H
#define RLX_DIALECT_LIR_TRANSFORMS_BUFFERPLAN_H

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::rlx::lir {

struct PlannedBuffer {
  int64_t size = 0;   ///< Bytes (rounded up to the alignment when planned).
  int64_t start = 0;  ///< First position where the buffer is live.
  int64_t end = 0;    ///< Last position (inclusive).
  int64_t offset = -1; ///< Result: byte offset in the arena.
};

struct PlanSummary {
  int64_t arenaBytes = 0;
  int64_t lowerBoundBytes = 0;
  int64_t sumBytes = 0;
  std::string ordering; ///< The placement order that won.
};

/// Rounds `bytes` up to a multiple of `alignment` (> 0).
int64_t alignUp(int64_t bytes, int64_t alignment);

/// Largest sum of sizes of buffers live at one position.
int64_t lifetimeLowerBound(const std::vector<PlannedBuffer> &buffers);

/// Places `buffers` (sizes are first rounded up to `alignment`) one at a time
/// in a gap among the lifetime-overlapping buffers already placed: best fit
/// (smallest gap, then lowest offset) in five orders (decreasing size, start,
/// lifetime, size × lifetime, size with ties in program order), then first
/// fit in the same orders, stopping at
/// the lower bound and keeping the smallest arena. Fills every `offset`.
/// Never worse than planArenaFirstFit, which is one of the candidates.
PlanSummary planArena(std::vector<PlannedBuffer> &buffers, int64_t alignment);

/// The original RLX planner, for comparison: decreasing size, the lowest
/// offset that fits (first fit), one order, no in-place reuse.
PlanSummary planArenaFirstFit(std::vector<PlannedBuffer> &buffers, int64_t alignment);

/// Empty when no two lifetime-overlapping buffers overlap in bytes and every
/// offset is aligned; otherwise a description of the first violation.
std::string checkPlacement(const std::vector<PlannedBuffer> &buffers, int64_t alignment);

} // namespace mlir::rlx::lir

#endif // RLX_DIALECT_LIR_TRANSFORMS_BUFFERPLAN_H
