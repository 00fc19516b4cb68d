//===- MBarrier.cpp - mbarrier objects in the emulator --------------------===//
//
// PTX ISA 8.x, "mbarrier": an 8-byte object in shared memory with a phase,
// an expected arrival count, the pending arrivals of the current phase and
// a transaction count (bytes that asynchronous copies such as TMA loads
// still have to deliver). The current phase completes when both its pending
// arrivals and its transaction count reach zero: the phase advances, the
// pending count is reset to the expected one. A wait names the phase it
// waits for by a state token (from arrive) or by its parity.
//
// The emulator keeps the state beside the shared memory (by address, per
// block; the 8 bytes themselves are not touched), so a kernel that uses an
// address it never initialized, or one outside shared memory, is a finding,
// and so is a use by another thread that no synchronization orders after
// the mbarrier.init (the vector clocks of Clocks.cpp).
// try_wait blocks the calling GPU thread until its phase completes: a wait
// that nothing can complete is then reported as a deadlock, never a hang.
// A completed phase starts a new shared-memory epoch for the race checker,
// as a block barrier does (accesses ordered by the mbarrier are not races;
// races across it are not reported either).
//===----------------------------------------------------------------------===//

#include "State.h"

#include <utility>

using namespace rlx::emu;

namespace {

/// test_wait polls of one thread before a wait counts as a deadlock.
constexpr uint32_t kMaxPolls = 1u << 20;

/// The shared buffer holding [a, a + n), or -1.
int sharedIndex(const Launch &l, uintptr_t a, uint64_t n) {
  for (size_t i = 0; i < l.shared.size(); ++i) {
    auto base = reinterpret_cast<uintptr_t>(l.shared[i].data);
    if (a >= base && a + n <= base + l.shared[i].bytes)
      return static_cast<int>(i);
  }
  return -1;
}

/// The state of the mbarrier at `bar` for `op`; null (after a finding) when
/// `bar` is not an 8-byte aligned shared-memory address, or when it was
/// never initialized (unless `init`).
MBarrier *lookup(Launch &l, const void *bar, const char *op, bool init = false) {
  Thread &t = l.self();
  auto a = reinterpret_cast<uintptr_t>(bar);
  if (a % 8 != 0 || sharedIndex(l, a, 8) < 0) {
    addFinding(l, &t, std::string(op) + " on " + hexAddress(a) +
                          (a % 8 ? ", which is not 8-byte aligned"
                                 : ", which is not in the block's shared memory"));
    return nullptr;
  }
  auto it = l.mbarriers.find(a);
  if (init)
    return &l.mbarriers[a];
  if (it == l.mbarriers.end()) {
    addFinding(l, &t, std::string(op) + " on the mbarrier at " + mbarrierName(l, bar) +
                          ", which mbarrier.init never initialized");
    return nullptr;
  }
  MBarrier &m = it->second;
  if (l.current != m.initThread && !m.initRaceReported &&
      clockOf(l, l.current)[m.initThread] < m.initClock) {
    // The init is a write to the object: unordered with this use, the use
    // may see the memory before it (PTX memory model).
    m.initRaceReported = true;
    addFinding(l, &t, std::string(op) + " on the mbarrier at " + mbarrierName(l, bar) +
                          ", which thread " + std::to_string(m.initThread) +
                          " initialized with no barrier or other synchronization ordering "
                          "the mbarrier.init before this use");
  }
  return &m;
}

/// The running launch and the state of the mbarrier at `bar` for `op` (null
/// outside a launch, or after lookup's finding).
std::pair<Launch *, MBarrier *> find(const void *bar, const char *op) {
  Launch *l = activeLaunch();
  return {l, l ? lookup(*l, bar, op) : nullptr};
}

/// Whether the phase of parity `parity` has completed (the current phase
/// has the other parity).
bool parityDone(const MBarrier &m, uint32_t parity) { return (m.phase & 1) != (parity & 1); }

/// Completes the current phase when nothing is pending, and wakes the
/// threads waiting for it.
void maybeComplete(Launch &l, const void *bar, MBarrier &m) {
  if (m.pending != 0 || m.tx != 0)
    return;
  ++m.phase;
  m.completedSeen = std::move(m.arrivalsSeen);
  m.arrivalsSeen.clear();
  m.completedClock = std::move(m.arrivalsClock);
  m.arrivalsClock.clear();
  m.pending = m.expected;
  for (Thread &o : l.threads) {
    if (o.wait != Wait::MBarrier || o.in != bar || !parityDone(m, o.mode))
      continue;
    o.wait = Wait::Running;
    l.ready.push_back(o.linear);
  }
}

} // namespace

std::string rlx::emu::mbarrierName(const Launch &l, const void *bar) {
  auto a = reinterpret_cast<uintptr_t>(bar);
  int i = sharedIndex(l, a, 8);
  if (i < 0)
    return hexAddress(a);
  return sharedBufferName(l, static_cast<size_t>(i)) + "+" +
         std::to_string(a - reinterpret_cast<uintptr_t>(l.shared[static_cast<size_t>(i)].data));
}

extern "C" void __rlx_emu_mbarrier_init(void *bar, uint32_t count) {
  Launch *l = activeLaunch();
  if (!l)
    return;
  if (count == 0 || count > (1u << 20) - 1) {
    addFinding(*l, &l->self(), "mbarrier.init with a count of " + std::to_string(count) +
                                   " (1 to 2^20 - 1)");
    return;
  }
  if (MBarrier *m = lookup(*l, bar, "mbarrier.init", /*init=*/true)) {
    if (!m->loads.empty())
      addFinding(*l, &l->self(), "mbarrier.init on the mbarrier at " + mbarrierName(*l, bar) +
                                     " while TMA loads still complete on it");
    *m = MBarrier{};
    m->index = l->numMBarriers++;
    m->expected = m->pending = count;
    m->initThread = l->current;
    m->initFences = l->self().proxyFences;
    m->initClock = clockOf(*l, l->current)[l->current];
  }
}

extern "C" void __rlx_emu_mbarrier_inval(void *bar) {
  if (auto [l, m] = find(bar, "mbarrier.inval"); m) {
    if (!m->loads.empty())
      addFinding(*l, &l->self(), "mbarrier.inval on the mbarrier at " + mbarrierName(*l, bar) +
                                     " while TMA loads still complete on it");
    l->mbarriers.erase(reinterpret_cast<uintptr_t>(bar));
  }
}

extern "C" uint64_t __rlx_emu_mbarrier_arrive(void *bar, uint32_t count, uint32_t expect_tx) {
  auto [l, m] = find(bar, expect_tx ? "mbarrier.arrive.expect_tx" : "mbarrier.arrive");
  if (!m)
    return 0;
  uint64_t state = m->phase;
  joinSeen(m->arrivalsSeen, l->self().seenPhases);
  clockRelease(*l, m->arrivalsClock);
  m->tx += expect_tx;
  if (count > m->pending) {
    addFinding(*l, &l->self(), "mbarrier.arrive of " + std::to_string(count) +
                                   " arrivals on the mbarrier at " + mbarrierName(*l, bar) +
                                   ", whose phase expects only " + std::to_string(m->pending) +
                                   " more");
    count = m->pending;
  }
  m->pending -= count;
  maybeComplete(*l, bar, *m);
  return state;
}

void rlx::emu::mbarrierCompleteTx(Launch &l, const void *bar, MBarrier &m, int64_t bytes) {
  m.tx -= bytes;
  maybeComplete(l, bar, m);
}

bool rlx::emu::landAnyLoads(Launch &l) {
  // Once every thread has exited, a queued load is a missing wait (and on a
  // GPU a block exiting with copies in flight).
  if (l.exited == l.numThreads)
    return false;
  bool any = false;
  for (auto &[addr, m] : l.mbarriers)
    if (!m.loads.empty()) {
      landLoads(l, reinterpret_cast<const void *>(addr), m);
      any = true;
    }
  return any;
}

void rlx::emu::checkPendingLoads(Launch &l) {
  for (auto &[addr, m] : l.mbarriers)
    if (!m.loads.empty())
      addFinding(l, &l.threads[m.loads.front().thread],
                 std::to_string(m.loads.size()) +
                     " TMA load(s) on the mbarrier at " +
                     mbarrierName(l, reinterpret_cast<const void *>(addr)) +
                     " never landed: no thread waited on it (mbarrier.try_wait)");
}

extern "C" void __rlx_emu_mbarrier_tx(void *bar, int64_t bytes) {
  auto [l, m] = find(bar, bytes >= 0 ? "mbarrier.expect_tx" : "mbarrier.complete_tx");
  if (!m)
    return;
  m->tx += bytes;
  maybeComplete(*l, bar, *m);
}

extern "C" uint32_t __rlx_emu_mbarrier_test_wait(void *bar, uint64_t state, uint32_t parity) {
  auto [l, m] = find(bar, parity ? "mbarrier.test_wait.parity" : "mbarrier.test_wait");
  if (!m)
    return 1;
  landLoads(*l, bar, *m);
  const MBarrier &mb = *m;
  auto done = [&] {
    return parity ? parityDone(mb, static_cast<uint32_t>(state)) : mb.phase != state;
  };
  if (done()) {
    l->self().polls = 0;
    observePhases(*l, mb);
    return 1;
  }
  // A kernel polls test_wait in a loop: let the other threads run first
  // (fibers are cooperative), and report a poll that can never succeed.
  Thread &t = l->self();
  if (++t.polls > kMaxPolls) {
    addFinding(*l, &t, "mbarrier.test_wait on the mbarrier at " + mbarrierName(*l, bar) +
                           " polled " + std::to_string(kMaxPolls) +
                           " times without its phase completing (a deadlock)");
    return 1;
  }
  l->ready.push_back(t.linear);
  waitHere(*l);
  // The mbarrier may have been invalidated meanwhile.
  auto it = l->mbarriers.find(reinterpret_cast<uintptr_t>(bar));
  if (it == l->mbarriers.end())
    return 1;
  const MBarrier &now = it->second;
  if (parity ? !parityDone(now, static_cast<uint32_t>(state)) : now.phase == state)
    return 0;
  t.polls = 0;
  observePhases(*l, now);
  return 1;
}

extern "C" void __rlx_emu_mbarrier_wait_parity(void *bar, uint32_t parity) {
  auto [l, m] = find(bar, "mbarrier.try_wait.parity");
  if (!m)
    return;
  if (!parityDone(*m, parity)) {
    Thread &t = l->self();
    t.wait = Wait::MBarrier;
    t.in = bar;
    t.mode = parity & 1;
    waitHere(*l);
    // The mbarrier may have been invalidated meanwhile.
    auto it = l->mbarriers.find(reinterpret_cast<uintptr_t>(bar));
    if (it == l->mbarriers.end())
      return;
    m = &it->second;
  }
  observePhases(*l, *m);
}
