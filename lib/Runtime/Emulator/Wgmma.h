//===- Wgmma.h - Hopper warpgroup MMA as pure functions ----------*- C++ -*-===//
//
// wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16} with both
// operands in shared memory, K-major (no transpose), as the PTX ISA defines
// it ("Asynchronous Warpgroup Level Matrix Multiply-Accumulate"):
//
// Matrix descriptor (64 bits): start address >> 4 in bits 0-13, leading
// dimension byte offset >> 4 in 16-29, stride dimension byte offset >> 4 in
// 32-45, base offset in 49-51, swizzle in 62-63 (0 none, 1 128B, 2 64B,
// 3 32B). Addresses are shared-window addresses (18 bits).
//
// Element (r, k) of a K-major operand (r: the M row of A, the N row of B),
// 16-bit elements, "core matrices" of 8 rows × 16 bytes:
//   no swizzle:  start + (r / 8)·SBO + (k / 8)·LBO + (r % 8)·16 + (k % 8)·2
//   swizzle W (32/64/128-byte rows, 8-row atoms):
//                a = start + (r / 8)·SBO + (r % 8)·W + 2k, then bits [4, 4+s)
//                of a XOR bits [7, 7+s) (s = 1, 2, 3), as TMA writes them.
//
// Accumulator D (64 × N f32) over the 128 threads of the warpgroup: thread
// t (warp w = t / 32, lane l; g = l / 4, q = l % 4) holds, for each 8-column
// chunk j, d[4j + i] = D[16w + g + 8·(i / 2)][8j + 2q + (i % 2)].
//
// D = ±A·±B + (scale_d ? C : 0), the K = 16 sum in double, rounded once.
//===----------------------------------------------------------------------===//
#ifndef RLX_RUNTIME_EMULATOR_WGMMA_H
#define RLX_RUNTIME_EMULATOR_WGMMA_H

#include "Matrix.h"

#include <cstdint>
#include <string>

namespace rlx::emu {

/// The shared-window address of element (r, k) of a K-major 16-bit operand
/// under `desc`; an error (base offset set, which is not emulated) in `why`.
uint32_t wgmmaElementAddress(uint64_t desc, uint32_t r, uint32_t k, std::string &why);

/// Row and column of register i of warpgroup thread t in the accumulator.
inline void wgmmaAccumulatorPosition(uint32_t t, uint32_t i, uint32_t &row, uint32_t &col) {
  uint32_t w = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
  row = 16 * w + g + 8 * ((i % 4) / 2);
  col = 8 * (i / 4) + 2 * q + (i % 2);
}

} // namespace rlx::emu

#endif // RLX_RUNTIME_EMULATOR_WGMMA_H
