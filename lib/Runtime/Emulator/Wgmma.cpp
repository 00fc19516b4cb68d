//===- Wgmma.cpp - Hopper warpgroup MMA in the emulator -------------------===//
//
// The operand addressing and accumulator layout of Wgmma.h, and the hooks:
// the 128 threads of a warpgroup (four consecutive warps, the first a
// multiple of four) rendezvous; the last to arrive reads B (and A, unless it
// comes from the threads' registers) from shared memory through the
// descriptors (bounds- and race-checked reads) and writes every thread's
// accumulator registers. The emulator computes the product when the
// instruction issues; Async.cpp then holds the operands in flight until
// the warpgroup's wgmma.wait_group retires it.
//===----------------------------------------------------------------------===//

#include "State.h"
#include "Wgmma.h"

#include <cstring>

using namespace rlx::emu;

uint32_t rlx::emu::wgmmaElementAddress(uint64_t desc, uint32_t r, uint32_t k, std::string &why) {
  uint32_t start = static_cast<uint32_t>(desc & 0x3FFF) << 4;
  uint32_t lbo = static_cast<uint32_t>((desc >> 16) & 0x3FFF) << 4;
  uint32_t sbo = static_cast<uint32_t>((desc >> 32) & 0x3FFF) << 4;
  uint32_t baseOffset = static_cast<uint32_t>((desc >> 49) & 7);
  uint32_t mode = static_cast<uint32_t>(desc >> 62);
  if (baseOffset)
    why = "a matrix descriptor with a base offset (not emulated)";
  if (mode == 0)
    return start + (r / 8) * sbo + (k / 8) * lbo + (r % 8) * 16 + (k % 8) * 2;
  // 1: 128B (s = 3), 2: 64B (s = 2), 3: 32B (s = 1).
  uint32_t s = 4 - mode, width = 16u << s;
  uint32_t a = start + (r / 8) * sbo + (r % 8) * width + 2 * k;
  uint32_t mask = (1u << s) - 1;
  return a ^ (((a >> 7) & mask) << 4);
}

uint32_t rlx::emu::wgmmaElementAddressMN(uint64_t desc, uint32_t r, uint32_t k, std::string &why) {
  uint32_t start = static_cast<uint32_t>(desc & 0x3FFF) << 4;
  uint32_t lbo = static_cast<uint32_t>((desc >> 16) & 0x3FFF) << 4;
  uint32_t sbo = static_cast<uint32_t>((desc >> 32) & 0x3FFF) << 4;
  uint32_t mode = static_cast<uint32_t>(desc >> 62);
  if ((desc >> 49) & 7)
    why = "a matrix descriptor with a base offset (not emulated)";
  if (mode == 0)
    return start + (r / 8) * sbo + (k / 8) * lbo + (k % 8) * 16 + (r % 8) * 2;
  uint32_t s = 4 - mode, width = 16u << s, chunk = width / 2;
  uint32_t a = start + (r / chunk) * lbo + (k / 8) * sbo + (k % 8) * width + (r % chunk) * 2;
  uint32_t mask = (1u << s) - 1;
  return a ^ (((a >> 7) & mask) << 4);
}

namespace {

constexpr uint32_t kWarpgroup = 128;
/// flags: bit 0 scale-d (accumulate into C), bits 1, 2 negate A, B, bits 3,
/// 4 transpose (MN-major) A, B.
constexpr uint32_t kScaleD = 1, kNegA = 2, kNegB = 4, kTransA = 8, kTransB = 16;

/// Element at shared-window address `addr`; an address past the 2^18-byte
/// window is reported once (in `why`) and reads as 0.
float load16(uint8_t *window, uint32_t addr, MmaType type, std::string &why,
             std::vector<uint32_t> &read) {
  uint16_t bits = 0;
  if (addr + 2 > (1u << 18)) {
    if (why.empty())
      why = "a matrix descriptor addresses " + std::to_string(addr) +
            ", past the 2^18-byte shared window";
    return 0.0f;
  }
  uint8_t *p = window + addr;
  read.push_back(addr);
  if (__rlx_emu_access(p, 2, RLX_EMU_READ | RLX_EMU_ASYNC))
    std::memcpy(&bits, p, 2);
  return type == MmaType::BF16 ? bf16ToFloat(bits) : halfToFloat(bits);
}

float fromBits(uint16_t bits, MmaType type) {
  return type == MmaType::BF16 ? bf16ToFloat(bits) : halfToFloat(bits);
}

/// One wgmma of the calling thread: A under `descA`, or (aRegs non-null) in
/// the thread's four registers. The last thread of the warpgroup to arrive
/// computes it for all 128.
void wgmma(uint32_t type, uint32_t n, uint64_t descA, const uint32_t *aRegs, uint64_t descB,
           const float *c, float *d, uint32_t flags) {
  Launch *l = activeLaunch();
  if (!l)
    return;
  Thread &t = l->self();
  const char *name = aRegs ? "wgmma.mma_async (A in registers)" : "wgmma.mma_async";
  if (type > 1 || n < 8 || n > 256 || n % 8 || (flags & ~31u) || (aRegs && (flags & kTransA))) {
    addFinding(*l, &t, std::string(name) + ": bad configuration (type " + std::to_string(type) +
                           ", n " + std::to_string(n) + ", flags " + std::to_string(flags) + ")");
    return;
  }
  const uint32_t base = t.linear - t.linear % kWarpgroup;
  if (l->numThreads - base < kWarpgroup) {
    addFinding(*l, &t, std::string(name) + " in a partial warpgroup (the block has " +
                           std::to_string(l->numThreads) + " threads): it needs 128");
    return;
  }
  wgmmaIssue(*l, t, name);
  const uint32_t key = type | n << 8 | flags << 20 | (aRegs ? 1u << 28 : 0u);
  t.wait = Wait::Matrix;
  t.mode = 2;
  t.mask = key;
  t.in = c;
  t.out = d;
  t.aRegs = aRegs;
  t.descA = descA;
  t.descB = descB;
  for (uint32_t m = 0; m < kWarpgroup; ++m) {
    const Thread &o = l->threads[base + m];
    if (o.wait != Wait::Matrix || o.mode != 2 || o.mask != key) {
      waitHere(*l);
      return;
    }
  }
  // Every thread arrived with the same shape; the descriptors must agree too.
  for (uint32_t m = 0; m < kWarpgroup; ++m) {
    const Thread &o = l->threads[base + m];
    if ((!aRegs && o.descA != descA) || o.descB != descB) {
      addFinding(*l, &o, std::string(name) + ": the warpgroup's threads disagree on the matrix "
                                             "descriptors (they must be warpgroup-uniform)");
      break;
    }
  }
  auto window = reinterpret_cast<uint8_t *>(reinterpret_cast<uintptr_t>(l->shared[0].data) &
                                            ~((uintptr_t(1) << 18) - 1));
  MmaType mt = static_cast<MmaType>(type);
  std::string why;
  // The operands off the fiber stack (20 KiB); one launch runs at a time.
  static thread_local float A[64][16], B[256][16];
  float sa = flags & kNegA ? -1.0f : 1.0f, sb = flags & kNegB ? -1.0f : 1.0f;
  auto address = [&](uint64_t desc, bool mnMajor, uint32_t r, uint32_t k) {
    return mnMajor ? wgmmaElementAddressMN(desc, r, k, why) : wgmmaElementAddress(desc, r, k, why);
  };
  // Every address first: a descriptor past the window is one finding, and
  // nothing is read through it.
  auto inWindow = [&](uint64_t desc, bool mnMajor, uint32_t rows) {
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t k = 0; k < 16; ++k)
        if (address(desc, mnMajor, r, k) + 2 > (1u << 18))
          return false;
    return true;
  };
  if ((!aRegs && !inWindow(descA, flags & kTransA, 64)) || !inWindow(descB, flags & kTransB, n))
    why = "a matrix descriptor addresses past the 2^18-byte shared window";
  std::memset(A, 0, sizeof A);
  std::memset(B, 0, sizeof B);
  static thread_local std::vector<uint32_t> read;
  read.clear();
  if (why.empty()) {
    if (aRegs) {
      for (uint32_t m = 0; m < kWarpgroup; ++m) {
        const uint32_t *regs = l->threads[base + m].aRegs;
        for (uint32_t reg = 0; reg < 4; ++reg) {
          uint32_t row, k;
          wgmmaRegisterAPosition(m, reg, row, k);
          A[row][k] = sa * fromBits(static_cast<uint16_t>(regs[reg]), mt);
          A[row][k + 1] = sa * fromBits(static_cast<uint16_t>(regs[reg] >> 16), mt);
        }
      }
    } else {
      for (uint32_t r = 0; r < 64; ++r)
        for (uint32_t k = 0; k < 16; ++k)
          A[r][k] = sa * load16(window, address(descA, flags & kTransA, r, k), mt, why, read);
    }
    for (uint32_t r = 0; r < n; ++r)
      for (uint32_t k = 0; k < 16; ++k)
        B[r][k] = sb * load16(window, address(descB, flags & kTransB, r, k), mt, why, read);
  }
  wgmmaRecord(*l, base, read);
  if (!why.empty())
    addFinding(*l, &t, std::string(name) + ": " + why);
  for (uint32_t m = 0; m < kWarpgroup; ++m) {
    Thread &o = l->threads[base + m];
    const float *cin = static_cast<const float *>(o.in);
    float *dout = static_cast<float *>(o.out);
    for (uint32_t i = 0; i < n / 2; ++i) {
      uint32_t row, col;
      wgmmaAccumulatorPosition(m, i, row, col);
      double sum = 0;
      for (uint32_t k = 0; k < 16; ++k)
        sum += static_cast<double>(A[row][k]) * static_cast<double>(B[col][k]);
      if (flags & kScaleD)
        sum += static_cast<double>(cin[i]);
      dout[i] = static_cast<float>(sum);
    }
    o.wait = Wait::Running;
    if (base + m != t.linear)
      l->ready.push_back(o.linear);
  }
}

} // namespace

extern "C" void __rlx_emu_wgmma(uint32_t type, uint32_t n, uint64_t desc_a, uint64_t desc_b,
                                const float *c, float *d, uint32_t flags) {
  wgmma(type, n, desc_a, nullptr, desc_b, c, d, flags);
}

extern "C" void __rlx_emu_wgmma_rs(uint32_t type, uint32_t n, const uint32_t *a, uint64_t desc_b,
                                   const float *c, float *d, uint32_t flags) {
  wgmma(type, n, 0, a, desc_b, c, d, flags);
}
