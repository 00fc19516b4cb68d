//===- AttentionKernels.h - The attention kernels (internal) ----*- C++ -*-===//
//
// What the SIMT attention kernel (AttentionKernels.cpp) and the tensor-core
// flash-attention kernel (FlashAttentionKernel.cpp) share: operand positions
// in each layout and the mask operand's broadcast position.
//
//===----------------------------------------------------------------------===//
#ifndef RLX_LIB_CONVERSION_LIRTOGPU_ATTENTIONKERNELS_H
#define RLX_LIB_CONVERSION_LIRTOGPU_ATTENTIONKERNELS_H

#include "KernelBuilder.h"

#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIROps.h"

namespace mlir::rlx::gpu_kernels::attention {

/// Sequence and head sizes of an attention op's memrefs.
struct AttentionShape {
  int64_t batch = 0, sq = 0, sk = 0, headDim = 0, valueDim = 0, group = 1;
};
AttentionShape attentionShape(const AttentionConfig &cfg, Value q, Value k, Value v);

/// Element (batch b, sequence position s, head `head`, dim e) of an
/// operand of heads of `headSize` in `layout` (BSD, BSHD or BHSD).
SmallVector<Value> position(KernelBuilder &kb, AttnLayout layout, Value b, Value s, Value head,
                            Value e, int64_t headSize);

/// The mask operand's element for (b, h, query i, key j): [Sq, Sk],
/// [B, Sq, Sk] or [B, H, Sq, Sk] with size-1 dims broadcast.
Value loadMask(KernelBuilder &kb, Value mask, Value b, Value h, Value i, Value j);

/// The memrefs and attributes of a kernel's rlx_mir.attention or
/// rlx_mir.attention_partial root.
struct AttentionOperands {
  AttentionConfig cfg;
  AttentionShape shape;
  Value q, k, v, mask;
  /// attention: the output. attention_partial: the f32 partial outputs
  /// [splits, B, H, Sq, Dv] and log-sum-exps [splits, B, H, Sq].
  Value out, partial, lse;
  /// 0 for attention; the key splits of attention_partial, each of `chunk`
  /// keys (split s covers [s·chunk, min(Sk, (s + 1)·chunk))).
  int64_t splits = 0, chunk = 0;
};
/// Fails (a located error) when an operand is not a kernel input.
FailureOr<AttentionOperands> attentionOperands(KernelContext &ctx);

/// A flash kernel's block coordinates: x the row tile, y the kv head, z the
/// (kv split, batch) pair; the split sees keys [kLo, kHi) (all of them for
/// plain attention).
struct FlashBlock {
  Value tile, kvHead, batch, split, kLo, kHi;
};
FlashBlock flashBlock(KernelBuilder &kb, const AttentionOperands &a);

/// What both flash kernels (mma.sync and wgmma) share: logits in log2 units
/// (log2 e folded into the scale, the additive mask and the softcap's
/// output) with DESIGN §3's masks, for a block whose batch is `b` and whose
/// kv split sees keys [kLo, kHi).
struct FlashLogits {
  KernelBuilder &kb;
  const AttentionOperands &a;
  Value b, kLo, kHi;
  /// The scale (or the softcap's c·tanh(dot·scale / c)) in log2 units, for
  /// tiles every row sees whole (wholeKeyTile; never with a mask operand).
  Value scaled(Value dot) const;
  /// scaled(dot) = dot · factor when that is all it does (no softcap): the
  /// factor (scale · log2 e), for kernels that fold it into an FFMA.
  std::optional<double> linearFactor() const;
  /// The logit of query i of head `head` for key j: -inf where a mask hides
  /// the key or it lies outside [kLo, kHi). An additive mask is added in
  /// natural units and the sum scaled after, clamped to -FLT_MAX (HF's
  /// finfo.min masks would overflow to -inf times log2 e, hiding keys the
  /// CPU path weighs).
  Value masked(Value dot, Value i, Value head, Value j) const;
};

/// The tiles [tLo, tHi) of `tileKeys` keys that some query in [iMin, iMax]
/// sees among [kLo, kHi) (bottom-right aligned causal and sliding-window
/// bounds; signed index arithmetic).
std::pair<Value, Value> visibleKeyTiles(KernelBuilder &kb, const AttentionOperands &a, Value kLo,
                                        Value kHi, Value iMin, Value iMax, int64_t tileKeys);
/// Whether every query in [iMin, iMax] sees every key of tile t (an i1):
/// no mask operand, the tile inside [kLo, kHi) and inside every row's
/// causal / sliding-window range.
Value wholeKeyTile(KernelBuilder &kb, const AttentionOperands &a, Value kLo, Value kHi, Value iMin,
                   Value iMax, Value t, int64_t tileKeys);

/// What both flash kernels need: tensor cores on, the chip's instruction
/// (`chipHas`, else `chipWhy`), bf16/f16 query, key, value and output of one
/// type ("" when all hold).
std::string whyNoTensorCoreAttention(KernelContext &ctx, const AttentionOperands &a, bool chipHas,
                                     const std::string &chipWhy);

/// "" when the flash-attention kernel computes the attention (tensor cores
/// on an sm_80+ chip, bf16/f16 operands, head dims that are multiples of 16
/// up to 128, 16-byte aligned rows), else why not.
std::string whyNoFlashAttention(KernelContext &ctx, const AttentionOperands &a);
FailureOr<LaunchConfig> buildFlashAttention(KernelContext &ctx, const AttentionOperands &a);

/// "" when the sm_90a kernel (FlashAttentionWgmmaKernel.cpp: TMA, mbarriers,
/// warp-specialized wgmma) computes the attention, else why not.
std::string whyNoWgmmaAttention(KernelContext &ctx, const AttentionOperands &a);
FailureOr<LaunchConfig> buildWgmmaAttention(KernelContext &ctx, const AttentionOperands &a);

} // namespace mlir::rlx::gpu_kernels::attention

#endif // RLX_LIB_CONVERSION_LIRTOGPU_ATTENTIONKERNELS_H
