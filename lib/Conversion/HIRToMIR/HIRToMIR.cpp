//===- HIRToMIR.cpp - Lower rlx_hir blocks to rlx_mir ---------------------===//
//
// One conversion pattern per HIR op. decoder_layer expands into HIR blocks,
// which the same conversion then lowers. See Passes.td for the policies.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "RLX/Conversion/Passes.h"
#include "RLX/Dialect/HIR/IR/HIROps.h"
#include "RLX/Dialect/MIR/IR/MIRDialect.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::rlx {
#define GEN_PASS_DEF_CONVERTRLXHIRTOMIR
#include "RLX/Conversion/Passes.h.inc"
} // namespace mlir::rlx

using namespace mlir;
using namespace mlir::rlx;
using namespace mlir::rlx::mir;

namespace {

/// Base of the HIR lowerings: carries the fusion policy.
template <typename OpT>
struct HIRLowering : OpConversionPattern<OpT> {
  HIRLowering(MLIRContext *ctx, FusionPolicy policy)
      : OpConversionPattern<OpT>(ctx), policy(policy) {}
  FusionPolicy policy;
  bool direct() const { return policy == FusionPolicy::Direct; }
};

/// y = act(x·Wᵀ + b): fused_matmul (direct) or matmul → add → activation.
struct LinearLowering : HIRLowering<hir::LinearOp> {
  using HIRLowering::HIRLowering;
  LogicalResult matchAndRewrite(hir::LinearOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    MIRBuilder mb(rw, op.getLoc());
    FusedMatmulSpec spec;
    spec.lhs = a.getInput();
    spec.rhs = a.getWeight();
    spec.transposeB = op.getLayout() == WeightLayout::OutIn;
    if (direct()) {
      spec.bias = a.getBias();
      spec.activation = op.getActivation();
      rw.replaceOp(op, mb.fusedMatmul(spec));
      return success();
    }
    Value y = mb.fusedMatmul(spec);
    if (a.getBias())
      y = mb.add(y, a.getBias());
    rw.replaceOp(op, mb.activation(op.getActivation(), y));
    return success();
  }
};

struct RmsNormLowering : HIRLowering<hir::RmsNormOp> {
  using HIRLowering::HIRLowering;
  LogicalResult matchAndRewrite(hir::RmsNormOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<RmsNormOp>(op, a.getInput(), a.getWeight(), op.getEpsAttr());
    return success();
  }
};

struct LayerNormLowering : HIRLowering<hir::LayerNormOp> {
  using HIRLowering::HIRLowering;
  LogicalResult matchAndRewrite(hir::LayerNormOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<LayerNormOp>(op, a.getInput(), a.getWeight(), a.getBias(),
                                       op.getEpsAttr());
    return success();
  }
};

/// (norm, sum): one residual_rms_norm (direct) or add → rms_norm.
struct ResidualRmsNormLowering : HIRLowering<hir::ResidualRmsNormOp> {
  using HIRLowering::HIRLowering;
  LogicalResult matchAndRewrite(hir::ResidualRmsNormOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    if (direct()) {
      rw.replaceOpWithNewOp<ResidualRmsNormOp>(op, a.getInput(), a.getResidual(),
                                               a.getWeight(), op.getEpsAttr());
      return success();
    }
    MIRBuilder mb(rw, op.getLoc());
    Value sum = mb.add(a.getInput(), a.getResidual());
    Value norm = RmsNormOp::create(rw, op.getLoc(), sum, a.getWeight(), op.getEpsAttr());
    rw.replaceOp(op, {norm, sum});
    return success();
  }
};

/// down(act(gate(x)) · up(x)). Direct: one fused_matmul with glu over the
/// gate|up weights concatenated along the output features (packed once by
/// rlx-mir-pack-weights), then the down matmul.
struct SwiGluLowering : HIRLowering<hir::SwiGluOp> {
  using HIRLowering::HIRLowering;
  LogicalResult matchAndRewrite(hir::SwiGluOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    MIRBuilder mb(rw, op.getLoc());
    bool outIn = op.getLayout() == WeightLayout::OutIn;
    FusedMatmulSpec down;
    down.rhs = a.getDownWeight();
    down.transposeB = outIn;
    if (direct()) {
      FusedMatmulSpec gu;
      gu.lhs = a.getInput();
      gu.rhs = mb.concat({a.getGateWeight(), a.getUpWeight()}, outIn ? 0 : 1);
      gu.transposeB = outIn;
      gu.glu = true;
      gu.activation = op.getActivation();
      down.lhs = mb.fusedMatmul(gu);
    } else {
      Value g = mb.matmul(a.getInput(), a.getGateWeight(), false, outIn);
      Value u = mb.matmul(a.getInput(), a.getUpWeight(), false, outIn);
      down.lhs = mb.mul(mb.activation(op.getActivation(), g), u);
    }
    rw.replaceOp(op, mb.fusedMatmul(down));
    return success();
  }
};

struct AttentionLowering : HIRLowering<hir::AttentionOp> {
  using HIRLowering::HIRLowering;
  LogicalResult matchAndRewrite(hir::AttentionOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    MIRBuilder mb(rw, op.getLoc());
    rw.replaceOp(op, rlx::detail::lowerAttention(mb, policy, getAttentionConfig(op), a.getQuery(),
                                            a.getKey(), a.getValue(), a.getMask(),
                                            a.getSinks()));
    return success();
  }
};

struct RopeLowering : HIRLowering<hir::RopeOp> {
  using HIRLowering::HIRLowering;
  LogicalResult matchAndRewrite(hir::RopeOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    MIRBuilder mb(rw, op.getLoc());
    int64_t rot = op.getRotaryDimOrDefault();
    Value cos = a.getCos(), sin = a.getSin();
    if (a.getPositions())
      std::tie(cos, sin) = rlx::detail::buildRopeTables(mb, a.getPositions(), rot,
                                                   op.getThetaOrDefault(), op.getScalingAttr());
    rw.replaceOpWithNewOp<RopeOp>(op, a.getInput(), cos, sin, op.getHeadDimAttr(),
                                  op.getRotaryDimAttr(), op.getStyleAttr());
    return success();
  }
};

/// Per-head RMSNorm: view [..., H·D] as [..., H, D], rms_norm, view back.
struct QkNormLowering : HIRLowering<hir::QkNormOp> {
  using HIRLowering::HIRLowering;
  LogicalResult matchAndRewrite(hir::QkNormOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    MIRBuilder mb(rw, op.getLoc());
    SmallVector<int64_t> p = MIRBuilder::pattern(MIRBuilder::shapeOf(a.getInput()));
    int64_t d = op.getHeadDim();
    SmallVector<int64_t> split(p.begin(), p.end() - 1);
    split.push_back(p.back() < 0 ? -1 : p.back() / d);
    split.push_back(d);
    Value heads = mb.reshape(a.getInput(), split);
    Value n = RmsNormOp::create(rw, op.getLoc(), heads, a.getWeight(), op.getEpsAttr());
    rw.replaceOp(op, mb.reshape(n, p));
    return success();
  }
};

struct EmbeddingLowering : HIRLowering<hir::EmbeddingOp> {
  using HIRLowering::HIRLowering;
  LogicalResult matchAndRewrite(hir::EmbeddingOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<GatherOp>(op, a.getTable(), a.getIds());
    return success();
  }
};

/// act(nvfp4_matmul(x, W) + b): the NVFP4 matmul (f32 accumulation), then
/// bias and activation as MIR ops (which the epilogue patterns may fuse).
struct DequantLinearLowering : HIRLowering<hir::DequantLinearOp> {
  using HIRLowering::HIRLowering;
  LogicalResult matchAndRewrite(hir::DequantLinearOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    MIRBuilder mb(rw, op.getLoc());
    Value y = Nvfp4MatmulOp::create(rw, op.getLoc(), a.getInput(), a.getWeight(), a.getScales(),
                                    a.getGlobalScale(), op.getLayout());
    if (a.getBias())
      y = mb.add(y, a.getBias());
    rw.replaceOp(op, mb.activation(op.getActivation(), y));
    return success();
  }
};

/// A decoder layer becomes the HIR blocks it is made of (lowered in turn).
struct DecoderLayerLowering : HIRLowering<hir::DecoderLayerOp> {
  using HIRLowering::HIRLowering;
  LogicalResult matchAndRewrite(hir::DecoderLayerOp op, OpAdaptor a,
                                ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    FloatAttr eps = op.getEpsAttr();
    int64_t d = op.getHeadDim();
    auto linear = [&](Value x, Value w) {
      return hir::LinearOp::create(rw, loc, x, w, Value(), ActivationKind::None,
                                   WeightLayout::OutIn)
          .getResult();
    };
    auto rope = [&](Value x) {
      return hir::RopeOp::create(rw, loc, x, a.getPositions(), Value(), Value(),
                                 op.getHeadDimAttr(), IntegerAttr(), op.getThetaAttr(),
                                 RopeStyleAttr::get(rw.getContext(), RopeStyle::NeoX),
                                 op.getScalingAttr())
          .getResult();
    };
    Value h = hir::RmsNormOp::create(rw, loc, a.getInput(), a.getInputNorm(), eps);
    Value q = linear(h, a.getQProj()), k = linear(h, a.getKProj()), v = linear(h, a.getVProj());
    if (a.getQNorm()) {
      q = hir::QkNormOp::create(rw, loc, q, a.getQNorm(), d, eps.getValue());
      k = hir::QkNormOp::create(rw, loc, k, a.getKNorm(), d, eps.getValue());
    }
    q = rope(q);
    k = rope(k);
    if (a.getPastKey()) {
      MIRBuilder mb(rw, loc);
      k = mb.concat({a.getPastKey(), k}, 1);
      v = mb.concat({a.getPastValue(), v}, 1);
    }
    Value attn = hir::AttentionOp::create(
        rw, loc, q, k, v, Value(), Value(), op.getNumHeadsAttr(), op.getNumKvHeadsAttr(),
        op.getHeadDimAttr(), op.getMaskAttr(), op.getWindowAttr(), FloatAttr(), FloatAttr(),
        AttnLayoutAttr::get(rw.getContext(), AttnLayout::BSD));
    Value o = linear(attn, a.getOProj());
    auto rn = hir::ResidualRmsNormOp::create(rw, loc, o, a.getInput(), a.getPostNorm(), eps);
    Value mlp = hir::SwiGluOp::create(rw, loc, rn.getOutput(), a.getGateProj(), a.getUpProj(),
                                      a.getDownProj(), op.getActivation(), WeightLayout::OutIn);
    MIRBuilder mb(rw, loc);
    rw.replaceOp(op, {mb.add(mlp, rn.getSum()), k, v});
    return success();
  }
};

/// A model's LoRA layers (rlx_mir.lora_matmul, which the model generator
/// emits beside the HIR ops) as their chain here, so that the base matmul
/// takes part in weight packing and matmul merging like any linear layer and
/// the adapters' `s·B` is computed once at load.
struct LoraMatmulLowering : OpConversionPattern<LoraMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(LoraMatmulOp op, OpAdaptor,
                                ConversionPatternRewriter &rw) const override {
    MIRBuilder mb(rw, op.getLoc(), /*diagnose=*/true);
    auto values = op.decompose(mb);
    if (failed(values) || mb.failed())
      return failure();
    rw.replaceOp(op, *values);
    return success();
  }
};

struct ConvertRLXHIRToMIRPass
    : rlx::impl::ConvertRLXHIRToMIRBase<ConvertRLXHIRToMIRPass> {
  using ConvertRLXHIRToMIRBase::ConvertRLXHIRToMIRBase;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<hir::HIRDialect>();
    target.addIllegalOp<LoraMatmulOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    populateHIRToMIRConversionPatterns(patterns, fusionPolicy);
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::rlx::populateHIRToMIRConversionPatterns(RewritePatternSet &patterns,
                                                   FusionPolicy policy) {
  patterns.add<LinearLowering, RmsNormLowering, LayerNormLowering, ResidualRmsNormLowering,
               SwiGluLowering, AttentionLowering, RopeLowering, QkNormLowering,
               EmbeddingLowering, DequantLinearLowering, DecoderLayerLowering>(
      patterns.getContext(), policy);
  rlx::detail::populateMoeLowerings(patterns);
  rlx::detail::populateAudioLowerings(patterns);
  patterns.add<LoraMatmulLowering>(patterns.getContext());
}
