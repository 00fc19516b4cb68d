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
enum class Wait : uint8_t { Running, Barrier, NamedBarrier, Shfl, Vote, Matrix, MBarrier, Done };

/// One queued cp.async (Emulator.h).
struct AsyncCopy {
  void *dst;
  const void *src;
  uint32_t size, srcSize;
  bool srcValid;
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
  int64_t tx = 0;
  uint64_t phase = 0;
  std::vector<TmaLoad> loads; ///< land (and complete their bytes) at a wait
};

/// One byte of shared memory as the race checker sees it: the barrier epoch
/// of the last access, the thread that wrote it in that epoch and up to two
/// distinct readers (two suffice to name a reader other than any thread T).
struct ShadowByte {
  uint32_t epoch = 0;
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
  uint32_t atBarrier = 0;
  NamedBarrier named[16];
  uint32_t exited = 0;
  Context scheduler;
  std::vector<void *> params; // kernel params, then one void** per shared buffer
  std::vector<void *> sharedPtrs;

  std::vector<SharedBuffer> shared; // static ones in order, then the dynamic one
  std::map<uintptr_t, MBarrier> mbarriers; // the running block's, by address
  uint32_t epoch = 1;               // advances at every barrier and block start

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

// Tma.cpp
/// Where byte `offset` of a box lands under swizzle mode `swizzle` (0-3).
uint64_t swizzleOffset(uint64_t offset, uint32_t swizzle);
/// Performs the TMA loads queued on `m` (at `bar`): the boxes land in shared
/// memory and their bytes complete on the mbarrier.
void landLoads(Launch &l, const void *bar, MBarrier &m);

} // namespace rlx::emu

#endif // RLX_RUNTIME_EMULATOR_STATE_H
