//===- Warp.cpp - PTX warp-collective semantics ---------------------------===//

#include "Warp.h"

namespace rlx::emu {

ShflSource shflSource(ShflMode mode, uint32_t lane, uint32_t b, uint32_t c) {
  // PTX computes on 5-bit lane numbers but compares j as a signed integer
  // (lane - bval may be negative for .up).
  const int32_t l = static_cast<int32_t>(lane & 31u);
  const int32_t bval = static_cast<int32_t>(b & 31u);
  const int32_t cval = static_cast<int32_t>(c & 31u);
  const int32_t segmask = static_cast<int32_t>((c >> 8) & 31u);
  const int32_t maxLane = (l & segmask) | (cval & ~segmask & 31);
  const int32_t minLane = l & segmask;
  int32_t j = l;
  bool pval = false;
  switch (mode) {
  case ShflMode::Up:
    j = l - bval;
    pval = j >= maxLane;
    break;
  case ShflMode::Down:
    j = l + bval;
    pval = j <= maxLane;
    break;
  case ShflMode::Bfly:
    j = l ^ bval;
    pval = j <= maxLane;
    break;
  case ShflMode::Idx:
    j = minLane | (bval & ~segmask & 31);
    pval = j <= maxLane;
    break;
  }
  if (!pval)
    j = l;
  return {static_cast<uint32_t>(j), pval};
}

uint32_t shflSyncWarp(ShflMode mode, uint32_t members, const uint32_t a[kWarpSize],
                      const uint32_t b[kWarpSize], const uint32_t c[kWarpSize],
                      uint32_t d[kWarpSize], bool p[kWarpSize]) {
  uint32_t badSource = 0;
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    if (!(members >> lane & 1u))
      continue;
    ShflSource src = shflSource(mode, lane, b[lane], c[lane]);
    p[lane] = src.inRange;
    if (members >> src.lane & 1u) {
      d[lane] = a[src.lane];
    } else {
      d[lane] = a[lane];
      badSource |= 1u << lane;
    }
  }
  return badSource;
}

uint32_t voteSync(VoteMode mode, uint32_t members, uint32_t preds) {
  const uint32_t set = preds & members;
  switch (mode) {
  case VoteMode::All:
    return set == members;
  case VoteMode::Any:
    return set != 0;
  case VoteMode::Uni:
    return set == 0 || set == members;
  case VoteMode::Ballot:
    return set;
  }
  return 0;
}

ShflOperands gpuShuffleOperands(ShflMode mode, uint32_t width) {
  const uint32_t numLeadInactive = 32u - width;
  ShflOperands ops;
  ops.membermask = numLeadInactive >= 32 ? 0u : 0xFFFFFFFFu >> numLeadInactive;
  ops.c = mode == ShflMode::Up ? numLeadInactive : width - 1;
  return ops;
}

} // namespace rlx::emu
