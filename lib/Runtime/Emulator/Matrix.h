//===- Matrix.h - PTX warp matrix instructions as pure functions -*- C++ -*-===//
//
// mma.sync m16n8k16 and ldmatrix m8n8 exactly as the PTX ISA defines their
// fragment layouts ("Matrix fragments for mma.m16n8k16 with floating point
// type", "ldmatrix"), over the 32 lanes of one warp, with no scheduler state:
// the emulator's rendezvous gathers every lane's registers and calls these.
// Unit-tested alone against the layout tables (unittests/EmulatorMatrixTest.cpp).
//
// Fragment layouts (groupID = lane / 4, tig = lane % 4; a b16x2 register
// holds the lower-index element in its low half):
//   A (16×16, row-major), registers a0..a3, element pair i = 0..3:
//     row = groupID + 8·(i & 1), col = 2·tig + 8·(i >> 1) + {0, 1}
//   B (16×8, "col": K × N), registers b0, b1, element pair i = 0..1:
//     k = 2·tig + 8·i + {0, 1}, n = groupID
//   C, D (16×8 f32), elements c0..c3:
//     row = groupID + 8·(i >> 1), col = 2·tig + (i & 1)
//   ldmatrix .x1/.x2/.x4: lanes 8m..8m+7 give the row addresses of matrix m
//     (16 bytes each); register m of lane l holds row l/4, columns
//     2·(l%4) + {0, 1} of matrix m (.trans: of its transpose).
//
// Accumulation: the products of 16-bit floats are exact in f32; the K = 16
// sum is formed in double and added to C, rounded once to f32. Tensor cores
// do not round that way bit for bit, which is why tests use exactly
// representable cases (G4) or tolerances.
//===----------------------------------------------------------------------===//
#ifndef RLX_RUNTIME_EMULATOR_MATRIX_H
#define RLX_RUNTIME_EMULATOR_MATRIX_H

#include <cstdint>

namespace rlx::emu {

/// The multiplicand type of mma.sync (numbered as __rlx_emu_mma_m16n8k16's).
enum class MmaType : uint32_t { F16 = 0, BF16 = 1 };

float halfToFloat(uint16_t h);
float bf16ToFloat(uint16_t h);

/// mma.sync.aligned.m16n8k16.row.col.f32.<type>.<type>.f32 over one warp.
void mmaM16N8K16(MmaType type, const uint32_t a[32][4], const uint32_t b[32][2],
                 const float c[32][4], float d[32][4]);

/// ldmatrix.sync.aligned.m8n8.x<num>[.trans].shared.b16 over one warp:
/// rows[l] is the 16 bytes at lane l's address (read for l < 8·num).
void ldmatrixM8N8(uint32_t num, bool trans, const uint8_t rows[32][16], uint32_t out[32][4]);

} // namespace rlx::emu

#endif // RLX_RUNTIME_EMULATOR_MATRIX_H
