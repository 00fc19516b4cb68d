//===- Tma.cpp - TMA tiled loads in the emulator --------------------------===//
//
// PTX cp.async.bulk.tensor.<n>d.shared::cluster.global.tile
// .mbarrier::complete_tx::bytes: a box of the tensor a tensor map describes,
// at signed element coordinates, lands densely in shared memory (innermost
// dimension first; elements outside the tensor are zero), its shared-memory
// bytes permuted by the map's swizzle, and its
// byte count completes on the mbarrier. The emulator's tensor map
// (rlx_emu_tensor_map, made by rlx_emu_encode_tensor_map with the checks of
// cuTensorMapEncodeTiled) stands for the driver's opaque CUtensorMap.
//
// Every second load of a launch lands at issue; the rest are queued on their mbarrier and
// land when no thread can run, or at a test_wait on that mbarrier: reading
// the box before the wait that completes it sees the old bytes (and is a
// race the checker reports), and writing into bytes a wgmma still reads is
// a finding (Async.cpp).
//===----------------------------------------------------------------------===//

#include "State.h"

#include <cstring>

using namespace rlx::emu;

namespace {

constexpr uint32_t kMagic = 0x544d5852; // "RXMT"
static_assert(sizeof(rlx_emu_tensor_map) == 128, "a CUtensorMap is 128 bytes");

bool inShared(const Launch &l, uintptr_t a, uint64_t n) {
  for (const SharedBuffer &s : l.shared) {
    auto base = reinterpret_cast<uintptr_t>(s.data);
    if (a >= base && a - base <= s.bytes && n <= s.bytes - (a - base))
      return true;
  }
  return false;
}

uint64_t boxBytes(const rlx_emu_tensor_map &m) {
  uint64_t n = m.element_bytes;
  for (uint32_t d = 0; d < m.rank; ++d)
    n *= m.box[d];
  return n;
}

/// The swizzle's 16-byte-chunk XOR mask (0: none) and its span in bytes.
uint32_t swizzleMask(uint32_t swizzle) { return swizzle ? (1u << swizzle) - 1 : 0; }
uint32_t swizzleSpan(uint32_t swizzle) { return swizzle ? 16u << swizzle : 0; }

} // namespace

uint64_t rlx::emu::swizzleOffset(uint64_t offset, uint32_t swizzle) {
  // Bits [4, 4 + s) of the byte offset are XORed with bits [7, 7 + s): the
  // 16-byte chunk within a 16·2^s-byte row is permuted by the row within an
  // 8-row (128·2^s-byte) atom (CU_TENSOR_MAP_SWIZZLE_32B/64B/128B: s = 1/2/3).
  uint64_t mask = swizzleMask(swizzle);
  return offset ^ (((offset >> 7) & mask) << 4);
}

void rlx::emu::landLoads(Launch &l, const void *bar, MBarrier &m) {
  std::vector<TmaLoad> loads = std::move(m.loads);
  m.loads.clear();
  uint32_t saved = l.current;
  for (const TmaLoad &ld : loads) {
    l.current = ld.thread; // accesses and findings are the issuing thread's
    const rlx_emu_tensor_map &map = ld.map;
    const uint32_t eb = map.element_bytes;
    const uint64_t bytes = boxBytes(map);
    uint64_t count[5] = {1, 1, 1, 1, 1};
    for (uint32_t d = 0; d < map.rank; ++d)
      count[d] = map.box[d];
    uint8_t element[8];
    for (uint64_t e = 0, total = bytes / eb; e < total; ++e) {
      // Box element e (innermost fastest) at tensor coordinates c.
      uint64_t rest = e;
      bool inside = true;
      uint64_t src = 0;
      for (uint32_t d = 0; d < map.rank; ++d) {
        int64_t c = static_cast<int64_t>(ld.coords[d]) + static_cast<int64_t>(rest % count[d]);
        rest /= count[d];
        if (c < 0 || static_cast<uint64_t>(c) >= map.dims[d])
          inside = false;
        else
          src += static_cast<uint64_t>(c) * (d ? map.strides[d - 1] : eb);
      }
      if (inside) {
        const uint8_t *p = static_cast<const uint8_t *>(map.base) + src;
        if (!__rlx_emu_access(p, eb, RLX_EMU_READ))
          continue;
        std::memcpy(element, p, eb);
      } else {
        std::memset(element, 0, eb);
      }
      uint8_t *dst = static_cast<uint8_t *>(ld.dst) + swizzleOffset(e * eb, map.swizzle);
      if (__rlx_emu_access(dst, eb, RLX_EMU_WRITE | RLX_EMU_ASYNC))
        std::memcpy(dst, element, eb);
    }
    mbarrierCompleteTx(l, bar, m, static_cast<int64_t>(bytes));
  }
  l.current = saved;
}

extern "C" void __rlx_emu_tma_load(void *dst, const void *map, const int32_t *coords,
                                   uint32_t rank, void *bar) {
  Launch *l = activeLaunch();
  if (!l)
    return;
  Thread &t = l->self();
  rlx_emu_tensor_map m;
  if (!__rlx_emu_access(map, sizeof m, RLX_EMU_READ))
    return;
  std::memcpy(&m, map, sizeof m);
  if (m.magic != kMagic || m.rank < 1 || m.rank > 5 || boxBytes(m) > (uint64_t(1) << 18)) {
    addFinding(*l, &t, "cp.async.bulk.tensor with a tensor map at " +
                           hexAddress(reinterpret_cast<uintptr_t>(map)) +
                           " that rlx_emu_encode_tensor_map did not make");
    return;
  }
  if (rank != m.rank) {
    addFinding(*l, &t, "cp.async.bulk.tensor." + std::to_string(rank) +
                           "d on a tensor map of rank " + std::to_string(m.rank));
    return;
  }
  uint32_t span = swizzleSpan(m.swizzle);
  auto d = reinterpret_cast<uintptr_t>(dst);
  if (!inShared(*l, d, boxBytes(m))) {
    addFinding(*l, &t, "cp.async.bulk.tensor into " + hexAddress(d) + ": its " +
                           std::to_string(boxBytes(m)) +
                           "-byte box does not lie in the block's shared memory");
    return;
  }
  uint32_t align = span ? 8 * span : 128;
  if (d % align != 0) {
    addFinding(*l, &t, "cp.async.bulk.tensor into " + hexAddress(d) + ", which is not " +
                           std::to_string(align) + "-byte aligned" +
                           (span ? " (the swizzle atom)" : ""));
    return;
  }
  MBarrier *mb = nullptr;
  {
    auto it = l->mbarriers.find(reinterpret_cast<uintptr_t>(bar));
    if (it == l->mbarriers.end()) {
      addFinding(*l, &t, "cp.async.bulk.tensor completing on " +
                             mbarrierName(*l, bar) +
                             ", which mbarrier.init never initialized");
      return;
    }
    mb = &it->second;
  }
  if (l->threads[mb->initThread].proxyFences == mb->initFences)
    findingOnce(*l, &t, kMBarrierInitFence,
                "cp.async.bulk.tensor completes on the mbarrier at " + mbarrierName(*l, bar) +
                    ", whose initializing thread " + threadCoords(*l, mb->initThread) +
                    " executed no fence.mbarrier_init (or fence.proxy.async) after its "
                    "mbarrier.init: the async proxy may not see the initialization");
  tmaWillWrite(*l, d - reinterpret_cast<uintptr_t>(l->window), boxBytes(m), *mb);
  TmaLoad ld{dst, m, {0, 0, 0, 0, 0}, t.linear};
  std::memcpy(ld.coords, coords, rank * sizeof(int32_t));
  mb->loads.push_back(ld);
  // A GPU may land the box at any time before the wait that completes it:
  // every second load lands at issue (an early write into bytes still read,
  // e.g. by a wgmma in flight), the rest at the wait (a read before the wait
  // sees the old bytes).
  if (l->tmaLoads++ % 2 == 1)
    landLoads(*l, bar, *mb);
}

extern "C" const char *rlx_emu_encode_tensor_map(rlx_emu_tensor_map *out, const void *base,
                                                 uint32_t rank, uint32_t element_bytes,
                                                 const uint64_t *dims, const uint64_t *strides,
                                                 const uint32_t *box, uint32_t swizzle) {
  // The checks cuTensorMapEncodeTiled documents (CUDA_ERROR_INVALID_VALUE).
  if (rank < 1 || rank > 5)
    return "rank must be 1 to 5";
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4 && element_bytes != 8)
    return "element size must be 1, 2, 4 or 8 bytes";
  if (reinterpret_cast<uintptr_t>(base) % 16)
    return "the global address must be 16-byte aligned";
  if (swizzle > 3)
    return "swizzle must be none (0), 32B (1), 64B (2) or 128B (3)";
  for (uint32_t d = 0; d < rank; ++d) {
    if (dims[d] == 0 || dims[d] > (uint64_t(1) << 32))
      return "every global dimension must be 1 to 2^32 elements";
    if (box[d] == 0 || box[d] > 256)
      return "every box dimension must be 1 to 256 elements";
    if (d && (strides[d - 1] % 16 || strides[d - 1] >= (uint64_t(1) << 40)))
      return "global strides must be multiples of 16 bytes below 2^40";
  }
  uint64_t inner = uint64_t(box[0]) * element_bytes;
  if (inner % 16)
    return "the box's inner dimension must be a multiple of 16 bytes";
  if (swizzle && inner > swizzleSpan(swizzle))
    return "the box's inner dimension must not exceed the swizzle span (32, 64 or 128 bytes)";
  std::memset(out, 0, sizeof *out);
  out->magic = kMagic;
  out->rank = rank;
  out->element_bytes = element_bytes;
  out->swizzle = swizzle;
  out->base = base;
  for (uint32_t d = 0; d < rank; ++d) {
    out->dims[d] = dims[d];
    out->box[d] = box[d];
    if (d)
      out->strides[d - 1] = strides[d - 1];
  }
  return nullptr;
}
