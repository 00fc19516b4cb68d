//===- BufferPlan.cpp - Offsets in one arena from buffer lifetimes --------===//

#include "RLX/Dialect/LIR/Transforms/BufferPlan.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>

using namespace mlir::rlx::lir;

int64_t mlir::rlx::lir::alignUp(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

int64_t mlir::rlx::lir::lifetimeLowerBound(const std::vector<PlannedBuffer> &buffers) {
  // Sweep: +size at start, -size after end.
  std::map<int64_t, int64_t> delta;
  for (const PlannedBuffer &b : buffers) {
    delta[b.start] += b.size;
    delta[b.end + 1] -= b.size;
  }
  int64_t live = 0, best = 0;
  for (auto &[pos, d] : delta) {
    live += d;
    best = std::max(best, live);
  }
  return best;
}

namespace {

bool overlapsInTime(const PlannedBuffer &a, const PlannedBuffer &b) {
  return a.start <= b.end && b.start <= a.end;
}

/// The offset for `b` among `placed` (indices into `bufs`): best fit
/// (smallest gap that holds it, lowest offset on ties) or first fit.
int64_t findOffset(const std::vector<PlannedBuffer> &bufs, const std::vector<size_t> &placed,
                   const PlannedBuffer &b, bool bestFit) {
  std::vector<std::pair<int64_t, int64_t>> busy; // [begin, end) of conflicting buffers
  for (size_t i : placed)
    if (overlapsInTime(bufs[i], b))
      busy.push_back({bufs[i].offset, bufs[i].offset + bufs[i].size});
  std::sort(busy.begin(), busy.end());
  int64_t cursor = 0, bestOffset = -1, bestGap = -1;
  for (auto [begin, end] : busy) {
    if (begin > cursor) {
      int64_t gap = begin - cursor;
      if (gap >= b.size) {
        if (!bestFit)
          return cursor;
        if (bestOffset < 0 || gap < bestGap) {
          bestOffset = cursor;
          bestGap = gap;
        }
      }
    }
    cursor = std::max(cursor, end);
  }
  return bestOffset >= 0 ? bestOffset : cursor;
}

int64_t placeInOrder(std::vector<PlannedBuffer> &bufs, const std::vector<size_t> &order,
                     bool bestFit) {
  std::vector<size_t> placed;
  int64_t arena = 0;
  for (size_t i : order) {
    bufs[i].offset = findOffset(bufs, placed, bufs[i], bestFit);
    arena = std::max(arena, bufs[i].offset + bufs[i].size);
    placed.push_back(i);
  }
  return arena;
}

using Less = std::function<bool(const PlannedBuffer &, const PlannedBuffer &)>;

} // namespace

PlanSummary mlir::rlx::lir::planArena(std::vector<PlannedBuffer> &buffers, int64_t alignment) {
  PlanSummary summary;
  for (PlannedBuffer &b : buffers) {
    b.size = alignUp(b.size, alignment);
    summary.sumBytes += b.size;
  }
  summary.lowerBoundBytes = lifetimeLowerBound(buffers);
  if (buffers.empty())
    return summary;
  auto life = [](const PlannedBuffer &b) { return b.end - b.start + 1; };
  const std::vector<std::pair<const char *, Less>> orders = {
      {"size", [](auto &a, auto &b) { return a.size != b.size ? a.size > b.size : a.start < b.start; }},
      {"start", [](auto &a, auto &b) { return a.start != b.start ? a.start < b.start : a.size > b.size; }},
      {"lifetime", [&](auto &a, auto &b) {
         return life(a) != life(b) ? life(a) > life(b) : a.size > b.size;
       }},
      {"size-x-lifetime", [&](auto &a, auto &b) {
         return a.size * life(a) != b.size * life(b) ? a.size * life(a) > b.size * life(b)
                                                     : a.start < b.start;
       }},
      // Ties in program order: with first fit, exactly the original RLX planner.
      {"size-stable", [](auto &a, auto &b) { return a.size > b.size; }},
  };
  std::vector<int64_t> bestOffsets;
  summary.arenaBytes = -1;
  for (bool bestFit : {true, false}) {
    for (auto &[name, lessOrder] : orders) {
      auto &less = lessOrder;
      std::vector<size_t> order(buffers.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t x, size_t y) { return less(buffers[x], buffers[y]); });
      int64_t arena = placeInOrder(buffers, order, bestFit);
      if (summary.arenaBytes < 0 || arena < summary.arenaBytes) {
        summary.arenaBytes = arena;
        summary.ordering = std::string(name) + (bestFit ? "" : " (first fit)");
        bestOffsets.clear();
        for (const PlannedBuffer &b : buffers)
          bestOffsets.push_back(b.offset);
      }
      if (summary.arenaBytes == summary.lowerBoundBytes)
        break;
    }
    if (summary.arenaBytes == summary.lowerBoundBytes)
      break;
  }
  for (size_t i = 0; i < buffers.size(); ++i)
    buffers[i].offset = bestOffsets[i];
  return summary;
}

PlanSummary mlir::rlx::lir::planArenaFirstFit(std::vector<PlannedBuffer> &buffers,
                                              int64_t alignment) {
  PlanSummary summary;
  for (PlannedBuffer &b : buffers) {
    b.size = alignUp(b.size, alignment);
    summary.sumBytes += b.size;
  }
  summary.lowerBoundBytes = lifetimeLowerBound(buffers);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return buffers[x].size > buffers[y].size; });
  summary.arenaBytes = placeInOrder(buffers, order, /*bestFit=*/false);
  summary.ordering = "size (first fit)";
  return summary;
}

std::string mlir::rlx::lir::checkPlacement(const std::vector<PlannedBuffer> &buffers,
                                           int64_t alignment) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PlannedBuffer &a = buffers[i];
    if (a.offset < 0 || a.offset % alignment != 0)
      return "buffer " + std::to_string(i) + " has offset " + std::to_string(a.offset);
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const PlannedBuffer &b = buffers[j];
      if (overlapsInTime(a, b) && a.offset < b.offset + b.size && b.offset < a.offset + a.size)
        return "buffers " + std::to_string(i) + " and " + std::to_string(j) + " overlap";
    }
  }
  return "";
}
