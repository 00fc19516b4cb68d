//===- Clocks.cpp - Vector clocks for the shared-memory race checker -------===//
//
// Happens-before as the PTX memory model gives it to a block's threads: a
// thread's accesses are ordered before another's only through a chain of
// synchronizations. Each thread keeps a vector clock (its row of
// Launch::clocks, one entry per thread of the block); a release (arriving
// at a block or named barrier, bar.arrive, mbarrier.arrive) joins the
// thread's clock into the synchronization object and advances the thread's
// own entry; an acquire (leaving a bar.sync, a successful mbarrier wait)
// joins the object's clock into the thread's. Two accesses to a byte, one a
// write, by threads that no such chain orders are a race (Checker.cpp), so
// a race between two warpgroups shows whatever unrelated barriers the block
// passes in between.
//
// Rows are initialized when a block's thread first synchronizes or touches
// shared memory (kernels without either never pay for them).
//===----------------------------------------------------------------------===//

#include "State.h"

#include <algorithm>
#include <cstring>

namespace rlx::emu {

uint32_t *clockOf(Launch &l, uint32_t t) {
  const size_t n = l.numThreads;
  if (l.clocks.size() != n * n) {
    l.clocks.assign(n * n, 0);
    l.clockBlock.assign(n, 0);
  }
  uint32_t *row = l.clocks.data() + static_cast<size_t>(t) * n;
  if (l.clockBlock[t] != l.epoch) {
    std::memset(row, 0, n * sizeof(uint32_t));
    row[t] = 1;
    l.clockBlock[t] = l.epoch;
  }
  return row;
}

void clockRelease(Launch &l, std::vector<uint32_t> &into) {
  const uint32_t t = l.current;
  uint32_t *row = clockOf(l, t);
  if (into.size() != l.numThreads)
    into.assign(l.numThreads, 0);
  for (uint32_t u = 0; u < l.numThreads; ++u)
    into[u] = std::max(into[u], row[u]);
  ++row[t];
}

void clockAcquire(Launch &l, uint32_t t, const std::vector<uint32_t> &from) {
  if (from.empty())
    return;
  uint32_t *row = clockOf(l, t);
  for (uint32_t u = 0; u < l.numThreads && u < from.size(); ++u)
    row[u] = std::max(row[u], from[u]);
}

} // namespace rlx::emu
