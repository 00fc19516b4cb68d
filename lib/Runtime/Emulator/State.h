//===- State.h - The emulator's per-launch state ----------------*- C++ -*-===//
//
// Shared by the scheduler (Scheduler.cpp), the access checker (Checker.cpp)
// and the report (Report.cpp). One launch runs at a time per process: every
// host entry point serializes on processMutex(), and the kernel-side hooks
// find the running launch through activeLaunch(), which only the launching
// OS thread sets (its fibers run on that thread).
//===----------------------------------------------------------------------===//
#ifndef RLX_RUNTIME_EMULATOR_STATE_H
#define RLX_RUNTIME_EMULATOR_STATE_H

#include "Fiber.h"
#include "RLX/Runtime/Emulator.h"

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace rlx::emu {

/// Where a GPU thread is.
enum class Wait : uint8_t {
  Running,
  Barrier,
  NamedBarrier,
  Shfl,
  Vote,
  Matrix,
  MBarrier,
  Registers, ///< setmaxnreg.inc until the register file has room
  Done
};

/// One queued cp.async (Emulator.h).
struct AsyncCopy {
  void *dst;
  const void *src;
  uint32_t size, srcSize;
  bool srcValid;
  uint8_t atIssue[16]; ///< the source bytes when issued (the copy may read them any time until the wait)
};

struct Thread {
  Context ctx;
  uint32_t linear = 0;
  uint32_t tid[3] = {0, 0, 0};
  Wait wait = Wait::Running;
  // The pending collective: its operands and, once the warp completed it, the
  // result (shfl: d | p << 32; vote: the 32-bit result).
  uint32_t mode = 0, a = 0, b = 0, c = 0, mask = 0;
  uint64_t result = 0;
  // A pending warp matrix instruction (Matrix.h): the lane's operands and
  // where its results go (both on the lane's fiber stack).
  const void *in = nullptr;
  void *out = nullptr;
  bool inValid = true;
  uint64_t descA = 0, descB = 0; // wgmma's matrix descriptors
  const uint32_t *aRegs = nullptr; // wgmma with A in registers: its four registers
  uint32_t polls = 0;             // consecutive unsuccessful mbarrier.test_wait polls
  // cp.async: the open group and the committed ones, oldest first.
  std::vector<AsyncCopy> openCopies;
  std::deque<std::vector<AsyncCopy>> committedCopies;
  // wgmma (Async.cpp): the uncommitted wgmmas and the committed groups not
  // retired by a wait_group, oldest first, as (kernel op id, record id).
  std::vector<std::pair<uint32_t, uint32_t>> wgmmaOpen;
  std::deque<std::vector<std::pair<uint32_t, uint32_t>>> wgmmaGroups;
  uint32_t wgmmaOp = 0;     ///< the op id of the wgmma being issued
  bool wgmmaFenced = false; ///< a wgmma.fence since the last register access
  /// fence.proxy.async (or fence.mbarrier_init) executed so far: a generic
  /// shared write made under count c is visible to the async proxy once the
  /// writer's count exceeds c.
  uint32_t proxyFences = 0;
  /// Per mbarrier (MBarrier::index): the completed phases this thread has
  /// observed by a successful wait (the happens-before edge from TMA).
  std::vector<uint64_t> seenPhases;
  uint32_t registers = 0; ///< per-thread registers under setmaxnreg (0: not yet tracked)
};

/// A wgmma.mma_async of one warpgroup between issue and retirement
/// (Async.cpp): the shared bytes it reads (window offsets) and how many of
/// the warpgroup's threads retired it.
struct WgmmaRecord {
  std::vector<uint32_t> bytes;
  uint32_t op = 0, warpgroup = 0, retired = 0;
};

/// One mbarrier object (PTX ISA, "Parallel synchronization and communication
/// instructions: mbarrier"): the expected and pending arrival counts of the
/// current phase, its pending transaction bytes and the number of completed
/// phases (the current phase's parity is phase & 1).
/// A TMA load issued on an mbarrier and not landed yet (Tma.cpp).
struct TmaLoad {
  void *dst;
  rlx_emu_tensor_map map;
  int32_t coords[5];
  uint32_t thread;
};

struct MBarrier {
  uint32_t expected = 0, pending = 0;
  /// The thread that initialized it and its proxy-fence count then: TMA may
  /// complete on it only after that thread's fence.mbarrier_init.
  uint32_t initThread = 0, initFences = 0;
  /// The initializing thread's own vector-clock entry at the init: another
  /// thread may use the mbarrier only once its clock has reached it (a
  /// barrier or other synchronization in between).
  uint32_t initClock = 0;
  bool initRaceReported = false;
  uint32_t index = 0; ///< of the block's mbarriers, in mbarrier.init order
  /// The phases the current phase's arrivals observed, and those the last
  /// completed phase's did (a waiter learns them with the completion).
  std::vector<uint64_t> arrivalsSeen, completedSeen;
  /// The same for vector clocks (Clocks.cpp).
  std::vector<uint32_t> arrivalsClock, completedClock;
  int64_t tx = 0;
  uint64_t phase = 0;
  std::vector<TmaLoad> loads; ///< land (and complete their bytes) at a wait
};

/// One byte of shared memory as the race checker sees it (Clocks.cpp): the
/// block it was last touched in, its last writer with the writer's clock
/// then, and up to two reads since that no later read covers.
struct ShadowByte {
  uint32_t block = 0;
  uint32_t writeClock = 0, clock1 = 0, clock2 = 0;
  int16_t writer = -1;
  int16_t reader1 = -1;
  int16_t reader2 = -1;
};

/// A workgroup buffer, or (last) the dynamic shared memory, of the running
/// block. Blocks run one after another, so one set serves every block.
struct SharedBuffer {
  uint8_t *data = nullptr; ///< inside the block's 2^18-byte shared window
  uint64_t bytes = 0;
  uint64_t align = 16;
  std::vector<ShadowByte> shadow;
  bool raceReported = false;
};

/// A named barrier (bar.sync / bar.arrive id, count) of the running block:
/// the count of its current phase (0: no arrival yet) and its arrivals.
struct NamedBarrier {
  uint32_t expected = 0, arrived = 0;
  std::vector<uint32_t> clock; ///< the arrivals' vector clocks, joined (Clocks.cpp)
  /// The mbarrier phases the arrivals observed (Thread::seenPhases, joined):
  /// a barrier passes that knowledge on to the threads it releases.
  std::vector<uint64_t> seen;
};

struct Launch {
  const rlx_emu_kernel *kernel = nullptr;
  std::string name;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t blockId[3] = {0, 0, 0};
  uint32_t numThreads = 0;
  uint32_t options = RLX_EMU_CHECK_ALL;

  std::vector<Thread> threads;
  std::deque<uint32_t> ready;
  uint32_t current = 0;
  NamedBarrier named[16];
  uint32_t exited = 0;
  Context scheduler;
  std::vector<void *> params; // kernel params, then one void** per shared buffer
  std::vector<void *> sharedPtrs;

  std::vector<SharedBuffer> shared; // static ones in order, then the dynamic one
  uint8_t *window = nullptr;        // the 2^18-byte shared window (Scheduler.cpp)
  uint64_t windowUsed = 0;          // bytes of it the buffers span

  // Asynchronous operations (Async.cpp), per window byte: the wgmmas in
  // flight that read it, and the last generic-proxy writer (thread + 1, 0:
  // none or an async-proxy write) with its proxy-fence count at the write.
  std::vector<uint16_t> inflight;
  std::vector<uint32_t> genericWriter, genericFences;
  // ... and the TMA load that writes it: its mbarrier's index + 1 (0: none)
  // and the completed-phase count after which a reader may read it.
  std::vector<uint32_t> tmaBarrier;
  std::vector<uint64_t> tmaPhase;
  uint32_t numMBarriers = 0;
  bool registersTracked = false; // a setmaxnreg ran in this block
  uint64_t registerPool = 65536;  // the CTA's registers (setmaxnreg)
  std::map<uint32_t, WgmmaRecord> wgmmas;
  uint32_t nextWgmma = 0;
  uint64_t tmaLoads = 0;      // TMA loads issued by the launch (even ones land at issue)
  uint32_t reportedKinds = 0; // Async.cpp's finding kinds already reported
  std::map<uintptr_t, MBarrier> mbarriers; // the running block's, by address
  uint32_t epoch = 1;               // advances at every block start
  // Vector clocks (Clocks.cpp): row t is thread t's; clockBlock[t] the epoch
  // its row belongs to.
  std::vector<uint32_t> clocks, clockBlock;

  // Findings (Report.cpp).
  std::vector<std::string> findings;
  uint64_t droppedFindings = 0;

  Thread &self() { return threads[current]; }
};

/// The launch running on this process (null outside rlx_emu_launch).
Launch *activeLaunch();
void setActiveLaunch(Launch *launch);
/// True on the OS thread inside rlx_emu_launch (also while its fibers run).
bool onLaunchThread();
std::mutex &processMutex();

// Report.cpp
constexpr uint32_t kMaxFindings = 20;
/// Records a finding of the running block's thread `t` (null: the launch).
void addFinding(Launch &l, const Thread *t, const std::string &what);
/// "(x,y,z)" of a linear thread id of the launch's block.
std::string threadCoords(const Launch &l, uint32_t linear);
std::string hexAddress(uintptr_t addr);
void setLastReport(const Launch &l);
void setLastReport(std::string text);

// Checker.cpp
/// The buffer name the checker reports for shared buffer `index`.
std::string sharedBufferName(const Launch &l, size_t index);
/// Forgets the inter-block race shadow of the launch that ended.
void clearGlobalShadow();
/// The buffer registered at `base` is replaced or removed: its shadow pages
/// leave the list clearGlobalShadow works through.
void forgetTouched(uintptr_t base);

// Scheduler.cpp
/// Suspends the calling GPU thread until the scheduler resumes it.
void waitHere(Launch &l);

// MBarrier.cpp
/// "<shared buffer>+<offset>" of an mbarrier address, for reports.
std::string mbarrierName(const Launch &l, const void *bar);
/// complete_tx of `bytes` on `m` (at `bar`), completing its phase when due.
void mbarrierCompleteTx(Launch &l, const void *bar, MBarrier &m, int64_t bytes);
/// Findings for TMA loads no wait landed, at the end of a block.
void checkPendingLoads(Launch &l);
/// Lands every queued TMA load (the scheduler does when no thread can run:
/// the copies complete eventually); whether there was any.
bool landAnyLoads(Launch &l);

// Async.cpp
/// Resets the asynchronous state for a new block.
void resetAsync(Launch &l);
/// A thread's exit: wgmmas it never committed or waited for are findings.
void checkAsyncAtExit(Launch &l, Thread &t);
/// Registers the block's threads hold (setmaxnreg), of the SM's 65536.
uint64_t blockRegisters(const Launch &l);
/// A shared access of [off, off + n) in the window by the running thread
/// (flags as __rlx_emu_access): in-flight wgmma operands and proxies.
void checkAsyncAccess(Launch &l, uint64_t off, uint64_t n, uint32_t flags);
/// The running thread issues a wgmma (before the warpgroup's rendezvous).
void wgmmaIssue(Launch &l, Thread &t, const char *name);
/// The warpgroup at `base` issued a wgmma reading the 2-byte elements at
/// window offsets `elements`: the record every thread of it waits for.
void wgmmaRecord(Launch &l, uint32_t base, const std::vector<uint32_t> &elements);
/// Kinds of findingOnce.
enum AsyncFinding : uint32_t {
  kInflightWrite = 1,
  kEarlyRead = 2,
  kNoFence = 4,
  kProxy = 8,
  kExit = 16,
  kWait = 32,
  kMBarrierInitFence = 64,
  kTmaUnwaited = 128,
  kInterBlock = 256,
  kCopySource = 512,
};
/// A TMA load into [off, off + n) of the window completes phase `phase` of
/// mbarrier `m`: readers must have observed that phase (Async.cpp).
void tmaWillWrite(Launch &l, uint64_t off, uint64_t n, const MBarrier &m);
/// The running thread observed `m`'s completed phases (a successful wait),
/// and with them what its arrivals had observed.
void observePhases(Launch &l, const MBarrier &m);
/// `into` = max(`into`, `from`), elementwise (observed mbarrier phases).
void joinSeen(std::vector<uint64_t> &into, const std::vector<uint64_t> &from);
/// Reports `what` once per launch for finding kind `kind` (a bit).
void findingOnce(Launch &l, const Thread *t, uint32_t kind, const std::string &what);

// Clocks.cpp
/// Thread t's vector clock (initialized for the running block on first use).
uint32_t *clockOf(Launch &l, uint32_t t);
/// The running thread releases: its clock joins `into`; its own entry ticks.
void clockRelease(Launch &l, std::vector<uint32_t> &into);
/// Thread t acquires `from` (joins it into its clock).
void clockAcquire(Launch &l, uint32_t t, const std::vector<uint32_t> &from);

// Tma.cpp
/// Where byte `offset` of a box lands under swizzle mode `swizzle` (0-3).
uint64_t swizzleOffset(uint64_t offset, uint32_t swizzle);
/// Performs the TMA loads queued on `m` (at `bar`): the boxes land in shared
/// memory and their bytes complete on the mbarrier.
void landLoads(Launch &l, const void *bar, MBarrier &m);

} // namespace rlx::emu

#endif // RLX_RUNTIME_EMULATOR_STATE_H
