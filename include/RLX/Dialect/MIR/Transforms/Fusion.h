//===- Fusion.h - MIR fusion pattern sets and the fusion report -*- C++ -*-===//
//
// Fusion in RLX is a set of rewrite patterns, one family per populate
// function, each usable from any pipeline. Patterns only fire when legal
// (single-use intermediates, graph outputs preserved, compatible stages and
// shapes); when they see an opportunity they cannot take, they tell the
// optional FusionReport why. The report is a rewriter listener, so misses on
// ops that are later fused or erased disappear from it.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_TRANSFORMS_FUSION_H
#define RLX_DIALECT_MIR_TRANSFORMS_FUSION_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include <string>

namespace mlir::rlx::mir {

/// Collects missed fusion opportunities: (op, fusion family, reason).
class FusionReport : public RewriterBase::Listener {
public:
  /// Records that `fusion` could not fuse at `op` because of `reason`.
  void missed(Operation *op, StringRef fusion, const Twine &reason);
  /// Records a miss caused by `value` having users other than the candidate:
  /// "graph output" when one is a return, else "multi-use".
  void missedMultiUse(Operation *op, StringRef fusion, Value value);
  /// Emits one remark per recorded miss whose op still exists.
  void emitRemarks();
  bool empty() const { return misses.empty(); }

  void notifyOperationErased(Operation *op) override { misses.erase(op); }

private:
  llvm::MapVector<Operation *, SmallVector<std::string, 1>> misses;
};

/// Patterns take the report as an optional pointer.
void populateEpilogueFusionPatterns(RewritePatternSet &patterns,
                                    FusionReport *report = nullptr);
void populateRopeFusionPatterns(RewritePatternSet &patterns,
                                FusionReport *report = nullptr);
void populateSwiGluFusionPatterns(RewritePatternSet &patterns,
                                  FusionReport *report = nullptr);
void populateMatmulMergePatterns(RewritePatternSet &patterns,
                                 FusionReport *report = nullptr);
void populateResidualNormFusionPatterns(RewritePatternSet &patterns,
                                        FusionReport *report = nullptr);
void populateNormPrologueFusionPatterns(RewritePatternSet &patterns,
                                        FusionReport *report = nullptr);
void populateAttentionFusionPatterns(RewritePatternSet &patterns,
                                     FusionReport *report = nullptr);

/// Blocks spelled out in primitives (imported graphs): rms_norm, softmax,
/// sigmoid/silu, RoPE, constant causal masks, and the matmul forms fusion
/// expects. See rlx-mir-recognize-blocks.
void populateBlockRecognitionPatterns(RewritePatternSet &patterns);

/// PT2E's quantized linear spelled as matmul(dequantize, dequantize) (per
/// tensor activations; per tensor or per output channel weights, constant
/// zero points) → rlx_mir.qmatmul, cast, times the product of the scales.
/// Part of populateBlockRecognitionPatterns.
void populateQuantRecognitionPatterns(RewritePatternSet &patterns);

/// Elementwise-chain fusion is a graph partitioning, not a local rewrite: it
/// groups connected elementwise ops of one shape and outlines each group into
/// an rlx_mir.elementwise. Returns the number of groups formed.
/// With `report`, elementwise ops that stay apart are recorded: a smaller
/// producer read by other ops too (recomputing it per element is only done
/// for a sole reader), a group with no insertion point.
unsigned fuseElementwiseChains(Operation *root, RewriterBase &rewriter,
                               FusionReport *report = nullptr);

/// Moves parameter-only computations of every function in `module` into
/// `@<fn>_pack_params` functions (see rlx-mir-pack-weights). With
/// `knWeights`, the [N, K] weights of `transpose_b` matmuls are stored
/// transposed, [K, N], by the pack function (see its `kn-weights` option).
LogicalResult packWeights(Operation *module, bool knWeights = false);

/// Splits every pack function of `module` with several results into one
/// function per result (`@<pack>_<i>`, only what that result needs, only
/// the parameters it reads) and points the packed parameters' rlx.packed_by
/// at them. A loader can then give, pack and release each packed parameter
/// on its own (the CPU runner does, to read merged weights in place).
void splitPackFunctions(ModuleOp module);


/// (all MIR ops, compute ops) in `fn`, the counts rlx-mir-fuse{report} and
/// rlx-run print: compute ops are MIR kernels and the kernels of other
/// dialects (imported ops nothing raised), those counted in `foreign` by name.
std::pair<unsigned, unsigned> countOps(func::FuncOp fn,
                                       llvm::StringMap<unsigned> *foreign = nullptr);

} // namespace mlir::rlx::mir

#endif // RLX_DIALECT_MIR_TRANSFORMS_FUSION_H
