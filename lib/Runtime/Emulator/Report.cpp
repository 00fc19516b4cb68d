//===- Report.cpp - The emulator's findings -------------------------------===//
//
// Every finding is one line naming the kernel, the block and the thread (when
// one is to blame), then what happened. A launch keeps the first
// kMaxFindings lines and counts the rest ("... and N more findings").
//===----------------------------------------------------------------------===//

#include "State.h"

#include <cstdio>

namespace rlx::emu {

namespace {
std::string &lastReport() {
  static std::string text;
  return text;
}
} // namespace

std::string threadCoords(const Launch &l, uint32_t linear) {
  uint32_t bx = l.block[0], by = l.block[1];
  uint32_t x = linear % bx, y = linear / bx % by, z = linear / bx / by;
  char buf[48];
  std::snprintf(buf, sizeof buf, "(%u,%u,%u)", x, y, z);
  return buf;
}

std::string hexAddress(uintptr_t addr) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(addr));
  return buf;
}

void addFinding(Launch &l, const Thread *t, const std::string &what) {
  if (l.findings.size() >= kMaxFindings) {
    ++l.droppedFindings;
    return;
  }
  char head[160];
  if (t) {
    std::snprintf(head, sizeof head, "block (%u,%u,%u) thread %s: ", l.blockId[0], l.blockId[1],
                  l.blockId[2], threadCoords(l, t->linear).c_str());
    l.findings.push_back("kernel '" + l.name + "' " + head + what);
  } else {
    l.findings.push_back("kernel '" + l.name + "': " + what);
  }
}

void setLastReport(const Launch &l) {
  std::string text;
  for (const std::string &f : l.findings)
    text += f + "\n";
  if (l.droppedFindings)
    text += "... and " + std::to_string(l.droppedFindings) + " more findings\n";
  lastReport() = std::move(text);
}

void setLastReport(std::string text) { lastReport() = std::move(text); }

} // namespace rlx::emu

extern "C" const char *rlx_emu_last_report(void) { return rlx::emu::lastReport().c_str(); }
