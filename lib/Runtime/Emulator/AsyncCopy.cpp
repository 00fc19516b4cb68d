//===- AsyncCopy.cpp - cp.async groups in the emulator ---------------------===//
//
// PTX cp.async: copies are queued per thread in groups (commit_group) and
// become visible only at the wait_group that completes them; this is what
// makes a missing wait show up as wrong numbers under the emulator.
//===----------------------------------------------------------------------===//

#include "State.h"

#include <cstring>

using namespace rlx::emu;

namespace {

void complete(Launch &l, Thread &t, const std::vector<AsyncCopy> &group) {
  for (const AsyncCopy &c : group) {
    if (!__rlx_emu_access(c.dst, c.size, RLX_EMU_WRITE))
      continue;
    uint32_t n = c.srcValid ? std::min(c.srcSize, c.size) : 0;
    if (n && std::memcmp(c.atIssue, c.src, n) != 0)
      findingOnce(l, &t, kCopySource,
                  "cp.async source " + hexAddress(reinterpret_cast<uintptr_t>(c.src)) +
                      " changed between the copy's issue and the cp.async.wait_group that "
                      "completes it (the copy may read it at any time in between)");
    if (n)
      std::memcpy(c.dst, c.src, n);
    if (n < c.size)
      std::memset(static_cast<uint8_t *>(c.dst) + n, 0, c.size - n);
  }
}

} // namespace

extern "C" void __rlx_emu_cp_async(void *dst, const void *src, uint32_t size,
                                   uint32_t src_size) {
  Launch *l = activeLaunch();
  if (!l)
    return;
  Thread &t = l->self();
  if (size != 4 && size != 8 && size != 16) {
    addFinding(*l, &t, "cp.async of " + std::to_string(size) + " bytes (4, 8 or 16)");
    return;
  }
  // Both addresses aligned to the copy's size (PTX ISA, cp.async); a source
  // of 0 bytes is not read.
  for (const void *p : {static_cast<const void *>(dst), src})
    if ((l->options & RLX_EMU_CHECK_BOUNDS) && (p == dst || src_size) &&
        reinterpret_cast<uintptr_t>(p) % size) {
      addFinding(*l, &t, "cp.async of " + std::to_string(size) + " bytes with the misaligned " +
                             (p == dst ? "shared destination " : "global source ") +
                             hexAddress(reinterpret_cast<uintptr_t>(p)) + " (it needs " +
                             std::to_string(size) + "-byte alignment)");
      return;
    }
  bool srcValid =
      src_size == 0 || __rlx_emu_access(src, std::min(src_size, size), RLX_EMU_READ) != 0;
  AsyncCopy c{dst, src, size, src_size, srcValid, {}};
  if (srcValid && src_size)
    std::memcpy(c.atIssue, src, std::min(src_size, size));
  t.openCopies.push_back(c);
}

extern "C" void __rlx_emu_cp_async_commit(void) {
  Launch *l = activeLaunch();
  if (!l)
    return;
  Thread &t = l->self();
  t.committedCopies.push_back(std::move(t.openCopies));
  t.openCopies.clear();
}

extern "C" void __rlx_emu_cp_async_wait(uint32_t n) {
  Launch *l = activeLaunch();
  if (!l)
    return;
  Thread &t = l->self();
  while (t.committedCopies.size() > n) {
    complete(*l, t, t.committedCopies.front());
    t.committedCopies.pop_front();
  }
}
