//===- Nvfp4Math.h - NVFP4 scalar arithmetic, one definition ----*- C++ -*-===//
//
// The scalar steps of NVFP4 (DESIGN §3) as arith ops on one element: E2M1
// decode and encode, E4M3 block scales (NaN decodes to 0), the two-level
// quantization recipe's scales. The CPU lowering (MIRToLinalg, inside
// linalg.generic bodies) and the GPU kernels (LIRToGPU) build the same ops
// from here, so quantized bytes agree bit for bit between the backends.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_NVFP4MATH_H
#define RLX_DIALECT_MIR_IR_NVFP4MATH_H

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

/// The global scale of a tensor whose largest magnitude is `amax` (f32):
/// amax / (448 · 6), or 1 when that is 0.
Value globalScale(OpBuilder &b, Location loc, Value amax);

/// The E4M3 scale (f8E4M3FN) of a 16-element block whose largest magnitude
/// is `blockAmax`: (blockAmax / 6) / global, rounded to nearest even.
Value blockScale(OpBuilder &b, Location loc, Value blockAmax, Value global);

/// 1 / (decodeScale(s8) · global), or 0 when that product is 0: what a
/// block's elements are multiplied by before encodeE2M1.
Value inverseScale(OpBuilder &b, Location loc, Value s8, Value global);

} // namespace mlir::rlx::nvfp4

#endif // RLX_DIALECT_MIR_IR_NVFP4MATH_H
