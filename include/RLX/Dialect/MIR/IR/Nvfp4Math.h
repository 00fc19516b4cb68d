//===- Nvfp4Math.h - NVFP4 scalar arithmetic, one definition ----*- C++ -*-===//
//
// The scalar steps of NVFP4 (DESIGN §3) as arith ops on one element: E2M1
// decode and encode, E4M3 block scales (NaN decodes to 0), the two-level
// quantization recipe's scales; and the blocked layout of the scales. The
// CPU lowering (MIRToLinalg, inside
// linalg.generic bodies) and the GPU kernels (LIRToGPU) build the same ops
// from here, so quantized bytes agree bit for bit between the backends.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_NVFP4MATH_H
#define RLX_DIALECT_MIR_IR_NVFP4MATH_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"

namespace mlir::rlx::nvfp4 {

/// The f32 value of E2M1 code `code` (i32, 0-15; bit 3 the sign): 0, 0.5,
/// 1, 1.5, 2, 3, 4, 6, built as f32 bits (exact).
Value decodeE2M1(OpBuilder &b, Location loc, Value code);

/// The E2M1 code (i32) of `q` (f32): the nearest magnitude, ties to the even
/// code, saturating at ±6; bit 3 the sign of a negative q.
Value encodeE2M1(OpBuilder &b, Location loc, Value q);

/// An E4M3 block scale (f8E4M3FN) as f32; NaN (0x7F, 0xFF) decodes to 0.
Value decodeScale(OpBuilder &b, Location loc, Value s8);

/// The f32 value of an E8M0 scale byte `s8` (i8): 2^(s − 127) for s in
/// 0..254 (2^-127 is an f32 subnormal), NaN for 0xFF (OCP MX v1.0, MXFP4).
Value decodeE8M0(OpBuilder &b, Location loc, Value s8);

/// The global scale of a tensor whose largest magnitude is `amax` (f32):
/// amax / (448 · 6), or 1 when that is 0.
Value globalScale(OpBuilder &b, Location loc, Value amax);

/// The E4M3 scale (f8E4M3FN) of a 16-element block whose largest magnitude
/// is `blockAmax`: (blockAmax / 6) / global, rounded to nearest even.
Value blockScale(OpBuilder &b, Location loc, Value blockAmax, Value global);

/// 1 / (decodeScale(s8) · global), or 0 when that product is 0: what a
/// block's elements are multiplied by before encodeE2M1.
Value inverseScale(OpBuilder &b, Location loc, Value s8, Value global);

/// NVIDIA's block-scaled layout of NVFP4 block scales (the 128 × 4 scale
/// tiles that tcgen05.mma's block-scaled kinds and cuBLASLt read; DESIGN §3):
/// the scale of row n, 16-element block b of the linear [N, K/16] scales is
/// element
///   [n / 128, b / 4, n % 32, ((n % 128) / 32)·4 + b % 4]
/// of the blocked [⌈N/128⌉, ⌈K/64⌉, 32, 16] scales (nvfp4_block_scales'
/// result). The one definition of the layout: the CPU lowering and the GPU
/// kernels read and write blocked scales through these two maps.
/// (n, b) -> the four indices above.
AffineMap blockedScaleMap(MLIRContext *ctx);
/// The inverse: (tile_n, tile_k, r, j) -> (n, b) = (tile_n·128 + (j / 4)·32
/// + r, tile_k·4 + j % 4).
AffineMap blockedScaleInverseMap(MLIRContext *ctx);

/// The results of `map` (no symbols) at the non-negative index values
/// `dims`, as unsigned arith ops (floordiv → divui, mod → remui, ceildiv →
/// (x + d - 1) / d): what kernels use where affine.apply's signed expansion
/// would cost selects.
SmallVector<Value> applyNonNegative(OpBuilder &b, Location loc, AffineMap map, ValueRange dims);

} // namespace mlir::rlx::nvfp4

#endif // RLX_DIALECT_MIR_IR_NVFP4MATH_H
