//===- Async.cpp - wgmma asynchrony and memory proxies in the emulator ----===//
//
// The emulator computes a wgmma.mma_async when its warpgroup issues it; the
// PTX ISA lets the hardware read the shared operands at any time until the
// wgmma.wait_group that retires the group, and leaves the accumulators
// undefined until then ("Asynchronous Warpgroup Level Matrix
// Multiply-Accumulate": wgmma.fence, commit_group, wait_group). So every
// order a GPU may take is checked, not just the emulator's:
//
// - the operand bytes stay "in flight" from issue until every thread of the
//   warpgroup retired the wgmma: a write to them (a thread's st.shared or a
//   landing TMA box) in between is a finding, whatever value it writes;
// - a register access of a wgmma's accumulators (__rlx_emu_wgmma_read, which
//   the outline pass places before each) while the wgmma is in flight for the
//   thread is a finding, and so is a wgmma issued without a wgmma.fence after
//   the thread's last such access;
// - a thread that exits with wgmmas it never committed or waited for.
//
// Memory proxies ("Memory Consistency Model: proxies"): wgmma operands and
// TMA are the async proxy. A generic-proxy write of a shared byte becomes
// visible to it only after the writer's fence.proxy.async, so an async read
// of a byte whose last writer has not fenced since is a finding; an mbarrier
// TMA completes on must have been made visible by its initializing thread's
// fence.mbarrier_init.
//===----------------------------------------------------------------------===//

#include "State.h"

#include <algorithm>

using namespace rlx::emu;

namespace {

/// Retires `group` for the running thread. The first of the warpgroup's
/// threads to see a wgmma complete frees its operand bytes (the operation
/// is the warpgroup's: once one thread observed it done, it is done); the
/// record goes when all 128 have retired it.
void retire(Launch &l, const std::vector<std::pair<uint32_t, uint32_t>> &group) {
  for (auto [op, id] : group) {
    auto it = l.wgmmas.find(id);
    if (it == l.wgmmas.end())
      continue;
    if (it->second.retired++ == 0) {
      for (uint32_t b : it->second.bytes)
        if (b < l.inflight.size() && l.inflight[b])
          --l.inflight[b];
      it->second.bytes.clear();
    }
    if (it->second.retired == 128)
      l.wgmmas.erase(it);
  }
}

std::string wgmmaName(uint32_t op) { return "wgmma.mma_async #" + std::to_string(op); }

/// Registers were released: the threads waiting at setmaxnreg.inc re-check.
void wakeRegisterWaiters(Launch &l) {
  for (Thread &o : l.threads)
    if (o.wait == Wait::Registers) {
      o.wait = Wait::Running;
      l.ready.push_back(o.linear);
    }
}
} // namespace

namespace rlx::emu {

void findingOnce(Launch &l, const Thread *t, uint32_t kind, const std::string &what) {
  if (l.reportedKinds & kind)
    return;
  l.reportedKinds |= kind;
  addFinding(l, t, what);
}

void resetAsync(Launch &l) {
  l.inflight.assign(l.windowUsed, 0);
  l.genericWriter.assign(l.windowUsed, 0);
  l.genericFences.assign(l.windowUsed, 0);
  l.tmaBarrier.assign(l.windowUsed, 0);
  l.tmaPhase.assign(l.windowUsed, 0);
  l.numMBarriers = 0;
  l.registersTracked = false;
  l.wgmmas.clear();
  for (Thread &t : l.threads) {
    t.wgmmaOpen.clear();
    t.wgmmaGroups.clear();
    t.wgmmaFenced = false;
    t.proxyFences = 0;
    t.seenPhases.clear();
    t.registers = 0;
  }
}

uint64_t blockRegisters(const Launch &l) {
  uint64_t total = 0;
  for (const Thread &t : l.threads)
    if (t.wait != Wait::Done)
      total += t.registers;
  return total;
}

void tmaWillWrite(Launch &l, uint64_t off, uint64_t n, const MBarrier &m) {
  for (uint64_t i = off; i < off + n && i < l.tmaBarrier.size(); ++i) {
    l.tmaBarrier[i] = m.index + 1;
    l.tmaPhase[i] = m.phase + 1;
  }
}

void joinSeen(std::vector<uint64_t> &into, const std::vector<uint64_t> &from) {
  if (into.size() < from.size())
    into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i)
    into[i] = std::max(into[i], from[i]);
}

void observePhases(Launch &l, const MBarrier &m) {
  clockAcquire(l, l.current, m.completedClock);
  std::vector<uint64_t> &seen = l.self().seenPhases;
  joinSeen(seen, m.completedSeen);
  if (seen.size() <= m.index)
    seen.resize(m.index + 1, 0);
  seen[m.index] = std::max(seen[m.index], m.phase);
}

void checkAsyncAtExit(Launch &l, Thread &t) {
  // Its registers go back to the SM: a setmaxnreg.inc may proceed.
  if (l.registersTracked)
    wakeRegisterWaiters(l);
  if (!t.wgmmaOpen.empty())
    findingOnce(l, &t, kExit,
                "exits with " + wgmmaName(t.wgmmaOpen.front().first) +
                    " never committed (wgmma.commit_group) nor waited for (wgmma.wait_group)");
  else
    for (const auto &group : t.wgmmaGroups) // empty groups are legal and hold nothing
      if (!group.empty()) {
        findingOnce(l, &t, kExit,
                    "exits with " + wgmmaName(group.front().first) +
                        " in flight: no wgmma.wait_group retired its group");
        break;
      }
}

void checkAsyncAccess(Launch &l, uint64_t off, uint64_t n, uint32_t flags) {
  if (off + n > l.inflight.size())
    return;
  Thread &t = l.self();
  const bool write = flags & RLX_EMU_WRITE, async = flags & RLX_EMU_ASYNC;
  // A TMA load may write its box at any time until its mbarrier phase
  // completes: any other access before the thread observed that is a race.
  if (!(write && async))
    for (uint64_t i = off; i < off + n; ++i) {
      uint32_t bar = l.tmaBarrier[i];
      if (!bar)
        continue;
      uint64_t seen = bar - 1 < t.seenPhases.size() ? t.seenPhases[bar - 1] : 0;
      if (seen < l.tmaPhase[i]) {
        findingOnce(l, &t, kTmaUnwaited,
                    std::string(write ? "writes" : "reads") + " shared address " +
                        hexAddress(i) + (async ? " (as a wgmma operand)" : "") +
                        ", which a TMA load writes, before observing the mbarrier phase that "
                        "completes the load (mbarrier.try_wait)");
        break;
      }
      if (write)
        l.tmaBarrier[i] = 0;
    }
  if (write) {
    for (uint64_t i = off; i < off + n; ++i) {
      if (l.inflight[i]) {
        uint32_t op = 0, wg = 0;
        for (const auto &[id, r] : l.wgmmas)
          if (std::find(r.bytes.begin(), r.bytes.end(), i) != r.bytes.end()) {
            op = r.op;
            wg = r.warpgroup;
            break;
          }
        findingOnce(l, &t, kInflightWrite,
                    std::string(async ? "a TMA load writes" : "writes") + " shared address " +
                        hexAddress(i) + ", an operand of " + wgmmaName(op) + " that warpgroup " +
                        std::to_string(wg) +
                        " has in flight (no wgmma.wait_group of all its threads retired it)");
        break;
      }
    }
    for (uint64_t i = off; i < off + n; ++i) {
      l.genericWriter[i] = async ? 0 : t.linear + 1;
      l.genericFences[i] = t.proxyFences;
    }
    return;
  }
  if (!async)
    return;
  for (uint64_t i = off; i < off + n; ++i) {
    uint32_t w = l.genericWriter[i];
    if (w && l.threads[w - 1].proxyFences == l.genericFences[i]) {
      findingOnce(l, &t, kProxy,
                  "the async proxy (a wgmma operand) reads shared address " + hexAddress(i) +
                      " that thread " + threadCoords(l, w - 1) + " (linear " +
                      std::to_string(w - 1) +
                      ") wrote through the generic proxy with no fence.proxy.async after the "
                      "write");
      return;
    }
  }
}

void wgmmaIssue(Launch &l, Thread &t, const char *name) {
  if (!t.wgmmaFenced)
    findingOnce(l, &t, kNoFence,
                std::string(name) + " #" + std::to_string(t.wgmmaOp) +
                    " issued with no wgmma.fence since the thread's last register access of "
                    "wgmma operands (or before its first wgmma)");
}

void wgmmaRecord(Launch &l, uint32_t base, const std::vector<uint32_t> &elements) {
  const uint32_t id = l.nextWgmma++;
  WgmmaRecord &r = l.wgmmas[id];
  r.op = l.threads[base].wgmmaOp;
  r.warpgroup = base / 128;
  for (uint32_t e : elements)
    for (uint32_t b = e; b < e + 2; ++b)
      if (b < l.inflight.size()) {
        r.bytes.push_back(b);
        ++l.inflight[b];
      }
  for (uint32_t m = 0; m < 128; ++m) {
    Thread &o = l.threads[base + m];
    o.wgmmaOpen.emplace_back(o.wgmmaOp, id);
  }
}

} // namespace rlx::emu

extern "C" void __rlx_emu_wgmma_op(uint32_t op) {
  if (Launch *l = activeLaunch())
    l->self().wgmmaOp = op;
}

extern "C" void __rlx_emu_wgmma_fence(void) {
  if (Launch *l = activeLaunch())
    l->self().wgmmaFenced = true;
}

extern "C" void __rlx_emu_wgmma_commit(void) {
  Launch *l = activeLaunch();
  if (!l)
    return;
  Thread &t = l->self();
  // An empty group is legal (wait_group counts it).
  t.wgmmaGroups.push_back(std::move(t.wgmmaOpen));
  t.wgmmaOpen.clear();
}

extern "C" void __rlx_emu_wgmma_wait(uint32_t n) {
  Launch *l = activeLaunch();
  if (!l)
    return;
  Thread &t = l->self();
  if (!t.wgmmaOpen.empty() && n == 0)
    findingOnce(*l, &t, kWait,
                "wgmma.wait_group 0 with " + wgmmaName(t.wgmmaOpen.front().first) +
                    " not committed (wgmma.commit_group): the wait does not cover it");
  while (t.wgmmaGroups.size() > n) {
    retire(*l, t.wgmmaGroups.front());
    t.wgmmaGroups.pop_front();
  }
}

extern "C" void __rlx_emu_wgmma_read(uint32_t op) {
  Launch *l = activeLaunch();
  if (!l)
    return;
  Thread &t = l->self();
  t.wgmmaFenced = false;
  auto inflight = [&](const std::vector<std::pair<uint32_t, uint32_t>> &g) {
    return std::any_of(g.begin(), g.end(), [&](auto &p) { return p.first == op; });
  };
  bool early = inflight(t.wgmmaOpen) ||
               std::any_of(t.wgmmaGroups.begin(), t.wgmmaGroups.end(), inflight);
  if (early)
    findingOnce(*l, &t, kEarlyRead,
                "reads the accumulators of " + wgmmaName(op) +
                    " while it is in flight (before the wgmma.wait_group that retires it: "
                    "they are undefined until then)");
}

extern "C" void __rlx_emu_fence_proxy_async(void) {
  if (Launch *l = activeLaunch())
    ++l->self().proxyFences;
}

/// setmaxnreg.{inc,dec}.sync.aligned.u32 count (PTX ISA): the warp's
/// per-thread register count becomes `count` (a multiple of 8 in 24..256);
/// .dec releases registers to the CTA's pool, .inc waits until the pool
/// has room. Threads start with the kernel's `maxnreg` (0: 65536 / block
/// size, rounded down to 8); the pool is that times the block's threads (at
/// most 65536). An inc nothing can satisfy is a reported deadlock.
extern "C" void __rlx_emu_setmaxnreg(uint32_t count, uint32_t increase, uint32_t maxnreg) {
  Launch *l = activeLaunch();
  if (!l)
    return;
  Thread &t = l->self();
  const char *op = increase ? "setmaxnreg.inc " : "setmaxnreg.dec ";
  if (count < 24 || count > 256 || count % 8) {
    addFinding(*l, &t, op + std::to_string(count) +
                           ": the count must be a multiple of 8 from 24 to 256");
    return;
  }
  if (!l->registersTracked) {
    l->registersTracked = true;
    uint32_t start = maxnreg ? maxnreg : (65536 / l->numThreads) & ~7u;
    for (Thread &o : l->threads)
      o.registers = start;
    // The CTA's pool: what it launched with (PTX ISA: inc takes from what
    // dec released), at most the SM's 65536.
    l->registerPool = std::min<uint64_t>(uint64_t(start) * l->numThreads, 65536);
  }
  if (increase ? count < t.registers : count > t.registers) {
    addFinding(*l, &t, op + std::to_string(count) + " while the thread holds " +
                           std::to_string(t.registers) + " registers (" +
                           (increase ? "inc must not lower" : "dec must not raise") + " it)");
    return;
  }
  if (!increase) {
    t.registers = count;
    wakeRegisterWaiters(*l);
    return;
  }
  while (blockRegisters(*l) - t.registers + count > l->registerPool) {
    t.wait = Wait::Registers;
    t.a = count;
    waitHere(*l);
  }
  t.registers = count;
}
