//===- ImportToMIR.h - Raise TOSA and linalg-on-tensors to rlx_mir -*- C++ -*-===//
//
// Patterns that raise the IR PyTorch exporters produce (TOSA; linalg named
// ops and generics on tensors with tensor reshapes/slices) into rlx_mir ops,
// one op at a time. Anything they do not know stays as it is. Block
// recognition (rms_norm, softmax, RoPE, ...) on the raised graph is
// mir::populateBlockRecognitionPatterns; rlx-import-to-mir runs both.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_CONVERSION_IMPORTTOMIR_IMPORTTOMIR_H
#define RLX_CONVERSION_IMPORTTOMIR_IMPORTTOMIR_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::rlx {

/// tosa.{const, add, sub, mul, maximum, minimum, pow, exp, log, rsqrt,
/// reciprocal, tanh, sigmoid, abs, sin, cos, erf, negate, clamp (ReLU),
/// cast, select, reduce_sum/max/min/prod, reshape, transpose, slice, concat,
/// tile (of size-1 dims), matmul, gather (batch 1)} → rlx_mir.
void populateTosaToRLXMIRPatterns(RewritePatternSet &patterns);

/// linalg.{matmul, batch_matmul (with transposed indexing maps), transpose,
/// broadcast, softmax, reduce, generic: elementwise bodies, sum/max
/// reductions, transposes, embedding lookups}, tensor.{expand_shape,
/// collapse_shape, extract_slice, concat} and dense arith.constant tensors
/// → rlx_mir.
void populateLinalgToRLXMIRPatterns(RewritePatternSet &patterns);

/// The elementwise generics torch-mlir writes for PT2E's quantize and
/// dequantize (per tensor and per channel; round half to even, zero point,
/// clamp) → rlx_mir.quantize / dequantize. Part of
/// populateLinalgToRLXMIRPatterns.
void populateLinalgQuantToRLXMIRPatterns(RewritePatternSet &patterns);

/// Softmax and attention forms exporters write: drops SDPA's all-masked-row
/// guard around rlx_mir.softmax (TOSA and linalg-on-tensors forms: the
/// softmax already gives 0 on such rows), raises the log-sum-exp spelling of
/// softmax, and GQA's repeat written as an add of zeros (a broadcast).
void populateSoftmaxGuardPatterns(RewritePatternSet &patterns);

/// Sorts the arguments without `rlx.param` or a chosen `rlx.input` name
/// (argN, the runners' default, is not one) of every function nothing
/// calls. The heuristic: static float arguments read only as a matmul's
/// right operand (2-D, directly or through transposes/reshapes) or only
/// added to matmul results (1-D biases). `spec` empty: a remark names the
/// heuristic's candidates, nothing is marked (packing would read the first
/// run's values, wrong for a caller that passes new ones on every run);
/// {"auto"}: they are marked `rlx.param = "<their name>"`, with a remark;
/// {"none"}: nothing; otherwise argument positions and glob patterns over
/// argument names (`arg3`, `w_*`) name them. Errors on a bad entry.
LogicalResult markWeightArguments(Operation *root, ArrayRef<std::string> spec);

} // namespace mlir::rlx

#endif // RLX_CONVERSION_IMPORTTOMIR_IMPORTTOMIR_H
