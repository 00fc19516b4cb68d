//===- MIRToLinalg.h - Lowering of rlx_mir to linalg on tensors -*- C++ -*-===//
//
// Every rlx_mir op to linalg/tensor/arith/math/scf on tensors, so other MLIR
// pipelines can take RLX's MIR and RLX's CPU path can bufferize and codegen
// it. A fused MIR op stays one loop nest: fused_matmul becomes one loop over
// row tiles (norm prologue, matmul, epilogue per tile), attention one loop over
// (batch, head) with the softmax kept in registers' reach, an elementwise
// region one linalg.generic.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_CONVERSION_MIRTOLINALG_MIRTOLINALG_H
#define RLX_CONVERSION_MIRTOLINALG_MIRTOLINALG_H

#include "RLX/Conversion/MIRToTensor/MIRToTensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::rlx {

/// The boolean attribute on the linalg.generic that grouped_matmul lowers
/// to (f32): out[t, n] = Σ_k in[t, k] · w[ids[t], n, k], with `in` and `ids`
/// its inputs and `w` read in its body; true when rows of ids outside
/// [0, E) are zeros (zero_out_of_range) rather than clamped.
inline constexpr llvm::StringLiteral kGroupedMatmulAttr = "rlx.grouped_matmul";
/// On the linalg.generic of a 2-D qmatmul (i8 × i8 → i32 into a zero fill):
/// [lhs_zero_point, rhs_zero_point, lhs_unsigned, rhs_unsigned]. The CPU
/// path calls its integer GEMM for it (rlx-cpu-matmul-to-blas).
inline constexpr llvm::StringLiteral kQMatmulAttr = "rlx.qmatmul";
/// On the linalg.generic of a cumsum: [axis, exclusive, reverse]. The CPU
/// path runs it as a running sum (rlx-cpu-topk-cumsum).
inline constexpr llvm::StringLiteral kCumsumAttr = "rlx.cumsum";
/// On topk's two linalg.generic ops: the ranks (unit) and the pick of the
/// ranked entries (unit), which the CPU path replaces by a partial sort.
inline constexpr llvm::StringLiteral kTopKRanksAttr = "rlx.topk_ranks";
inline constexpr llvm::StringLiteral kTopKAttr = "rlx.topk";

struct MIRToLinalgOptions {
  /// Rows of the lhs per tile in fused_matmul loops. Large on purpose: each
  /// tile is one BLAS call, which re-packs the weight matrix, so small tiles
  /// cost packing time (measured: 64-row tiles made a Llama layer at 128
  /// tokens 40% slower than one call).
  int64_t rowTile = 512;
};

/// Adds the patterns that lower every rlx_mir op (static shapes; run
/// rlx-mir-specialize first) to linalg and friends on tensors.
void populateMIRToLinalgConversionPatterns(RewritePatternSet &patterns,
                                           const MIRToLinalgOptions &options = {});


} // namespace mlir::rlx

#endif // RLX_CONVERSION_MIRTOLINALG_MIRTOLINALG_H
