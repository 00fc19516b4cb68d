//===- Scheduler.cpp - Launches, blocks, barriers and warp collectives ----===//
//
// Blocks run one after another on the calling OS thread; the threads of a
// block are fibers scheduled cooperatively from a FIFO ready queue. A fiber
// runs until it waits (barrier, warp collective) or returns. The last thread
// to arrive at a barrier, or the last lane of a collective's membermask,
// completes it and carries on; the others go back on the ready queue. When
// the queue runs dry before every thread has returned, nobody can progress:
// that is a barrier divergence (the rest wait at the barrier but some have
// exited) or a deadlock (waits at different sync points), reported with who
// waits where; the launch then stops (the fibers are abandoned, their stacks
// released) and returns nonzero.
//===----------------------------------------------------------------------===//

#include "State.h"
#include "Matrix.h"
#include "Warp.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <csetjmp>
#include <csignal>
#include <cstring>

using namespace rlx::emu;

namespace rlx::emu {

namespace {
Launch *Active = nullptr;
thread_local bool OnLaunchThread = false;
std::atomic<uint32_t> Options{RLX_EMU_CHECK_ALL};
// The last launch's blocks: when each ran, in launch order (process-wide,
// like the last report).
std::vector<rlx_emu_block_time> BlockTimes;

// CUDA's limits (compute capability 9.0: 227 KiB of shared memory per block
// with the opt-in attribute).
constexpr uint64_t kMaxThreadsPerBlock = 1024;
constexpr uint32_t kMaxBlockDim[3] = {1024, 1024, 64};
constexpr uint32_t kMaxGridDim[3] = {0x7fffffffu, 65535, 65535};
constexpr uint64_t kMaxSharedBytes = 227 * 1024;

/// Fiber stacks outlive launches (mapping 1024 of them per launch would cost
/// more than small kernels); a failed launch releases them.
struct StackPool {
  std::vector<FiberStack> stacks;
  size_t bytes = 0;

  bool reserve(size_t count, size_t stackBytes) {
    if (stackBytes != bytes) {
      stacks.clear();
      bytes = stackBytes;
    }
    while (stacks.size() < count) {
      FiberStack s(stackBytes);
      if (!s.valid())
        return false;
      stacks.push_back(std::move(s));
    }
    return true;
  }
};
StackPool &stackPool() {
  static StackPool pool;
  return pool;
}

// A fiber that runs into its guard (a kernel whose frames exceed
// RLX_EMU_STACK_KIB) is a finding of its launch, not a crash of the process:
// while a launch runs, SIGSEGV goes to a handler on an alternate stack; a
// fault in the running fiber's guard jumps back to the scheduler, which
// abandons the launch like any failed one. Any other fault goes to the
// previous disposition. (Under AddressSanitizer its own handler reports
// stack overflows.)
#ifndef RLX_EMU_ASAN
sigjmp_buf *OverflowJump = nullptr;
struct sigaction PreviousSegv;

void onSegv(int, siginfo_t *info, void *) {
  Launch *l = Active;
  if (OverflowJump && l && l->current < l->threads.size()) {
    auto lo = reinterpret_cast<uintptr_t>(l->threads[l->current].ctx.stackLo);
    auto a = reinterpret_cast<uintptr_t>(info->si_addr);
    if (lo && a < lo && lo - a <= kFiberGuardBytes)
      siglongjmp(*OverflowJump, 1);
  }
  // Not ours: returning re-executes the fault under the previous action.
  sigaction(SIGSEGV, &PreviousSegv, nullptr);
}

/// The handler and its alternate stack for the duration of one launch.
struct OverflowGuard {
  stack_t previousStack{};
  bool installed = false;
  OverflowGuard() {
    static thread_local std::vector<char> alternate(64 * 1024);
    stack_t ss{};
    ss.ss_sp = alternate.data();
    ss.ss_size = alternate.size();
    struct sigaction sa {};
    sa.sa_sigaction = &onSegv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    installed = sigaltstack(&ss, &previousStack) == 0 &&
                sigaction(SIGSEGV, &sa, &PreviousSegv) == 0;
  }
  ~OverflowGuard() {
    if (!installed)
      return;
    sigaction(SIGSEGV, &PreviousSegv, nullptr);
    sigaltstack(&previousStack, nullptr);
  }
};
#endif

const char *shflModeName(uint32_t mode) {
  static const char *names[] = {"bfly", "up", "down", "idx"};
  return mode < 4 ? names[mode] : "?";
}
const char *voteModeName(uint32_t mode) {
  static const char *names[] = {"all", "any", "uni", "ballot"};
  return mode < 4 ? names[mode] : "?";
}
std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

void fiberMain(void *arg) {
  Launch &l = *static_cast<Launch *>(arg);
  fiberStarted(l.scheduler);
  l.kernel->entry(l.params.data());
  Thread &t = l.self();
  if (!t.openCopies.empty() || !t.committedCopies.empty())
    addFinding(l, &t, "exits with cp.async copies it never waited for (cp.async.wait_group)");
  checkAsyncAtExit(l, t);
  t.wait = Wait::Done;
  ++l.exited;
  switchContext(t.ctx, l.scheduler);
  std::abort(); // a finished fiber is never resumed
}


std::string waitLabel(const Thread &t) {
  switch (t.wait) {
  case Wait::Barrier:
    return "wait at the barrier";
  case Wait::NamedBarrier:
    return "wait at bar.sync " + std::to_string(t.mode) + ", " + std::to_string(t.a);
  case Wait::Shfl:
    return std::string("wait at shfl.sync.") + shflModeName(t.mode) + " (membermask " +
           hex32(t.mask) + ")";
  case Wait::Vote:
    return std::string("wait at vote.sync.") + voteModeName(t.mode) + " (membermask " +
           hex32(t.mask) + ")";
  case Wait::Matrix:
    return t.mode == 0 ? "wait at mma.sync"
           : t.mode == 1 ? "wait at ldmatrix"
                         : "wait at wgmma.mma_async (all 128 threads of the warpgroup)";
  case Wait::MBarrier:
    return "wait at mbarrier.try_wait.parity " + std::to_string(t.mode) + " (mbarrier at " +
           mbarrierName(*Active, t.in) + ")";
  case Wait::Registers:
    return "wait at setmaxnreg.inc " + std::to_string(t.a) + " (the block holds " +
           std::to_string(blockRegisters(*Active)) + " of the SM's 65536 registers)";
  case Wait::Done:
    return "have exited";
  case Wait::Running:
    break;
  }
  return "are runnable";
}

/// Nobody can progress: say who waits where, as runs of linear thread ids.
void diagnoseStall(Launch &l) {
  bool onlyBarrier = true;
  const Thread *first = nullptr;
  for (const Thread &t : l.threads) {
    if (t.wait == Wait::Done)
      continue;
    if (!first)
      first = &t;
    if (t.wait != Wait::Barrier)
      onlyBarrier = false;
  }
  std::string what = onlyBarrier ? "barrier divergence: " : "deadlock: ";
  what += "no thread can progress; (linear ids) ";
  constexpr unsigned kMaxRuns = 12;
  unsigned runs = 0;
  for (uint32_t i = 0; i < l.numThreads;) {
    std::string label = waitLabel(l.threads[i]);
    uint32_t j = i + 1;
    while (j < l.numThreads && waitLabel(l.threads[j]) == label)
      ++j;
    if (runs == kMaxRuns) {
      what += "; ...";
      break;
    }
    if (runs++)
      what += "; ";
    what += j - i == 1 ? "thread " + std::to_string(i)
                       : "threads " + std::to_string(i) + "-" + std::to_string(j - 1);
    what += " " + label;
    i = j;
  }
  addFinding(l, first, what);
}

bool runBlock(Launch &l, StackPool &pool) {
  ++l.epoch;
  for (SharedBuffer &s : l.shared)
    std::memset(s.data, 0xFF, s.bytes);
  l.ready.clear();
  l.mbarriers.clear();
  resetAsync(l);
  for (NamedBarrier &n : l.named)
    n = NamedBarrier{};
  l.exited = 0;
  for (uint32_t i = 0; i < l.numThreads; ++i) {
    Thread &t = l.threads[i];
    t.wait = Wait::Running;
    t.openCopies.clear();
    t.polls = 0;
    t.committedCopies.clear();
    makeContext(t.ctx, pool.stacks[i], &fiberMain, &l);
    l.ready.push_back(i);
  }
#ifndef RLX_EMU_ASAN
  sigjmp_buf overflow;
  if (sigsetjmp(overflow, 1)) {
    OverflowJump = nullptr;
    addFinding(l, &l.threads[l.current],
               "stack overflow: its frames exceed the " + std::to_string(fiberStackBytes() / 1024) +
                   " KiB fiber stack (RLX_EMU_STACK_KIB raises it)");
    return false;
  }
  OverflowJump = &overflow;
#endif
  // TMA loads land only when no thread can run (or at a test_wait): a
  // read before the wait that completes them sees the old bytes.
  do {
    while (!l.ready.empty()) {
      l.current = l.ready.front();
      l.ready.pop_front();
      switchContext(l.scheduler, l.threads[l.current].ctx);
    }
  } while (landAnyLoads(l));
#ifndef RLX_EMU_ASAN
  OverflowJump = nullptr;
#endif
  if (l.exited == l.numThreads) {
    checkPendingLoads(l);
    return true;
  }
  diagnoseStall(l);
  return false;
}

/// The rendezvous of a warp collective: returns the calling lane's result.
uint64_t collective(Launch &l, Wait kind, uint32_t mode, uint32_t a, uint32_t b, uint32_t c,
                    uint32_t mask) {
  Thread &t = l.self();
  const uint32_t lane = t.linear % kWarpSize;
  const uint32_t base = t.linear - lane;
  const uint32_t lanes = std::min<uint32_t>(kWarpSize, l.numThreads - base);
  const uint32_t exist = lanes == kWarpSize ? ~0u : (1u << lanes) - 1;
  const char *op = kind == Wait::Shfl ? "shfl.sync." : "vote.sync.";
  const char *modeName = kind == Wait::Shfl ? shflModeName(mode) : voteModeName(mode);
  if (!(mask >> lane & 1u)) {
    // PTX: undefined. The lane does not take part; it gets its own value.
    addFinding(l, &t, std::string(op) + modeName + " by lane " + std::to_string(lane) +
                          ", which is not in its membermask " + hex32(mask));
    if (kind == Wait::Shfl)
      return a;
    return voteSync(static_cast<VoteMode>(mode), 1u << lane, (a != 0) << lane);
  }
  t.wait = kind;
  t.mode = mode;
  t.a = a;
  t.b = b;
  t.c = c;
  t.mask = mask;
  const uint32_t members = mask & exist;
  for (uint32_t m = 0; m < kWarpSize; ++m) {
    if (!(members >> m & 1u))
      continue;
    const Thread &o = l.threads[base + m];
    if (o.wait != kind || o.mask != mask || o.mode != mode) {
      waitHere(l);
      return t.result;
    }
  }
  // The last lane arrived: complete the collective for all members.
  if (kind == Wait::Shfl) {
    uint32_t A[kWarpSize] = {}, B[kWarpSize] = {}, C[kWarpSize] = {}, D[kWarpSize] = {};
    bool P[kWarpSize] = {};
    for (uint32_t m = 0; m < kWarpSize; ++m) {
      if (!(members >> m & 1u))
        continue;
      const Thread &o = l.threads[base + m];
      A[m] = o.a;
      B[m] = o.b;
      C[m] = o.c;
    }
    uint32_t bad = shflSyncWarp(static_cast<ShflMode>(mode), members, A, B, C, D, P);
    for (uint32_t m = 0; m < kWarpSize; ++m) {
      if (!(members >> m & 1u))
        continue;
      Thread &o = l.threads[base + m];
      o.result = D[m] | static_cast<uint64_t>(P[m]) << 32;
      if (bad >> m & 1u) {
        uint32_t src = shflSource(static_cast<ShflMode>(mode), m, B[m], C[m]).lane;
        addFinding(l, &o, std::string(op) + modeName + " (b=" + std::to_string(B[m]) + ", c=" +
                              hex32(C[m]) + ") by lane " + std::to_string(m) + " reads lane " +
                              std::to_string(src) +
                              (exist >> src & 1u ? ", which is not in membermask " + hex32(mask)
                                                 : ", which does not exist (the block has " +
                                                       std::to_string(l.numThreads) +
                                                       " threads)"));
      }
    }
  } else {
    uint32_t preds = 0;
    for (uint32_t m = 0; m < kWarpSize; ++m)
      if ((members >> m & 1u) && l.threads[base + m].a != 0)
        preds |= 1u << m;
    uint32_t r = voteSync(static_cast<VoteMode>(mode), members, preds);
    for (uint32_t m = 0; m < kWarpSize; ++m)
      if (members >> m & 1u)
        l.threads[base + m].result = r;
  }
  for (uint32_t m = 0; m < kWarpSize; ++m) {
    if (!(members >> m & 1u) || m == lane)
      continue;
    Thread &o = l.threads[base + m];
    o.wait = Wait::Running;
    l.ready.push_back(o.linear);
  }
  t.wait = Wait::Running;
  return t.result;
}

/// The rendezvous of a warp matrix instruction (op 0: mma.sync, 1: ldmatrix;
/// `mode`: the mma type or the ldmatrix num | trans << 8). Every lane of the
/// warp takes part (.aligned); a partial warp is a finding.
void matrixCollective(Launch &l, uint32_t op, uint32_t mode, const void *in, void *out) {
  Thread &t = l.self();
  const uint32_t lane = t.linear % kWarpSize;
  const uint32_t base = t.linear - lane;
  const char *name = op == 0 ? "mma.sync" : "ldmatrix";
  if (l.numThreads - base < kWarpSize) {
    addFinding(l, &t, std::string(name) + " in a partial warp (the block has " +
                          std::to_string(l.numThreads) + " threads): it needs all 32 lanes");
    return;
  }
  t.wait = Wait::Matrix;
  t.mode = op;
  t.mask = mode;
  t.in = in;
  t.out = out;
  for (uint32_t m = 0; m < kWarpSize; ++m) {
    const Thread &o = l.threads[base + m];
    if (o.wait != Wait::Matrix || o.mode != op || o.mask != mode) {
      waitHere(l);
      return;
    }
  }
  if (op == 0) {
    uint32_t A[kWarpSize][4], B[kWarpSize][2];
    float C[kWarpSize][4], D[kWarpSize][4];
    for (uint32_t m = 0; m < kWarpSize; ++m) {
      const Thread &o = l.threads[base + m];
      const uint32_t *a = static_cast<const uint32_t *>(o.in);
      std::memcpy(A[m], a, 16);
      std::memcpy(B[m], a + 4, 8);
      std::memcpy(C[m], a + 6, 16);
    }
    mmaM16N8K16(static_cast<MmaType>(mode), A, B, C, D);
    for (uint32_t m = 0; m < kWarpSize; ++m)
      std::memcpy(l.threads[base + m].out, D[m], 16);
  } else {
    const uint32_t num = mode & 0xFF;
    uint8_t rows[kWarpSize][16] = {};
    for (uint32_t m = 0; m < 8 * num; ++m) {
      const Thread &o = l.threads[base + m];
      if (o.inValid)
        std::memcpy(rows[m], o.in, 16);
    }
    uint32_t outs[kWarpSize][4] = {};
    ldmatrixM8N8(num, (mode >> 8) != 0, rows, outs);
    for (uint32_t m = 0; m < kWarpSize; ++m)
      std::memcpy(l.threads[base + m].out, outs[m], 4 * num);
  }
  for (uint32_t m = 0; m < kWarpSize; ++m) {
    Thread &o = l.threads[base + m];
    o.wait = Wait::Running;
    if (m != lane)
      l.ready.push_back(o.linear);
  }
}

/// Validates the configuration; false (with findings) when it cannot run.
bool validate(Launch &l, const rlx_emu_kernel *kernel, const uint32_t grid[3],
              const uint32_t block[3], uint64_t dynamicShared, void **params) {
  size_t before = l.findings.size();
  if (!kernel || !kernel->entry) {
    addFinding(l, nullptr, "bad launch: no kernel entry");
    return false;
  }
  if (!grid || !block) {
    addFinding(l, nullptr, "bad launch: no grid or block dimensions");
    return false;
  }
  static const char *dims = "xyz";
  uint64_t threads = 1;
  for (int d = 0; d < 3; ++d) {
    if (grid[d] == 0 || block[d] == 0)
      addFinding(l, nullptr,
                 std::string("bad launch: zero ") + (grid[d] == 0 ? "grid" : "block") +
                     " dimension " + dims[d]);
    if (block[d] > kMaxBlockDim[d])
      addFinding(l, nullptr,
                 std::string("bad launch: block dimension ") + dims[d] + " = " +
                     std::to_string(block[d]) + " exceeds " + std::to_string(kMaxBlockDim[d]));
    if (grid[d] > kMaxGridDim[d])
      addFinding(l, nullptr,
                 std::string("bad launch: grid dimension ") + dims[d] + " = " +
                     std::to_string(grid[d]) + " exceeds " + std::to_string(kMaxGridDim[d]));
    threads *= block[d];
  }
  if (threads > kMaxThreadsPerBlock)
    addFinding(l, nullptr,
               "bad launch: " + std::to_string(threads) + " threads per block exceed " +
                   std::to_string(kMaxThreadsPerBlock));
  uint64_t sharedBytes = dynamicShared;
  if (kernel->num_shared && !kernel->shared)
    addFinding(l, nullptr, "bad launch: num_shared without shared buffer descriptions");
  else
    for (uint32_t i = 0; i < kernel->num_shared; ++i) {
      uint64_t align = kernel->shared[i].align;
      if (align & (align - 1))
        addFinding(l, nullptr,
                   "bad launch: shared buffer #" + std::to_string(i) + " alignment " +
                       std::to_string(align) + " is not a power of two");
      sharedBytes += kernel->shared[i].bytes;
    }
  if (sharedBytes > kMaxSharedBytes)
    addFinding(l, nullptr,
               "bad launch: " + std::to_string(sharedBytes) +
                   " bytes of shared memory per block exceed " + std::to_string(kMaxSharedBytes));
  if (kernel->num_params && !params)
    addFinding(l, nullptr, "bad launch: null params for " + std::to_string(kernel->num_params) +
                               " kernel parameters");
  return l.findings.size() == before;
}

/// The block's shared memory as the GPU has it: one window of 2^18 bytes,
/// aligned to its size, so that the low 18 bits of a buffer's address are
/// its shared-window address (what wgmma's matrix descriptors and the
/// cvta.shared conversions carry). Buffers are placed in order, each aligned
/// as asked, with a 256-byte gap after each: an access that runs past one
/// buffer's end lands in no buffer and is reported, as it would be with
/// separate allocations.
constexpr uint64_t kSharedWindow = uint64_t(1) << 18;
constexpr uint64_t kSharedGap = 256;

bool layoutShared(Launch &l, uint8_t *window) {
  uint64_t at = kSharedGap;
  for (SharedBuffer &s : l.shared) {
    uint64_t align = std::max<uint64_t>(s.align, 16);
    at = (at + align - 1) / align * align;
    if (at + s.bytes + kSharedGap > kSharedWindow)
      return false;
    s.data = window + at;
    at += s.bytes + kSharedGap;
  }
  l.window = window;
  l.windowUsed = at;
  return true;
}

} // namespace

void waitHere(Launch &l) { switchContext(l.self().ctx, l.scheduler); }
Launch *activeLaunch() { return Active; }
void setActiveLaunch(Launch *launch) { Active = launch; }
bool onLaunchThread() { return OnLaunchThread; }
std::mutex &processMutex() {
  static std::mutex m;
  return m;
}

} // namespace rlx::emu

//===--- Kernel side ------------------------------------------------------===//

extern "C" uint64_t __rlx_emu_id(uint32_t which) {
  Launch *l = Active;
  if (!l)
    return which / 4 == RLX_EMU_BLOCK_DIM || which / 4 == RLX_EMU_GRID_DIM ? 1 : 0;
  const Thread &t = l->self();
  uint32_t kind = which / 4, dim = which % 4;
  if (kind == RLX_EMU_LANE_ID)
    return t.linear % kWarpSize;
  if (dim > 2 || kind > RLX_EMU_LANE_ID) {
    addFinding(*l, &t, "__rlx_emu_id: bad selector " + std::to_string(which));
    return 0;
  }
  switch (kind) {
  case RLX_EMU_THREAD_ID:
    return t.tid[dim];
  case RLX_EMU_BLOCK_ID:
    return l->blockId[dim];
  case RLX_EMU_BLOCK_DIM:
    return l->block[dim];
  default:
    return l->grid[dim];
  }
}

extern "C" void __rlx_emu_barrier(void) {
  Launch *l = Active;
  if (!l)
    return;
  Thread &t = l->self();
  // bar.sync 0 of every thread: named barrier 0's state (PTX ISA,
  // "barrier{.cta}": __syncthreads is barrier 0).
  NamedBarrier &n = l->named[0];
  if (n.arrived && n.expected != l->numThreads) {
    addFinding(*l, &t, "bar.sync 0 of the whole block while named barrier 0's current phase "
                       "counts " +
                           std::to_string(n.expected) + " threads");
    return;
  }
  n.expected = l->numThreads;
  joinSeen(n.seen, t.seenPhases);
  clockRelease(*l, n.clock);
  t.wait = Wait::Barrier;
  if (++n.arrived < l->numThreads) {
    waitHere(*l);
    return;
  }
  // Everyone arrived (exited threads never do): every thread acquires the
  // arrivals' clocks and the mbarrier phases any arrival had observed.
  std::vector<uint64_t> seen = std::move(n.seen);
  std::vector<uint32_t> clock = std::move(n.clock);
  n = NamedBarrier{};
  for (Thread &o : l->threads) {
    if (&o != &t && !(o.wait == Wait::Barrier || (o.wait == Wait::NamedBarrier && o.mode == 0)))
      continue;
    joinSeen(o.seenPhases, seen);
    clockAcquire(*l, o.linear, clock);
    if (&o == &t)
      continue;
    o.wait = Wait::Running;
    l->ready.push_back(o.linear);
  }
  t.wait = Wait::Running;
}

extern "C" void __rlx_emu_named_barrier(uint32_t id, uint32_t count, uint32_t sync) {
  Launch *l = Active;
  if (!l)
    return;
  Thread &t = l->self();
  const char *op = sync ? "bar.sync " : "bar.arrive ";
  const bool all = count == 0 && sync;
  if (all)
    count = l->numThreads;
  if (id > 15 || count == 0 || (!all && count % kWarpSize) || count > l->numThreads) {
    addFinding(*l, &t, op + std::to_string(id) + ", " + std::to_string(count) +
                           ": the id must be 0-15 and the count a nonzero multiple of 32 up to "
                           "the block's " +
                           std::to_string(l->numThreads) + " threads");
    return;
  }
  NamedBarrier &n = l->named[id];
  if (n.arrived && n.expected != count) {
    addFinding(*l, &t, op + std::to_string(id) + ", " + std::to_string(count) +
                           " while the barrier's current phase counts " +
                           std::to_string(n.expected) + " threads");
    return;
  }
  n.expected = count;
  joinSeen(n.seen, t.seenPhases);
  clockRelease(*l, n.clock);
  if (++n.arrived < count) {
    if (!sync)
      return;
    t.wait = Wait::NamedBarrier;
    t.mode = id;
    t.a = count;
    waitHere(*l);
    return;
  }
  // Complete: the waiting threads go on, acquiring the arrivals' clocks and
  // the mbarrier phases any arrival had observed (bar.arrive only releases).
  std::vector<uint64_t> seen = std::move(n.seen);
  std::vector<uint32_t> clock = std::move(n.clock);
  n = NamedBarrier{};
  if (sync) {
    joinSeen(t.seenPhases, seen);
    clockAcquire(*l, t.linear, clock);
  }
  for (Thread &o : l->threads) {
    if (&o == &t || !((o.wait == Wait::NamedBarrier && o.mode == id) ||
                      (id == 0 && o.wait == Wait::Barrier)))
      continue;
    joinSeen(o.seenPhases, seen);
    clockAcquire(*l, o.linear, clock);
    o.wait = Wait::Running;
    l->ready.push_back(o.linear);
  }
}

extern "C" uint64_t __rlx_emu_shfl_sync(uint32_t mode, uint32_t a, uint32_t b, uint32_t c,
                                        uint32_t membermask) {
  Launch *l = Active;
  if (!l)
    return a;
  if (mode > RLX_EMU_SHFL_IDX) {
    addFinding(*l, &l->self(), "shfl.sync: bad mode " + std::to_string(mode));
    return a;
  }
  return collective(*l, Wait::Shfl, mode, a, b, c, membermask);
}

extern "C" uint64_t __rlx_emu_shuffle(uint32_t mode, uint32_t value, uint32_t offset,
                                      uint32_t width) {
  Launch *l = Active;
  if (l && (width == 0 || width > kWarpSize)) {
    addFinding(*l, &l->self(), "gpu.shuffle: width " + std::to_string(width) +
                                   " is not in 1..32 (taken as 32)");
    width = kWarpSize;
  }
  ShflOperands ops = gpuShuffleOperands(static_cast<ShflMode>(mode), width);
  return __rlx_emu_shfl_sync(mode, value, offset, ops.c, ops.membermask);
}

extern "C" uint32_t __rlx_emu_vote_sync(uint32_t mode, uint32_t pred, uint32_t membermask) {
  Launch *l = Active;
  if (!l)
    return mode == 3 ? (pred != 0) : (pred != 0 || mode == 2);
  if (mode > 3) {
    addFinding(*l, &l->self(), "vote.sync: bad mode " + std::to_string(mode));
    return 0;
  }
  return static_cast<uint32_t>(collective(*l, Wait::Vote, mode, pred != 0, 0, 0, membermask));
}

extern "C" void *__rlx_emu_dynamic_shared(void) {
  Launch *l = Active;
  return l && !l->shared.empty() ? l->shared.back().data : nullptr;
}

//===--- Host side --------------------------------------------------------===//

extern "C" void rlx_emu_set_options(uint32_t options) { Options.store(options); }

extern "C" int rlx_emu_launch(const rlx_emu_kernel *kernel, const uint32_t grid[3],
                              const uint32_t block[3], uint64_t dynamicShared, void **params) {
  if (OnLaunchThread) {
    // From inside a kernel: the running launch holds the process mutex.
    if (Active)
      addFinding(*Active, &Active->self(), "rlx_emu_launch called from inside a kernel");
    return 1;
  }
  std::lock_guard<std::mutex> lock(processMutex());
  Launch l;
  l.kernel = kernel;
  l.name = kernel && kernel->name ? kernel->name : "<unnamed>";
  // Block times from the launch's entry (a failed launch leaves none).
  BlockTimes.clear();
  auto launchStart = std::chrono::steady_clock::now();
  l.options = Options.load();
  if (!validate(l, kernel, grid, block, dynamicShared, params)) {
    setLastReport(l);
    return 1;
  }
  for (int d = 0; d < 3; ++d) {
    l.grid[d] = grid[d];
    l.block[d] = block[d];
  }
  l.numThreads = block[0] * block[1] * block[2];

  // Shared buffers: the static ones, then the dynamic one (kept even when
  // empty so that __rlx_emu_dynamic_shared has an address to check).
  l.shared.resize(kernel->num_shared + 1);
  for (uint32_t i = 0; i <= kernel->num_shared; ++i) {
    SharedBuffer &s = l.shared[i];
    bool dynamic = i == kernel->num_shared;
    s.bytes = dynamic ? dynamicShared : kernel->shared[i].bytes;
    s.align = dynamic ? 16 : kernel->shared[i].align;
    if (l.options & RLX_EMU_CHECK_RACES)
      s.shadow.resize(s.bytes);
  }
  void *window = nullptr;
  bool ok = posix_memalign(&window, kSharedWindow, kSharedWindow) == 0;
  ok = ok && layoutShared(l, static_cast<uint8_t *>(window));
  // Then the dynamic shared memory (kernels that use it take it last).
  l.sharedPtrs.resize(kernel->num_shared + 1);
  l.params.assign(params, params + kernel->num_params);
  for (uint32_t i = 0; i <= kernel->num_shared; ++i) {
    l.sharedPtrs[i] = l.shared[i].data;
    l.params.push_back(&l.sharedPtrs[i]);
  }
  l.threads.resize(l.numThreads);
  for (uint32_t i = 0; i < l.numThreads; ++i) {
    Thread &t = l.threads[i];
    t.linear = i;
    t.tid[0] = i % block[0];
    t.tid[1] = i / block[0] % block[1];
    t.tid[2] = i / block[0] / block[1];
  }
  StackPool &pool = stackPool();
  if (!ok)
    addFinding(l, nullptr, "cannot allocate the block's shared memory");
  else if (!pool.reserve(l.numThreads, fiberStackBytes()))
    addFinding(l, nullptr, "cannot map " + std::to_string(l.numThreads) + " fiber stacks");

  if (l.findings.empty()) {
#ifndef RLX_EMU_ASAN
    OverflowGuard guard;
#endif
    Active = &l;
    OnLaunchThread = true;
    bool aborted = false;
    auto us = [&](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration<double, std::micro>(t - launchStart).count();
    };
    for (uint32_t z = 0; z < l.grid[2] && !aborted; ++z)
      for (uint32_t y = 0; y < l.grid[1] && !aborted; ++y)
        for (uint32_t x = 0; x < l.grid[0] && !aborted; ++x) {
          l.blockId[0] = x;
          l.blockId[1] = y;
          l.blockId[2] = z;
          auto started = std::chrono::steady_clock::now();
          aborted = !runBlock(l, pool);
          auto ended = std::chrono::steady_clock::now();
          BlockTimes.push_back({us(started), us(ended) - us(started)});
        }
    Active = nullptr;
    OnLaunchThread = false;
    clearGlobalShadow();
    if (aborted)
      pool.stacks.clear(); // the abandoned fibers' frames go with them
  }
  std::free(window);
  setLastReport(l);
  return l.findings.empty() && l.droppedFindings == 0 ? 0 : 1;
}

extern "C" uint64_t rlx_emu_last_block_times(const rlx_emu_block_time **times) {
  *times = BlockTimes.data();
  return BlockTimes.size();
}

extern "C" void __rlx_emu_mma_m16n8k16(uint32_t type, const uint32_t *a, const uint32_t *b,
                                       const float *c, float *d) {
  // One contiguous operand block per lane: A (4), B (2), C (4 f32).
  uint32_t in[10];
  std::memcpy(in, a, 16);
  std::memcpy(in + 4, b, 8);
  std::memcpy(in + 6, c, 16);
  Launch *l = Active;
  if (!l)
    return;
  if (type > 1) {
    addFinding(*l, &l->self(), "mma.sync: bad multiplicand type " + std::to_string(type));
    return;
  }
  matrixCollective(*l, 0, type, in, d);
}

extern "C" void __rlx_emu_ldmatrix(uint32_t num, uint32_t trans, const void *addr,
                                   uint32_t *out) {
  Launch *l = Active;
  if (!l)
    return;
  if (num != 1 && num != 2 && num != 4) {
    addFinding(*l, &l->self(), "ldmatrix: .x" + std::to_string(num) + " (1, 2 or 4)");
    return;
  }
  Thread &t = l->self();
  t.inValid = true;
  if (t.linear % kWarpSize < 8 * num)
    t.inValid = __rlx_emu_access(addr, 16, RLX_EMU_READ) != 0;
  matrixCollective(*l, 1, num | (trans ? 1u << 8 : 0u), addr, out);
}
