//===- Lowerings.h - Shared pieces of the HIR→MIR lowering ------*- C++ -*-===//
//
// Internal to lib/Conversion/HIRToMIR: the attention and RoPE lowerings that
// several HIR patterns share.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_LIB_CONVERSION_HIRTOMIR_LOWERINGS_H
#define RLX_LIB_CONVERSION_HIRTOMIR_LOWERINGS_H

#include "RLX/Conversion/HIRToMIR/HIRToMIR.h"
#include "RLX/Dialect/Common/IR/ShapeRules.h"
#include "RLX/Dialect/MIR/IR/MIRBuilder.h"

namespace mlir::rlx::detail {

/// Attention over q/k/v (and an optional mask) per `cfg`: one
/// rlx_mir.attention (direct) or the primitive chain (fusable); with `sinks`
/// ([num_heads]) attention_partial + attention_combine on either policy
/// (the chain for f64).
Value lowerAttention(mir::MIRBuilder &mb, FusionPolicy policy, const AttentionConfig &cfg,
                     Value q, Value k, Value v, Value mask, Value sinks = {});

/// RoPE inverse frequencies theta^(-2i/rotaryDim), i < rotaryDim/2, with HF's
/// llama3, linear or yarn scaling applied when `scaling` says so.
SmallVector<float> ropeInverseFrequencies(int64_t rotaryDim, double theta,
                                          RopeScalingAttr scaling);

/// What the cos/sin tables are multiplied by: yarn's attention_factor, else 1.
double ropeAttentionFactor(RopeScalingAttr scaling);

/// cos/sin tables [S, r/2] (or [B, S, r/2]) for integer `positions` [S]
/// (or [B, S]), computed in f32 from the inverse frequencies.
std::pair<Value, Value> buildRopeTables(mir::MIRBuilder &mb, Value positions,
                                        int64_t rotaryDim, double theta,
                                        RopeScalingAttr scaling);

/// moe_router and moe_experts (MoeLowering.cpp).
void populateMoeLowerings(RewritePatternSet &patterns);

/// log_mel_spectrogram (AudioLowering.cpp).
void populateAudioLowerings(RewritePatternSet &patterns);

} // namespace mlir::rlx::detail

#endif // RLX_LIB_CONVERSION_HIRTOMIR_LOWERINGS_H
