//===- Checker.cpp - Bounds checks and the shared-memory race shadow ------===//
//
// __rlx_emu_access runs before every load and store of a lowered kernel. It
// classifies the address: one of the running block's shared buffers (bounds
// and race checked), a registered global buffer, or the calling fiber's own
// stack (private memory: always fine); anything else is out of bounds,
// reported with the nearest buffer, and skipped.
//
// The race shadow keeps, per shared byte, its last writer and up to two
// reads since, each with the accessing thread's vector-clock entry then
// (Clocks.cpp). A write by T conflicts with any earlier access by U != T,
// and a read by T with an earlier write by U != T, unless T's clock has seen
// U's entry reach that access (a chain of barriers or mbarriers orders
// them); the first conflict per buffer and launch is reported. Global
// memory: bounds, and races between blocks of a launch (globalRaceCheck).
//===----------------------------------------------------------------------===//

#include "State.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sys/mman.h>

using namespace rlx::emu;

namespace rlx::emu {

namespace {
struct GlobalBuffer {
  uint64_t bytes = 0;
  std::string name;
  /// The inter-block race shadow, per byte: the block (linear id + 1) that
  /// last wrote / read it in the running launch (0: none; kManyReaders: more
  /// than one block read it). Mapped zeroed on the first checked access
  /// (untouched pages stay uncommitted); the pages a launch touched are
  /// released (zero again) when it ends.
  std::shared_ptr<uint32_t[]> writer, reader;
  std::vector<uint8_t> dirty; ///< per shadow page: touched by the running launch
};
// Keyed by base address; registered buffers never overlap.
std::map<uintptr_t, GlobalBuffer> &registry() {
  static std::map<uintptr_t, GlobalBuffer> buffers;
  return buffers;
}

/// Host entry points lock the process mutex, except when called from a
/// kernel of the running launch (which holds it already).
struct HostLock {
  HostLock() : owns(!onLaunchThread()) {
    if (owns)
      processMutex().lock();
  }
  ~HostLock() {
    if (owns)
      processMutex().unlock();
  }
  bool owns;
};

const char *accessName(uint32_t flags) { return flags & RLX_EMU_WRITE ? "write" : "read"; }

std::string accessText(uintptr_t a, uint64_t bytes, uint32_t flags) {
  return std::string(accessName(flags)) + " of " + std::to_string(bytes) + " bytes at " +
         hexAddress(a);
}

/// Where [a, a + n) lies relative to [base, base + size).
std::string relation(uintptr_t a, uint64_t n, uintptr_t base, uint64_t size,
                     const std::string &name) {
  const uintptr_t end = base + size;
  const std::string what = name + " (" + std::to_string(size) + " bytes)";
  if (a < base)
    return std::to_string(base - a) + " bytes before the start of " + what;
  if (a >= end)
    return "offset " + std::to_string(a - base) + " of " + what + ", " +
           std::to_string(a - end) + " bytes past its end";
  return "offset " + std::to_string(a - base) + " of " + what + ", the access ends " +
         std::to_string(a + n - end) + " bytes past its end";
}

/// The buffer nearest to [a, a + n), shared or global, described.
std::string nearest(const Launch &l, uintptr_t a, uint64_t n) {
  uint64_t best = ~uint64_t(0);
  std::string text;
  auto consider = [&](uintptr_t base, uint64_t size, const std::string &name) {
    uint64_t gap = a < base ? base - a : (a >= base + size ? a - (base + size) : 0);
    if (size == 0 && gap != 0)
      return; // an empty buffer (e.g. no dynamic shared memory) is no landmark
    if (gap < best) {
      best = gap;
      text = relation(a, n, base, size, name);
    }
  };
  for (size_t i = 0; i < l.shared.size(); ++i)
    consider(reinterpret_cast<uintptr_t>(l.shared[i].data), l.shared[i].bytes,
             sharedBufferName(l, i));
  auto &reg = registry();
  auto next = reg.upper_bound(a);
  if (next != reg.end())
    consider(next->first, next->second.bytes, "buffer '" + next->second.name + "'");
  if (next != reg.begin()) {
    auto prev = std::prev(next);
    consider(prev->first, prev->second.bytes, "buffer '" + prev->second.name + "'");
  }
  if (text.empty())
    return "not inside any buffer (none is registered)";
  return "not inside any buffer; nearest: " + text;
}

/// The registered buffer containing byte `a`, or end().
std::map<uintptr_t, GlobalBuffer>::const_iterator globalAt(uintptr_t a) {
  auto &reg = registry();
  auto it = reg.upper_bound(a);
  if (it == reg.begin())
    return reg.end();
  --it;
  return a - it->first < it->second.bytes ? it : reg.cend();
}

/// The pages of race shadow the running launch touched, to clear at its end.
/// (buffer, page) of every dirty shadow page (registry nodes are stable,
/// and nothing unregisters during a launch).
std::vector<std::pair<GlobalBuffer *, uint64_t>> &touchedPages() {
  static std::vector<std::pair<GlobalBuffer *, uint64_t>> pages;
  return pages;
}
constexpr uint64_t kShadowPage = 1024; // entries (4 KiB)

constexpr uint32_t kManyReaders = ~0u;

/// `n` zeroed entries in their own pages (released with madvise).
std::shared_ptr<uint32_t[]> zeroed(uint64_t n) {
  const size_t bytes = (n ? n : 1) * sizeof(uint32_t);
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return nullptr;
  return std::shared_ptr<uint32_t[]>(static_cast<uint32_t *>(p),
                                     [bytes](uint32_t *q) { munmap(q, bytes); });
}

/// Blocks of a launch may run concurrently in any order and nothing orders
/// them (no atomics or grid barriers here): two blocks touching one global
/// byte, at least one writing, race on the GPU. The emulator runs blocks
/// one after another, so it finds such pairs from the shadow, not by chance.
void globalRaceCheck(Launch &l, GlobalBuffer &g, uint64_t offset, uint64_t n, uint32_t flags) {
  if (l.reportedKinds & kInterBlock)
    return;
  if (!g.writer || !g.reader) {
    g.writer = zeroed(g.bytes);
    g.reader = zeroed(g.bytes);
    if (!g.writer || !g.reader) {
      g.writer.reset();
      g.reader.reset();
      return;
    }
    g.dirty.assign(g.bytes / kShadowPage + 1, 0);
  }
  const uint32_t me =
      1 + l.blockId[0] + l.grid[0] * (l.blockId[1] + l.grid[1] * l.blockId[2]);
  const bool write = flags & RLX_EMU_WRITE;
  for (uint64_t p = offset / kShadowPage; p <= (offset + n - 1) / kShadowPage; ++p)
    if (!g.dirty[p]) {
      g.dirty[p] = 1;
      touchedPages().push_back({&g, p});
    }
  for (uint64_t i = offset; i < offset + n; ++i) {
    uint32_t &w = g.writer[i], &r = g.reader[i];
    uint32_t other = w && w != me ? w : (write && r && r != me ? r : 0);
    if (other) {
      uint32_t o = other - 1, gx = l.grid[0], gy = l.grid[1];
      std::string them = other == kManyReaders
                             ? "other blocks"
                             : "block (" + std::to_string(o % gx) + "," +
                                   std::to_string(o / gx % gy) + "," +
                                   std::to_string(o / gx / gy) + ")";
      findingOnce(l, &l.self(), kInterBlock,
                  std::string(write ? "writes" : "reads") + " byte " + std::to_string(i) +
                      " of buffer '" + g.name + "', which " + them +
                      (w == other ? " wrote" : " read") +
                      " in the same launch: blocks run concurrently in any order, so this is a "
                      "race on the GPU");
      return;
    }
    if (write)
      w = me;
    else
      r = !r || r == me ? me : kManyReaders;
  }
}

void raceCheck(Launch &l, size_t index, uint64_t offset, uint64_t n, uint32_t flags) {
  SharedBuffer &s = l.shared[index];
  if (s.raceReported || s.shadow.empty())
    return;
  const bool write = flags & RLX_EMU_WRITE;
  // TMA's writes are the async proxy's, ordered by their mbarrier phase
  // (Async.cpp checks them).
  if (write && (flags & RLX_EMU_ASYNC))
    return;
  const int16_t me = static_cast<int16_t>(l.current);
  const uint32_t *vc = clockOf(l, l.current);
  const uint32_t now = vc[l.current];
  // An access by thread u at clock c happens before ours if our clock has
  // seen u's entry reach c.
  auto unordered = [&](int16_t u, uint32_t c) { return u >= 0 && u != me && vc[u] < c; };
  for (uint64_t i = offset; i < offset + n; ++i) {
    ShadowByte &b = s.shadow[i];
    if (b.block != l.epoch) {
      b = ShadowByte{};
      b.block = l.epoch;
    }
    int16_t other = -1;
    const char *otherKind = nullptr;
    if (unordered(b.writer, b.writeClock)) {
      other = b.writer;
      otherKind = "write";
    } else if (write && unordered(b.reader1, b.clock1)) {
      other = b.reader1;
      otherKind = "read";
    } else if (write && unordered(b.reader2, b.clock2)) {
      other = b.reader2;
      otherKind = "read";
    }
    if (other >= 0) {
      s.raceReported = true;
      addFinding(l, &l.self(),
                 "data race on " + sharedBufferName(l, index) + " at byte offset " +
                     std::to_string(i) + " (" + hexAddress(reinterpret_cast<uintptr_t>(s.data) + i) +
                     "): " + accessName(flags) + " by thread " + threadCoords(l, l.current) +
                     " (linear " + std::to_string(l.current) + ") and " + otherKind +
                     " by thread " + threadCoords(l, other) + " (linear " +
                     std::to_string(other) +
                     ") with no barrier in between (no synchronization orders the two)");
      return;
    }
    if (write) {
      b.writer = me;
      b.writeClock = now;
      b.reader1 = b.reader2 = -1;
    } else if (b.reader1 < 0 || b.reader1 == me || !unordered(b.reader1, b.clock1)) {
      b.reader1 = me;
      b.clock1 = now;
    } else {
      b.reader2 = me;
      b.clock2 = now;
    }
  }
}
} // namespace

/// Drops the buffer at `base` from the pages to clear (it is replaced or
/// unregistered: its shadow goes with it).
void forgetTouched(uintptr_t base) {
  auto it = registry().find(base);
  if (it == registry().end())
    return;
  GlobalBuffer *g = &it->second;
  auto &pages = touchedPages();
  pages.erase(std::remove_if(pages.begin(), pages.end(),
                             [&](const auto &p) { return p.first == g; }),
              pages.end());
}

void clearGlobalShadow() {
  // A page of shadow is 4 KiB, page-aligned in its mapping: MADV_DONTNEED
  // zeroes it and gives the memory back.
  for (auto [g, page] : touchedPages()) {
    if (!g->writer || page >= g->dirty.size())
      continue;
    for (uint32_t *s : {g->writer.get(), g->reader.get()})
      if (madvise(s + page * kShadowPage, kShadowPage * sizeof(uint32_t), MADV_DONTNEED) != 0)
        std::memset(s + page * kShadowPage, 0,
                    std::min(kShadowPage, g->bytes - page * kShadowPage) * sizeof(uint32_t));
    g->dirty[page] = 0;
  }
  touchedPages().clear();
}

std::string sharedBufferName(const Launch &l, size_t index) {
  if (index + 1 == l.shared.size())
    return "dynamic shared memory";
  return "shared buffer #" + std::to_string(index);
}

} // namespace rlx::emu

extern "C" uint32_t __rlx_emu_access(const void *addr, uint64_t bytes, uint32_t flags) {
  Launch *l = activeLaunch();
  if (!l || !(l->options & RLX_EMU_CHECK_ALL))
    return 1;
  // Atomics are race-checked as reads (RLX_EMU_ATOMIC).
  if (flags & RLX_EMU_ATOMIC)
    flags &= ~uint32_t(RLX_EMU_WRITE | RLX_EMU_ATOMIC);
  const bool bounds = l->options & RLX_EMU_CHECK_BOUNDS;
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  const uint64_t n = bytes;
  if (uint32_t log = (flags >> RLX_EMU_ALIGN_SHIFT) & 0xFF; log && bounds) {
    const uint64_t align = uint64_t(1) << (log - 1);
    if (a % align) {
      addFinding(*l, &l->self(),
                 "misaligned " + accessText(a, n, flags) + ": the instruction needs " +
                     std::to_string(align) + "-byte alignment (the GPU's misaligned address "
                     "error)");
      return 0;
    }
  }

  for (size_t i = 0; i < l->shared.size(); ++i) {
    const SharedBuffer &s = l->shared[i];
    const uintptr_t base = reinterpret_cast<uintptr_t>(s.data);
    if (a < base || a - base >= s.bytes)
      continue;
    const uint64_t offset = a - base;
    if (n > s.bytes - offset) {
      if (!bounds)
        return 1;
      addFinding(*l, &l->self(),
                 "out-of-bounds " + accessText(a, n, flags) + ": " +
                     relation(a, n, base, s.bytes, sharedBufferName(*l, i)));
      return 0;
    }
    if (l->options & RLX_EMU_CHECK_RACES) {
      raceCheck(*l, i, offset, n, flags);
      checkAsyncAccess(*l, a - reinterpret_cast<uintptr_t>(l->window), n, flags);
    }
    return 1;
  }
  if (!bounds)
    return 1;

  auto &reg = registry();
  auto it = globalAt(a);
  if (it != reg.end()) {
    uint64_t offset = a - it->first;
    if (n <= it->second.bytes - offset) {
      if (l->options & RLX_EMU_CHECK_RACES)
        globalRaceCheck(*l, reg.find(it->first)->second, offset, n, flags);
      return 1;
    }
    // Past its end: still valid memory when registered buffers follow.
    uintptr_t pos = it->first + it->second.bytes;
    auto cur = it;
    while (pos < a + n) {
      auto nx = std::next(cur);
      if (nx == reg.end() || nx->first != pos || nx->second.bytes == 0)
        break;
      cur = nx;
      pos = cur->first + cur->second.bytes;
    }
    std::string what = "out-of-bounds " + accessText(a, n, flags) + ": " +
                       relation(a, n, it->first, it->second.bytes, "buffer '" + it->second.name + "'");
    if (pos >= a + n) {
      addFinding(*l, &l->self(), what + " (into the adjacent buffer '" + cur->second.name + "')");
      return 1;
    }
    addFinding(*l, &l->self(), what);
    return 0;
  }

  // Private memory: the fiber's own stack.
  const Context &ctx = l->self().ctx;
  const uintptr_t lo = reinterpret_cast<uintptr_t>(ctx.stackLo);
  if (a >= lo && a - lo < ctx.stackSize && n <= ctx.stackSize - (a - lo))
    return 1;
#ifdef RLX_EMU_ASAN
  if (__asan_addr_is_in_fake_stack(__asan_get_current_fake_stack(), const_cast<void *>(addr),
                                   nullptr, nullptr))
    return 1;
#endif

  addFinding(*l, &l->self(), "out-of-bounds " + accessText(a, n, flags) + ": " + nearest(*l, a, n));
  return 0;
}

extern "C" int rlx_emu_register_buffer(const void *base, uint64_t bytes, const char *name) {
  if (!base)
    return 1;
  HostLock lock;
  auto &reg = registry();
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  auto next = reg.upper_bound(b);
  if (next != reg.end() && bytes > next->first - b)
    return 2; // overlaps the next buffer
  if (next != reg.begin()) {
    auto prev = std::prev(next);
    if (prev->first != b && b - prev->first < prev->second.bytes)
      return 2; // inside the previous buffer
  }
  forgetTouched(b);
  GlobalBuffer g;
  g.bytes = bytes;
  g.name = name ? name : "<unnamed>";
  reg[b] = std::move(g);
  return 0;
}

extern "C" void rlx_emu_unregister_buffer(const void *base) {
  HostLock lock;
  forgetTouched(reinterpret_cast<uintptr_t>(base));
  registry().erase(reinterpret_cast<uintptr_t>(base));
}
