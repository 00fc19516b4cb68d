//===- Wgmma.h - Hopper warpgroup MMA as pure functions ----------*- C++ -*-===//
//
// wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16}, A and B in
// shared memory (K-major, or MN-major with imm-trans-a/b) or A in registers,
// as the PTX ISA defines it ("Asynchronous Warpgroup Level Matrix
// Multiply-Accumulate", "Shared Memory Matrix Layout", "Register Fragments"):
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
// Element (r, k) of an MN-major operand (transposed: rows of the layout are
// K, r runs along M or N), the canonical layouts of the PTX ISA with
// T = 8 elements:
//   no swizzle:  start + (r / 8)·SBO + (k / 8)·LBO + (k % 8)·16 + (r % 8)·2
//   swizzle W:   a = start + (r / (W/2))·LBO + (k / 8)·SBO + (k % 8)·W
//                + (r % (W/2))·2, then the XOR above
//   (LBO: between W/2-element chunks along M/N; SBO: between 8-k groups).
//
// A in registers (16-bit types): thread t (warp w = t / 32, g = lane / 4,
// q = lane % 4) holds four b16x2 registers, the lower k in the low half:
//   a0: (16w + g, 2q + {0, 1})      a1: (16w + g + 8, 2q + {0, 1})
//   a2: (16w + g, 2q + 8 + {0, 1})  a3: (16w + g + 8, 2q + 8 + {0, 1})
// (mma.m16n8k16's A fragment, one 16-row band per warp).
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
/// The same for an MN-major (transposed) 16-bit operand.
uint32_t wgmmaElementAddressMN(uint64_t desc, uint32_t r, uint32_t k, std::string &why);

/// Row and k of the low half of register `reg` (0-3) of warpgroup thread t
/// when A comes from registers; the high half is (row, k + 1).
inline void wgmmaRegisterAPosition(uint32_t t, uint32_t reg, uint32_t &row, uint32_t &k) {
  uint32_t w = t / 32, lane = t % 32;
  row = 16 * w + lane / 4 + 8 * (reg & 1);
  k = 2 * (lane % 4) + 8 * (reg >> 1);
}

/// Row and column of register i of warpgroup thread t in the accumulator.
inline void wgmmaAccumulatorPosition(uint32_t t, uint32_t i, uint32_t &row, uint32_t &col) {
  uint32_t w = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
  row = 16 * w + g + 8 * ((i % 4) / 2);
  col = 8 * (i / 4) + 2 * q + (i % 2);
}

} // namespace rlx::emu

#endif // RLX_RUNTIME_EMULATOR_WGMMA_H
