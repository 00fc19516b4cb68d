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
AttentionShape attentionShape(const AttentionConfig &cfg, Value q, Value k,
                              Value v);

/// Element (batch b, sequence position s, head `head`, dim e) of an
/// operand of heads of `headSize` in `layout` (BSD, BSHD or BHSD).
SmallVector<Value> position(KernelBuilder &kb, AttnLayout layout, Value b,
                            Value s, Value head, Value e, int64_t headSize);

/// The mask operand's element for (b, h, query i, key j): [Sq, Sk],
/// [B, Sq, Sk] or [B, H, Sq, Sk] with size-1 dims broadcast.
Value loadMask(KernelBuilder &kb, Value mask, Value b, Value h, Value i,
               Value j);

/// "" when the flash-attention kernel computes `op` (tensor cores on an
/// sm_80+ chip, bf16/f16 operands, head dims that are multiples of 16 up to
/// 128, 16-byte aligned rows), else why not.
std::string whyNoFlashAttention(KernelContext &ctx, mir::AttentionOp op);
FailureOr<LaunchConfig> buildFlashAttention(KernelContext &ctx,
                                            mir::AttentionOp op);

} // namespace mlir::rlx::gpu_kernels::attention

#endif // RLX_LIB_CONVERSION_LIRTOGPU_ATTENTIONKERNELS_H
