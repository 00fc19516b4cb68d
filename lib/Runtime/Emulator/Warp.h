//===- Warp.h - PTX warp-collective semantics as pure functions -*- C++ -*-===//
//
// shfl.sync and vote.sync exactly as the PTX ISA defines them, over one warp
// of 32 lanes, with no scheduler state: the emulator's rendezvous gathers the
// operands of the participating lanes and calls these. Written once here and
// unit-tested against hand-worked PTX examples (unittests/EmulatorTest.cpp).
//===----------------------------------------------------------------------===//
#ifndef RLX_RUNTIME_EMULATOR_WARP_H
#define RLX_RUNTIME_EMULATOR_WARP_H

#include <cstdint>

namespace rlx::emu {

constexpr uint32_t kWarpSize = 32;

/// Numbered as PTX shfl's .mode and gpu::ShuffleMode (Emulator.h).
enum class ShflMode : uint32_t { Bfly = 0, Up = 1, Down = 2, Idx = 3 };
/// Numbered as the `mode` of __rlx_emu_vote_sync.
enum class VoteMode : uint32_t { All = 0, Any = 1, Uni = 2, Ballot = 3 };

/// The lane a shuffle reads from, from the PTX ISA's shfl pseudo-code:
///   bval = b[4:0], cval = c[4:0], segmask = c[12:8],
///   maxLane = (lane & segmask) | (cval & ~segmask), minLane = lane & segmask,
///   up: j = lane - bval, p = j >= maxLane;   down: j = lane + bval, p = j <= maxLane
///   bfly: j = lane ^ bval, p = j <= maxLane; idx: j = minLane | (bval & ~segmask),
///   p = j <= maxLane; and j = lane when !p.
struct ShflSource {
  uint32_t lane;
  bool inRange;
};
ShflSource shflSource(ShflMode mode, uint32_t lane, uint32_t b, uint32_t c);

/// One shfl.sync over a warp. `members` are the participating lanes (the
/// membermask, restricted to lanes that exist); a, b, c are per lane (only
/// members' entries are read). Writes d and p for the members and returns the
/// members whose in-range source lane is not a member (PTX: undefined value;
/// such a lane gets its own `a` here).
uint32_t shflSyncWarp(ShflMode mode, uint32_t members, const uint32_t a[kWarpSize],
                      const uint32_t b[kWarpSize], const uint32_t c[kWarpSize],
                      uint32_t d[kWarpSize], bool p[kWarpSize]);

/// vote.sync over `members` with the predicates in `preds` (bit per lane;
/// bits of non-members are ignored). The same result for every member: 0/1,
/// or for ballot the members whose predicate is true.
uint32_t voteSync(VoteMode mode, uint32_t members, uint32_t preds);

/// gpu.shuffle (offset, width) as upstream's GPUToNVVM lowering emits it:
/// membermask = 0xFFFFFFFF >> (32 - width); c = 32 - width for up (a clamp,
/// not a segment mask: with width < 32 every lane's up-shuffle is out of
/// range) and width - 1 otherwise. `width` must be in 1..32.
struct ShflOperands {
  uint32_t membermask;
  uint32_t c;
};
ShflOperands gpuShuffleOperands(ShflMode mode, uint32_t width);

} // namespace rlx::emu

#endif // RLX_RUNTIME_EMULATOR_WARP_H
