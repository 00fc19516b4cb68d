//===- FlashTiles.h - The flash-attention kernels' tiles ---------*- C++ -*-===//
//
// The tile geometry of the flash-attention kernels of lib/Conversion/LIRToGPU
// (packed query rows and keys per block, resident blocks per SM), in one
// place for the kernels and for rlx-mir-split-kv, which sizes a decode
// step's key splits against the grid the kernel will launch.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_COMMON_IR_FLASHTILES_H
#define RLX_DIALECT_COMMON_IR_FLASHTILES_H

#include "mlir/IR/Types.h"

#include <cstdint>

namespace mlir::rlx {

struct FlashTiles {
  int64_t rows = 64;        ///< packed (query, query head) rows per block
  int64_t keys = 64;        ///< keys per K/V tile
  int64_t blocksPerSM = 2;  ///< resident blocks per SM
  bool wholeGroups = false; ///< a block holds whole GQA groups (rows / group queries)
};

/// Blocks along the packed rows of Sq queries with `group` query heads per
/// kv head: ceil(Sq · group / rows), or ceil(Sq / floor(rows / group)) when
/// blocks hold whole groups.
inline int64_t rowTiles(const FlashTiles &t, int64_t sq, int64_t group) {
  if (!t.wholeGroups)
    return (sq * group + t.rows - 1) / t.rows;
  int64_t queries = t.rows / group;
  return queries > 0 ? (sq + queries - 1) / queries : 0;
}

/// FlashAttention-2's mma.sync kernel (sm_80+): 64 × 64 tiles, two blocks
/// per SM (.minnctapersm 2).
inline FlashTiles mmaSyncFlashTiles() { return {64, 64, 2}; }

/// Whether the sm_90a wgmma kernel takes attention of element type `et`
/// with these head dims and GQA group (what needs no memref layouts):
/// bf16/f16, head dims multiples of 16 from 64 to 256, a group of at most
/// 128 query heads (one tile).
inline bool wgmmaFlashShapes(Type et, int64_t headDim, int64_t valueDim, int64_t group) {
  auto ok = [](int64_t d) { return d % 16 == 0 && d >= 64 && d <= 256; };
  return (et.isBF16() || et.isF16()) && ok(headDim) && ok(valueDim) && group >= 1 && group <= 128;
}

/// The wgmma kernel's tiles: one consumer warpgroup (64 rows) while the
/// packed rows Sq·group and the group fit in 64, else two (128 rows), each
/// block floor(rows / group) queries of the group's heads (a TMA box); 128
/// keys, 64 for head dims above 128 (registers); one block per SM (its
/// K/V stages take the shared memory).
inline FlashTiles wgmmaFlashTiles(int64_t packedRows, int64_t group, int64_t headDim,
                                  int64_t valueDim) {
  int64_t rows = packedRows > 64 || group > 64 ? 128 : 64;
  int64_t keys = headDim <= 128 && valueDim <= 128 ? 128 : 64;
  return {rows, keys, 1, true};
}

} // namespace mlir::rlx

#endif // RLX_DIALECT_COMMON_IR_FLASHTILES_H
