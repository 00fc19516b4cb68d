//===- Lowerings.h - Pieces shared by the MIR→linalg lowerings --*- C++ -*-===//
//
// Internal to lib/Conversion/MIRToLinalg: normalization of rows and RoPE,
// which the plain ops and fused_matmul's prologue/epilogue share.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_CONVERSION_MIRTOLINALG_LOWERINGS_H
#define RLX_LIB_CONVERSION_MIRTOLINALG_LOWERINGS_H

#include "LinalgBuilders.h"

#include "RLX/Conversion/MIRToLinalg/MIRToLinalg.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

namespace mlir::rlx::linalg_builders {

/// RMSNorm (or LayerNorm) over the last dim of `x` with optional weight/bias
/// [H]; statistics in f32. The result has element type `outType`.
Value normalizeLast(OpBuilder &b, Location loc, Value x, Value weight, Value bias, double eps,
                    NormKind kind, Type outType);

/// RoPE on `x` whose last two dims are [H, D] (the first `rotary` of each D
/// rotate). `tableRow` maps the iteration dims of x (all of them) to the
/// leading indices of cos/sin (whose last dim is rotary/2). f32 math; the
/// result has x's type.
Value applyRope(OpBuilder &b, Location loc, Value x, Value cos, Value sin, AffineMap tableRow,
                int64_t rotary, RopeStyle style);

/// Expands the last dim of `x` [..., H·D] into [..., H, D].
Value splitHeads(OpBuilder &b, Location loc, Value x, int64_t headDim);
/// The inverse of splitHeads.
Value mergeHeads(OpBuilder &b, Location loc, Value x);

void populateElementwiseLowerings(RewritePatternSet &patterns);
void populateShapeLowerings(RewritePatternSet &patterns);
void populateNormLowerings(RewritePatternSet &patterns);
void populateMatmulLowerings(RewritePatternSet &patterns, const MIRToLinalgOptions &options);
void populateAttentionLowerings(RewritePatternSet &patterns);
void populateNvfp4Lowerings(RewritePatternSet &patterns);
void populateQuantLowerings(RewritePatternSet &patterns);
void populateIndexLowerings(RewritePatternSet &patterns);
void populateMoeLowerings(RewritePatternSet &patterns);
void populateControlFlowLowerings(RewritePatternSet &patterns);
/// An NVFP4 weight dequantized to `out` (f32; [N, K] for NVIDIA's out_in
/// layout, else [K, N]), as nvfp4_dequantize defines it.
Value dequantizeNvfp4(OpBuilder &b, Location loc, Value weight, Value scales, Value global,
                      bool outIn, RankedTensorType out);

} // namespace mlir::rlx::linalg_builders

#endif // RLX_LIB_CONVERSION_MIRTOLINALG_LOWERINGS_H
